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

Writes ``MODEL_DIR/onnx/model.fp32.onnx``, ``MODEL_DIR/onnx/model.int8.onnx`` and
``MODEL_DIR/onnx/source.json``.
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


def weights_sha256(model_dir: Path) -> str:
    h = hashlib.sha256()
    with (model_dir / "model.safetensors").open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build(model_dir: Path) -> Path:
    """Export the safetensors model to ONNX (opset 17, dynamic batch and length), keep that fp32
    graph, quantise a copy's weights to int8 (dynamic quantisation: activations stay float);
    both beside the model. Returns the int8 file."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from models.registry import check_safe_weights

    check_safe_weights(model_dir)
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), local_files_only=True, use_safetensors=True, dtype=torch.float32
    ).eval()
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
        quantize_dynamic(str(exported), str(target), weight_type=QuantType.QInt8)
        shutil.copyfile(exported, out_dir / ONNX_FP32_FILE)
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "quantisation": "dynamic int8 (QInt8 weights)",
        "opset": 17, "inputs": names, "files": {"fp32": ONNX_FP32_FILE, "int8": ONNX_FILE},
    }, indent=2) + "\n")
    return target


def main() -> None:
    from models.nli import EMBEDDED_NLI_DIR

    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else EMBEDDED_NLI_DIR
    print(build(model_dir))


if __name__ == "__main__":
    main()
