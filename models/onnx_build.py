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


# The embedded embedder's ONNX Runtime copy (fp32, mean pooling and L2 normalisation inside the
# graph): in this repository, git-ignored, because the weights live in another package's folder.
EMBEDDER_ONNX_DIR = Path(__file__).resolve().parent / "embedder" / ONNX_DIR


def build_embedder(model_dir: Path, out_dir: Path = EMBEDDER_ONNX_DIR) -> Path:
    """Export a Transformer → mean pooling → Normalize embedder (models/embed.py's
    MeanPoolingEmbedder) to one fp32 ONNX graph that returns the normalised vectors. Why fp32
    only: its vectors equal torch's to 1.5e-7 (so stored vectors and FAISS indexes stay valid)
    while embedding wiki-vital passages in ~0.64 of torch's time on 2 cores. Also an int8 copy
    (dynamic, per-channel, MatMuls only: about half the fp32 copy's CPU time, vectors at cosine
    ≥ .99 of fp32's), served only on request under its own model id, since its vectors differ
    (docs/benchmarks.md, issue 18 "Indexing"). Records the weights' sha256 (models/embed.py serves the copy only while
    it matches) and returns the file."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel, AutoTokenizer

    from models.registry import check_safe_weights

    check_safe_weights(model_dir)
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(
        str(model_dir), local_files_only=True, use_safetensors=True, dtype=torch.float32
    ).eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(names, inputs, strict=True))
            tokens = self.inner(**kwargs).last_hidden_state
            mask = kwargs["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    enc = tok(["a passage", "another, longer passage of text"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / ONNX_FP32_FILE
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "model.onnx"
        torch.onnx.export(
            Pooled(model), tuple(enc[n] for n in names), str(exported), input_names=names,
            output_names=["embedding"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"embedding": {0: "batch"}},
            opset_version=17, dynamo=False,
        )
        shutil.copyfile(exported, target)
        # opt-in int8 copy (CLAIMSCOPE_EMBED_RUNTIME=onnx-int8, its own model id): per-channel
        # weights, MatMuls only — per-tensor over every op moved vectors to cosine .92 of fp32's
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(exported), str(out_dir / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    (out_dir / SOURCE_FILE).write_text(json.dumps({
        "safetensors_sha256": weights_sha256(model_dir), "weights": str(model_dir / "model.safetensors"),
        "opset": 17, "inputs": names, "output": "L2-normalised mean pooling",
        "files": {"fp32": ONNX_FP32_FILE, "int8": ONNX_FILE},
        "quantisation": "dynamic int8, per-channel weights, MatMul only",
    }, indent=2) + "\n")
    return target


def main() -> None:
    """``python -m models.onnx_build [MODEL_DIR]``: the verifier's copies; ``python -m
    models.onnx_build embedder``: the embedded embedder's fp32 copy."""
    from models.nli import EMBEDDED_NLI_DIR

    if sys.argv[1:] == ["embedder"]:
        from models.registry import resolve_embedder

        ref = resolve_embedder(None)
        assert ref.path is not None
        print(build_embedder(Path(ref.path)))
        return
    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else EMBEDDED_NLI_DIR
    print(build(model_dir))


if __name__ == "__main__":
    main()
