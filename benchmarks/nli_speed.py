"""NLI inference speed and agreement: torch fp32 vs ONNX Runtime (fp32 and dynamic int8).

Typical pairs are built from FEVER-Symmetric dev (claim ≈ 10–20 words, evidence ≈ 20–60
words); a second set pads evidence to ~60 words, the speed target's shape ("claim ~20
words, evidence ~60 words"). Reports pairs/s (median of 3 passes, batch 32, 2 threads)
and, for the ONNX variants, accuracy on FEVER-Symmetric dev and agreement with torch.

    python benchmarks/nli_speed.py [MODEL_DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from core.evaluate.datasets import load_verifier_dataset
from models.nli import CONTRADICT, ENTAIL, load_nli

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT.parent / "shared" / "data" / "fever_symmetric" / "dev.jsonl"


def timed(fn, pairs, repeats=3) -> float:
    fn(pairs[:64])  # warm-up
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(pairs)
        runs.append(len(pairs) / (time.perf_counter() - t0))
    return statistics.median(runs)


class OnnxNLI:
    def __init__(self, path: Path, tokenizer, columns, max_length=256):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = int(os.environ.get("CLAIMSCOPE_THREADS", "2"))
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.tok, self.columns, self.max_length = tokenizer, columns, max_length
        self.inputs = {i.name for i in self.sess.get_inputs()}

    def predict(self, pairs, batch_size=32):
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        order = np.argsort([len(p) + len(h) for p, h in pairs], kind="stable")
        for s in range(0, len(pairs), batch_size):
            idx = order[s : s + batch_size]
            enc = self.tok([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], truncation="only_first",
                           max_length=self.max_length, padding=True, return_tensors="np")
            feed = {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}
            logits = self.sess.run(None, feed)[0]
            e = np.exp(logits - logits.max(1, keepdims=True))
            probs = e / e.sum(1, keepdims=True)
            for col, target in enumerate(self.columns):
                out[idx, target] += probs[:, col]
        return out


def export(nli, folder: Path) -> tuple[Path, Path]:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = folder / "nli.onnx"
    enc = nli.tokenizer(["an evidence sentence"], ["a claim"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
    torch.onnx.export(
        nli.model, tuple(enc[n] for n in names), str(fp32), input_names=names, output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"logits": {0: "batch"}},
        opset_version=17, dynamo=False,
    )
    int8 = folder / "nli.int8.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return fp32, int8


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="embedded")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    nli = load_nli(args.model)
    examples = load_verifier_dataset("fever-symmetric", FEVER)
    pairs = [(e.premise, e.hypothesis) for e in examples]
    gold = np.array([0 if e.label == "entailment" else 2 for e in examples])
    # evidence padded to ~60 words by repeating it: the speed target's pair shape
    long_pairs = [(" ".join(" ".join([p] * 4).split()[:60]), h) for p, h in pairs]

    def acc(probs):
        pred = np.where(probs[:, ENTAIL] >= probs[:, CONTRADICT], 0, 2)
        return float((pred == gold).mean())

    report: dict = {"model": nli.ref.manifest(), "n": len(pairs), "systems": {}}
    torch_probs = nli.predict(pairs)
    report["systems"]["torch-fp32"] = {
        "pairs_per_s": timed(nli.predict, pairs), "pairs_per_s_60w": timed(nli.predict, long_pairs),
        "accuracy": acc(torch_probs),
    }
    with tempfile.TemporaryDirectory() as tmp:
        fp32, int8 = export(nli, Path(tmp))
        for name, path in (("onnx-fp32", fp32), ("onnx-int8", int8)):
            m = OnnxNLI(path, nli.tokenizer, nli.columns)
            probs = m.predict(pairs)
            report["systems"][name] = {
                "pairs_per_s": timed(m.predict, pairs), "pairs_per_s_60w": timed(m.predict, long_pairs),
                "accuracy": acc(probs), "agreement_with_torch": float((probs.argmax(1) == torch_probs.argmax(1)).mean()),
                "max_abs_prob_diff": float(np.abs(probs - torch_probs).max()), "size_mb": path.stat().st_size / 2**20,
            }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
