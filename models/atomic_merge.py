"""The atomic decomposer's adapter merged into its base, built at install time (issue 17: ≤ 1 CPU-s a sentence).

Why: llama.cpp applies the shipped LoRA (``models/decomposer/atomic-lora.gguf``) as extra
products in every adapted layer, and the embedded base is Q4_1, for which this llama.cpp has
no tiled matrix kernel (ggml-cpu/llamafile/sgemm.cpp takes F32, BF16, F16, Q8_0, Q4_0, Q5_0,
IQ4_NL), so a 32-token
prompt block cost 4.4 ms a token, nearly half a decoded token. Merged and stored as Q8_0, the
same prompts cost 2.3 ms a token and a decoded token 6.5 instead of 9.1 ms (one thread, idle
machine; docs/benchmarks.md, issue 17 "Speed").

What is built: ``W' = W + (alpha / r) · B · A`` for every adapted tensor (LoRA, Hu et al. 2021
§4.1; the same update llama.cpp applies at run time, ``scale = alpha / rank``), ``W`` the
base tensor dequantised, the result quantised to Q8_0; every other tensor and every metadata
key copied from the base as it is. The merged file is another model than base + adapter at
run time (one rounding to Q8_0 instead of a Q4_1 base plus an f16/Q8_0 correction), so its
held-out F1 was measured again before it became the default (docs/benchmarks.md).

Deterministic on any CPU: every step is an elementwise IEEE operation in numpy in a fixed
order — gguf's numpy (de)quantisers, and ``B · A`` summed as ``r`` outer products in float64
(each product of an f16 and a Q8_0 value is exact in float64), one rounding to float32 per
weight — never a BLAS product, whose summation order depends on the CPU's kernels. The same
base and adapter therefore give the same file, byte for byte (its sha256 is recorded).

Where: ``models/decomposer/merged/`` (gitignored; 145 MB, never committed), written by
``make install`` (``python -m models.atomic_merge``) with ``source.json`` beside it: the sha256
of the base, the adapter and the merged file. :func:`merged_ref` hands it to the runtime only
while all three still match, so a new adapter or another base silently falls back to base +
adapter at run time (the shipped path before), never to a stale merge.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from models.atomic import ADAPTER_DIR, ADAPTER_FILE
from models.llm import EMBEDDED_LLM_ID, LLMRef, resolve_llm
from models.registry import ModelError, weights_sha256

MERGED_DIR = ADAPTER_DIR / "merged"
MERGE_QUANT = "Q8_0"
MERGED_FILE = f"atomic-merged-{MERGE_QUANT}.gguf"
SOURCE_FILE = "source.json"
RECIPE = "W + alpha/r * sum_k outer(B[:, k], A[k]) in float64, gguf numpy quantisers, Q8_0; other tensors copied"


def merge(base: Path, adapter: Path, out: Path, quant: str = MERGE_QUANT) -> None:
    """Write ``base`` with ``adapter`` merged into it to ``out`` (see the module docstring)."""
    import gguf
    import numpy as np
    from gguf.quants import dequantize, quantize

    qt = getattr(gguf.GGMLQuantizationType, quant)
    b, a = gguf.GGUFReader(str(base)), gguf.GGUFReader(str(adapter))
    if a.fields.get("adapter.type") is None or a.fields["adapter.type"].contents() != "lora":
        raise ValueError(f"{adapter} is not a LoRA adapter GGUF")
    alpha = float(a.fields["adapter.lora.alpha"].contents())
    lora = {t.name: t for t in a.tensors}
    w = gguf.GGUFWriter(str(out), arch=b.fields["general.architecture"].contents())
    for f in b.fields.values():
        if f.name in ("general.architecture", "general.file_type") or f.name.startswith("GGUF."):
            continue
        vt = f.types[0]
        w.add_key_value(f.name, f.contents(), vt, sub_type=f.types[-1] if vt == gguf.GGUFValueType.ARRAY else None)
    w.add_file_type(getattr(gguf.LlamaFileType, f"MOSTLY_{quant}"))
    datas = []
    used = 0
    for t in b.tensors:
        la, lb = lora.get(t.name + ".lora_a"), lora.get(t.name + ".lora_b")
        if la is None or lb is None:
            d, tt = t.data, t.tensor_type
        else:
            used += 2
            A = dequantize(la.data, la.tensor_type).astype(np.float64)  # (r, in)
            B = dequantize(lb.data, lb.tensor_type).astype(np.float64)  # (out, r)
            delta = np.zeros((B.shape[0], A.shape[1]), dtype=np.float64)
            for k in range(A.shape[0]):  # fixed order, elementwise: the same sums on every CPU
                delta += np.multiply.outer(B[:, k], A[k])
            W = dequantize(t.data, t.tensor_type).astype(np.float64) + (alpha / A.shape[0]) * delta
            d, tt = quantize(W.astype(np.float32), qt), qt
        w.add_tensor_info(t.name, d.shape, d.dtype, d.nbytes, tt)
        datas.append(d)
    if used != len(lora):
        raise ValueError(f"{adapter}: {len(lora) - used} adapter tensors match no tensor of {base}")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for d in datas:
        w.write_tensor_data(d)
    w.close()


def build(out_dir: Path = MERGED_DIR, adapter: Path = ADAPTER_FILE, base: Path | None = None) -> dict:
    """Merge the adapter into the installed base in ``out_dir``; returns the ``source.json`` record.
    Written to a temporary name and renamed, so an interrupted build leaves no file the
    runtime would take."""
    import gguf
    import numpy as np

    base = base or resolve_llm("embedded").path
    out_dir.mkdir(parents=True, exist_ok=True)
    out, tmp = out_dir / MERGED_FILE, out_dir / (MERGED_FILE + ".tmp")
    (out_dir / SOURCE_FILE).unlink(missing_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    merge(base, adapter, tmp)
    os.replace(tmp, out)
    record = {
        "base": str(base), "base_sha256": weights_sha256(base), "adapter": str(adapter),
        "adapter_sha256": weights_sha256(adapter), "merged": MERGED_FILE, "merged_sha256": weights_sha256(out),
        "merged_bytes": out.stat().st_size, "quantisation": MERGE_QUANT, "recipe": RECIPE,
        "gguf": gguf.__version__ if hasattr(gguf, "__version__") else _version("gguf"), "numpy": np.__version__,
        "build_wall_s": round(time.perf_counter() - t0, 2), "build_cpu_s": round(time.process_time() - c0, 2),
    }
    (out_dir / SOURCE_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def merged_ref(adapter: Path = ADAPTER_FILE, out_dir: Path | None = None) -> LLMRef | None:
    """The merged model as an LLMRef, or None when it is missing or stale: its ``source.json``
    must record the sha256 of this very adapter, of the installed base, and of the merged file
    itself (hashing all three costs ~0.1 CPU-s, once per process). ``out_dir``: MERGED_DIR."""
    out_dir = MERGED_DIR if out_dir is None else out_dir
    try:
        record = json.loads((out_dir / SOURCE_FILE).read_text(encoding="utf-8"))
        base = resolve_llm("embedded").path
    except (OSError, ValueError, ModelError):  # a missing base is load_atomic_llm's to report
        return None
    path = out_dir / str(record.get("merged", MERGED_FILE))
    if not path.is_file() or not adapter.is_file():
        return None
    if (record.get("adapter_sha256") != weights_sha256(adapter) or record.get("base_sha256") != weights_sha256(base)
            or record.get("merged_sha256") != weights_sha256(path)):
        return None
    return LLMRef("llm", f"{EMBEDDED_LLM_ID} + atomic LoRA merged", path, embedded=True,
                  quantisation=record.get("quantisation"), merged_lora=adapter, merged_base=base)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out-dir", type=Path, default=MERGED_DIR)
    ap.add_argument("--adapter", type=Path, default=ADAPTER_FILE)
    ap.add_argument("--force", action="store_true", help="rebuild even when the recorded hashes match")
    args = ap.parse_args(argv)
    if not args.force and merged_ref(args.adapter, args.out_dir) is not None:
        os.utime(args.out_dir / MERGED_FILE)  # newer than its make prerequisites again
        print(f"{args.out_dir / MERGED_FILE} is up to date")
        return 0
    try:
        import gguf  # noqa: F401
    except ImportError:
        print("models.atomic_merge needs the gguf package (`pip install gguf`, the `train` extra); "
              "without it the atomic decomposer applies its adapter at run time", file=sys.stderr)
        return 1
    record = build(args.out_dir, args.adapter)
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
