"""Write the trained decomposer's LoRA adapter as ONE GGUF file for llama.cpp.

Usage (from the repository root, after ``models/train_decomposer.py``)::

    .venv/bin/python -m models.export_decomposer --work runs/decomposer \
        --out models/decomposer/atomic-lora.gguf [--outtype q8_0] [--venv runs/convert-venv]

The converter is llama.cpp's own ``convert_lora_to_gguf.py``, taken from the source
distribution of the installed llama-cpp-python (same version, so the GGUF it writes is one
the installed runtime reads): ``pip download --no-deps --no-binary :all:`` into
``runs/llama-cpp-sdist`` (once; ``--sdist`` names a tarball instead), unpacked there. Its
``gguf-py`` is put first on ``PYTHONPATH`` so the writer matches the converter. It needs
torch, transformers, safetensors and numpy: by default the current interpreter (the project's
venv has them); ``--venv DIR`` creates a separate venv with the converter's own requirements
instead (needs the network once).

The base it reads is ``<work>/base``: the config and tokenizer of the dequantised embedded
GGUF, written by the training script (the converter needs only the config, not weights).
Afterwards the file is loaded over the embedded base through ``models.atomic.load_atomic_llm``
and must produce at least one fact for a test sentence.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def sdist(cache: Path, given: str | None) -> Path:
    """The unpacked llama.cpp tree of the installed llama-cpp-python's source distribution."""
    version = importlib.metadata.version("llama_cpp_python")
    root = cache / f"llama_cpp_python-{version}"
    conv = root / "vendor" / "llama.cpp" / "convert_lora_to_gguf.py"
    if conv.exists() and (conv.parent / "conversion").is_dir():
        return conv.parent
    cache.mkdir(parents=True, exist_ok=True)
    tar = Path(given) if given else cache / f"llama_cpp_python-{version}.tar.gz"
    if not tar.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        f"llama-cpp-python=={version}", "-d", str(cache)], check=True)
    with tarfile.open(tar) as tf:
        members = [m for m in tf.getmembers() if "/vendor/llama.cpp/" in m.name and (
            any(f"/vendor/llama.cpp/{d}/" in m.name for d in ("gguf-py", "conversion", "requirements"))
            or m.name.endswith(("convert_lora_to_gguf.py", "convert_hf_to_gguf.py")))]
        tf.extractall(cache, members=members, filter="data")
    return conv.parent


def interpreter(venv_dir: str | None, llama_dir: Path) -> str:
    if not venv_dir:
        return sys.executable
    d = Path(venv_dir)
    py = d / "bin" / "python"
    if not py.exists():
        venv.create(d, with_pip=True)
        subprocess.run([str(py), "-m", "pip", "install", "--extra-index-url", "https://download.pytorch.org/whl/cpu",
                        "-r", str(llama_dir / "requirements" / "requirements-convert_lora_to_gguf.txt")], check=True)
    return str(py)


def ensure_base(base: Path) -> None:
    """``base`` holds the HF config and tokenizer of the embedded GGUF (the training script
    writes them; rebuilt here from the GGUF when missing)."""
    cfg_file = base / "config.json"
    if cfg_file.exists():
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        if not cfg.get("architectures") or "quantization_config" in cfg:
            cfg["architectures"] = cfg.get("architectures") or ["LlamaForCausalLM"]  # a GGUF config names none
            cfg.pop("quantization_config", None)  # the trained model's marks it "gguf"; the converter refuses it
            cfg_file.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
        return
    from transformers import AutoConfig, AutoTokenizer

    from models.train_decomposer import base_gguf

    gguf = base_gguf()
    base.mkdir(parents=True, exist_ok=True)
    AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(base))
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(base))
    ensure_base(base)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--work", default="runs/decomposer", help="the training script's --work (adapter/, base/)")
    ap.add_argument("--adapter", default=None, help="PEFT adapter folder (default: <work>/adapter)")
    ap.add_argument("--out", default="models/decomposer/atomic-lora.gguf")
    ap.add_argument("--outtype", default="q8_0", choices=["f32", "f16", "bf16", "q8_0"])
    ap.add_argument("--cache", default="runs/llama-cpp-sdist")
    ap.add_argument("--sdist", default=None, help="a llama-cpp-python source tarball to use")
    ap.add_argument("--venv", default=None, help="run the converter in its own venv at this path")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args(argv)
    work = Path(args.work)
    adapter = Path(args.adapter) if args.adapter else work / "adapter"
    ensure_base(work / "base")
    llama_dir = sdist(Path(args.cache), args.sdist)
    py = interpreter(args.venv, llama_dir)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(llama_dir / "gguf-py"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([py, str(llama_dir / "convert_lora_to_gguf.py"), "--base", str(work / "base"),
                    "--outfile", str(out), "--outtype", args.outtype, str(adapter)], check=True, env=env)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
    if not args.no_check:
        from models.atomic import load_atomic_llm, messages, parse_answer

        llm = load_atomic_llm(out, n_threads=2)
        facts = parse_answer(llm.generate(messages(
            "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida.", ""), max_tokens=120))
        print("check:", facts)
        if not facts:
            print("the exported adapter wrote no facts", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
