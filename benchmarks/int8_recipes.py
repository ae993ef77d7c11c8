"""int8 recipes for the two embedded encoders, measured against their fp32 ONNX exports.

Why: int8 halves the CPU of both models (issue 18: the TUI's last verdict and wiki-vital's first
index are bound by their forward passes), but how the copy is quantised decides what it costs.

    PYTHONPATH=. python benchmarks/int8_recipes.py verifier [--out benchmarks/results/int8_recipes_verifier.json]
    PYTHONPATH=. python benchmarks/int8_recipes.py embedder --db SCIFACT_DB [--smoothquant-only] [--out …_embedder.json]

``verifier``: FEVER-Symmetric dev (708 pairs) and the first 800 VitaminC real dev pairs (pages the
verifier was not trained on), through the embedded verifier with each copy's session swapped in:
argmax agreement with fp32, probability differences, macro-F1 (2-way sets: entail vs contradict, as
``claimscope eval verifier`` scores them), CPU seconds. ``embedder``: SciFact dev claims with
evidence (188) against a database where ``claimscope eval retrieval --dataset scifact`` indexed the
corpus (its stored fp32 vectors are reused): dense document recall@5/@10, exact search, documents
and queries both from a copy (symmetric) or documents int8 and queries fp32 (asymmetric).

Recipes: ``per_tensor_all`` (dynamic int8 over every op, the verifier's first copy),
``per_channel_matmul`` (per-channel weights, MatMul only), ``per_channel_matmul_keep_ffn_out`` (the
same with each layer's FFN output MatMul left in fp32), and the shipped copy ``make install`` built
(models/onnx_build.INT8_RECIPE: SmoothQuant, then per-channel MatMul weights); for the verifier, the
SmoothQuant copy with activations per tensor (shipped to session 46) and per token
(VERIFIER_INT8_RECIPE, session 47), both built here, and each copy's batch dependence (the largest
change of a pair's probabilities between batch sizes 1, 8 and 32); for the embedder, the shipped copy
and the same recipe with activations per token (session 48, measured, not adopted), each with its
batch dependence (the largest change of a vector's component between batch sizes 1, 8 and 32).
``--smoothquant-only`` leaves out the three copies without SmoothQuant.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def make_copies(fp32: Path, out: Path) -> dict[str, Path]:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    ffn_out = [n.name for n in onnx.load(str(fp32)).graph.node
               if n.op_type == "MatMul" and "/output/dense/" in n.name and "attention" not in n.name]
    recipes = {
        "per_tensor_all": {},
        "per_channel_matmul": {"per_channel": True, "op_types_to_quantize": ["MatMul"]},
        "per_channel_matmul_keep_ffn_out": {"per_channel": True, "op_types_to_quantize": ["MatMul"],
                                            "nodes_to_exclude": ffn_out},
    }
    paths = {}
    for name, kw in recipes.items():
        paths[name] = out / f"{name}.onnx"
        quantize_dynamic(str(fp32), str(paths[name]), weight_type=QuantType.QInt8, **kw)
    return paths


def session(path: Path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = 2, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def macro_f1(gold: np.ndarray, pred: np.ndarray) -> float:
    scores = []
    for label in sorted(set(gold.tolist())):
        tp = int(((pred == label) & (gold == label)).sum())
        wrong = int(((pred == label) != (gold == label)).sum())
        scores.append(2 * tp / max(1, 2 * tp + wrong))
    return float(np.mean(scores))


def smoothquant_copies(model_dir: Path, tmp: Path) -> dict[str, Path]:
    """The SmoothQuant copies of the verifier, built here by the steps of models.onnx_build.build
    (the installed copies are left alone): activations per tensor (shipped to session 46) and per
    token (models/onnx_build.VERIFIER_INT8_RECIPE)."""
    import torch

    from models.onnx_build import _load_for_export, _smoothed_int8_copy, _verifier_batches

    tok, _ = _load_for_export(model_dir, "AutoModelForSequenceClassification")
    enc = tok(["an evidence sentence"], ["a claim"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    def export(classifier, target: Path) -> None:
        torch.onnx.export(classifier, tuple(enc[n] for n in names), str(target), input_names=names,
                          output_names=["logits"], dynamic_axes={n: {0: "batch", 1: "seq"} for n in names}
                          | {"logits": {0: "batch"}}, opset_version=17, dynamo=False)

    out = {}
    for name, per_token in (("smoothquant_per_channel_matmul", False), ("smoothquant_per_token", True)):
        (work := tmp / name).mkdir()
        assert _smoothed_int8_copy(model_dir, "AutoModelForSequenceClassification", _verifier_batches, export, work,
                                   work / "model.int8.onnx", per_token=per_token)
        out[name] = work / "model.int8.onnx"
    return out


def batch_dependence(nli, pairs) -> float:
    """The largest probability change of one pair between batch sizes 1, 8 and 32 (0 when a pair's
    probabilities are its own)."""
    runs = [nli.predict(pairs, bs) for bs in (32, 8, 1)]
    return float(max(np.abs(runs[0] - r).max() for r in runs[1:]))


def verifier(tmp: Path, smoothquant_only: bool = False) -> dict:
    from core.evaluate.datasets import load_verifier_dataset
    from models.nli import CONTRADICT, ENTAIL, NEUTRAL, load_nli
    from models.onnx_build import ONNX_DIR, ONNX_FP32_FILE

    nli = load_nli(None, runtime="onnx-fp32")
    assert nli.runtime == "onnx-fp32", "build the verifier's ONNX export first (python -m models.onnx_build)"
    fp32 = Path(nli.ref.path) / ONNX_DIR / ONNX_FP32_FILE
    copies = ({} if smoothquant_only else make_copies(fp32, tmp)) | smoothquant_copies(Path(nli.ref.path), tmp)
    sets = {
        "fever-symmetric": load_verifier_dataset("fever-symmetric", DATA / "fever_symmetric" / "dev.jsonl"),
        "vitaminc-real-dev-800": load_verifier_dataset("vitaminc", DATA / "vitaminc" / "real_dev_half.jsonl",
                                                       split="dev")[:800],
    }
    column = {"entailment": ENTAIL, "contradiction": CONTRADICT, "neutral": NEUTRAL}
    out: dict = {}
    for name, examples in sets.items():
        pairs = [(e.premise, e.hypothesis) for e in examples]
        gold = np.array([column[e.label] for e in examples])
        two_way = len(set(gold.tolist())) == 2

        def score(probs: np.ndarray, gold: np.ndarray = gold, two_way: bool = two_way) -> float:
            pred = np.where(probs[:, ENTAIL] >= probs[:, CONTRADICT], ENTAIL, CONTRADICT) if two_way else probs.argmax(1)
            return macro_f1(gold, pred)

        rows = {}
        for recipe, path in [("fp32", fp32), *copies.items()]:
            nli._session = session(path)
            c0 = cpu_s()
            probs = nli.predict(pairs)
            rows[recipe] = {"cpu_s": cpu_s() - c0, "macro_f1": score(probs), "probs": probs,
                            "batch_dependence": batch_dependence(nli, pairs)}
        base = rows["fp32"]["probs"]
        for row in rows.values():
            probs = row.pop("probs")
            row |= {"cpu_vs_fp32": row["cpu_s"] / rows["fp32"]["cpu_s"],
                    "argmax_agreement": float((probs.argmax(1) == base.argmax(1)).mean()),
                    "max_abs_diff": float(np.abs(probs - base).max()), "mean_abs_diff": float(np.abs(probs - base).mean())}
        out[name] = {"pairs": len(pairs), "recipes": rows}
        print(name, json.dumps(rows, indent=1), flush=True)
    return out


def embedding_batch_dependence(emb, texts: list[str]) -> float:
    """The largest change of one vector's component between batch sizes 1, 8 and 32 (0 when a
    text's vector is its own)."""
    runs = [emb.encode(texts, bs) for bs in (32, 8, 1)]
    return float(max(np.abs(runs[0] - r).max() for r in runs[1:]))


def embedder(tmp: Path, db_path: Path, smoothquant_only: bool = False) -> dict:
    import sqlite3

    from core.ingest.index import passage_embedding_text
    from models.embed import load_embedder
    from models.onnx_build import EMBEDDER_ONNX_DIR, ONNX_FILE, ONNX_FP32_FILE, build_embedder

    emb = load_embedder(runtime="onnx-fp32")
    assert emb.runtime == "onnx-fp32", "build the embedder's ONNX export first (python -m models.onnx_build --embedder)"
    build_embedder(Path(emb.ref.path), tmp / "per_token", per_token=True)
    copies = ({} if smoothquant_only else make_copies(EMBEDDER_ONNX_DIR / ONNX_FP32_FILE, tmp)) | {
        "smoothquant_per_channel_matmul (shipped)": EMBEDDER_ONNX_DIR / ONNX_FILE,
        "smoothquant_per_token": tmp / "per_token" / ONNX_FILE}
    conn = sqlite3.connect(db_path)
    rows = conn.execute("SELECT p.id, d.ext_id, p.title, p.text FROM passages p JOIN documents d ON d.id = p.document_id"
                        " ORDER BY p.id").fetchall()
    doc = [r[1] for r in rows]
    texts = [passage_embedding_text(r[2], r[3]) for r in rows]
    stored = dict(conn.execute("SELECT passage_id, vector FROM embeddings WHERE model = ?", [emb.ref.model_id]))
    claims = [c for c in map(json.loads, (DATA / "scifact" / "claims_dev.jsonl").open()) if c["evidence"]]
    gold = [set(c["evidence"]) for c in claims]

    def recall(docs: np.ndarray, queries: np.ndarray) -> dict[str, float]:
        sims = queries @ docs.T
        hits = {5: [], 10: []}
        for i, row in enumerate(sims):
            ranked = list(dict.fromkeys(doc[j] for j in np.argsort(-row, kind="stable")[:200]))
            for k in hits:
                hits[k].append(len(set(ranked[:k]) & gold[i]) / len(gold[i]))
        return {f"recall@{k}": float(np.mean(v)) for k, v in hits.items()}

    queries_fp32 = emb.encode([c["claim"] for c in claims])
    if len(stored) == len(rows):
        docs_fp32 = np.stack([np.frombuffer(stored[r[0]], dtype=np.float32) for r in rows])
    else:
        docs_fp32 = emb.encode(texts)
    out = {"claims": len(claims), "passages": len(rows), "fp32": recall(docs_fp32, queries_fp32)}
    for recipe, path in copies.items():
        emb._session = session(path)
        c0 = cpu_s()
        docs = emb.encode(texts)
        spent = cpu_s() - c0
        cos = (docs * docs_fp32).sum(1)
        out[recipe] = {"cpu_s_corpus": spent, "cosine_to_fp32_mean": float(cos.mean()), "cosine_to_fp32_min": float(cos.min()),
                       "symmetric": recall(docs, emb.encode([c["claim"] for c in claims])),
                       "documents_int8_queries_fp32": recall(docs, queries_fp32)}
        out[recipe]["batch_dependence"] = embedding_batch_dependence(emb, texts[:300])
        print(recipe, json.dumps(out[recipe]), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=["verifier", "embedder"])
    ap.add_argument("--db", type=Path, help="embedder: a database holding the SciFact corpus (eval retrieval --db)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--smoothquant-only", action="store_true", help="only fp32 and the SmoothQuant copies")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.model == "verifier":
            report = verifier(Path(tmp), args.smoothquant_only)
        else:
            if args.db is None:
                ap.error("embedder needs --db")
            report = embedder(Path(tmp), args.db, args.smoothquant_only)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
