"""A learned document head for abstract-length abstracts: measured against a rule written first (issue 21).

The default mode (``hybrid-sentence``) ranks documents by their first passage in the fused passage
ranking. Session 38's sentence head re-orders the *evidence sentences* of the top 10 passages;
documents keep the fused order, and SciFact dev document recall@5 stays at .935 (target ≥ .95,
R@10 .953, R@20 ≈ .98). This probe asks whether a logistic-regression head over features of the
top 20 *documents* (the members' ranks, the best sentence of the whole document, its title, its
word coverage of the claim, where the sentence head puts its first sentence) moves gold abstracts
from ranks 6–20 into the top 5, gated as the sentence head is (abstract-length abstracts only).
The rule and the result (not adopted: train +.012 out of fold, dev −.004): ``docs/benchmarks.md``,
"A learned document head" (session 39).

    PYTHONPATH=. python benchmarks/doc_head_probe.py dump ../shared/data/scifact/claims_train.jsonl DB DIR/train.json
    PYTHONPATH=. python benchmarks/doc_head_probe.py dump ../shared/data/scifact/claims_dev.jsonl DB DIR/dev.json
    PYTHONPATH=. python benchmarks/doc_head_probe.py fit DIR --json benchmarks/results/doc_head_probe_s39.json

The rule's criterion 3 (sentence recall from the re-ordered pool) was never reached: criterion 1
failed, so that step is not here. Dumps are JSON (no pickle); they hold claim text, so they stay
outside the repository. Nothing here changes what ships.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"

MODE = "hybrid-sentence"
TOP_DOCS = 20
FEATURES = ["inv_rank", "fused", "bm25_inv", "dense_inv", "sent_cos", "sent_gap", "title_cos", "cover",
            "doc_cover", "n_pass", "head_inv"]
C_GRID = [0.01, 0.1, 1, 10]


def open_bench(db: Path):
    from core.evaluate.retrieval import scifact_bench
    from models.embed import load_embedder
    from models.nlp import SpacySentenceSplitter

    return scifact_bench(DATA / "scifact" / "corpus.jsonl", load_embedder, SpacySentenceSplitter,
                         index_kinds=["flat"], db_path=db)


def shipped_sentences(bench, head, fusion, claim: str, ranked):
    """The evidence sentences of ``ranked``'s top 10 passages in the shipped order (fusion, then the
    sentence head where it admits the claim), and whether it admitted the claim."""
    from core.retrieve.sentence_head import rerank
    from core.retrieve.sentence_rank import apply
    from core.text import source_kind
    from store import sources as sq

    cands, rankings, _ = bench.sentence_candidates(claim, ranked)
    if not cands:
        return [], False
    ordered = apply(rankings, cands, fusion)
    docs = list(dict.fromkeys(c.passage.document_id for c in cands))
    layouts = sq.document_layouts(bench.db, docs)  # read once: the gate's and the head's
    admitted = head.admits(source_kind([c.passage for c in cands]), [layouts[d].words for d in docs if d in layouts])
    ordered = rerank(head, claim, cands, rankings, ordered, lambda _ids: layouts)
    return ordered, admitted


def doc_features(bench, claim: str, ranked, members, head_order, doc_passages, docs_by_id) -> tuple[list[str], list[dict]]:
    """The top :data:`TOP_DOCS` documents of ``ranked`` and the rule's features of each."""
    from core.text import content_words
    from store import sources as sq

    first: dict[str, tuple[int, float]] = {}
    n_pass: dict[str, int] = {}
    for pid, s in ranked:
        d = bench.doc_of[pid]
        first.setdefault(d, (len(first) + 1, s))
    for pid, _ in ranked[:TOP_DOCS]:
        d = bench.doc_of[pid]
        n_pass[d] = n_pass.get(d, 0) + 1
    top = list(first)[:TOP_DOCS]
    member_rank = {}
    for name, rk in members.items():
        order = list(dict.fromkeys(bench.doc_of[pid] for pid, _ in rk))
        member_rank[name] = {d: i + 1 for i, d in enumerate(order)}
    head_rank: dict[str, int] = {}
    for c in head_order:
        head_rank.setdefault(c.passage.doc_ext_id, len(head_rank) + 1)
    fused = np.array([first[d][1] for d in top])
    lo, hi = fused.min(), fused.max()
    qv = bench.encode([claim])[0]
    passages = sq.get_passages(bench.db, [p for d in top for p in doc_passages[d]])
    sents = {d: [t for p in doc_passages[d] for t in passages[p].sentence_texts()] or [docs_by_id[d].text]
             for d in top}
    flat = [t for d in top for t in sents[d]]
    sims = bench.stored_sentences(flat) @ qv
    titles = bench.encode([docs_by_id[d].title or docs_by_id[d].text[:200] for d in top]) @ qv
    claim_words = set(content_words(claim))
    out, pos = [], 0
    best = []
    for d in top:
        best.append(float(sims[pos:pos + len(sents[d])].max()))
        pos += len(sents[d])
    for i, d in enumerate(top):
        cover = max((len(claim_words & set(content_words(t))) / max(1, len(claim_words)) for t in sents[d]),
                    default=0.0)
        out.append({
            "inv_rank": 1.0 / first[d][0], "fused": float((fused[i] - lo) / (hi - lo)) if hi > lo else 1.0,
            "bm25_inv": 1.0 / member_rank["bm25"][d] if d in member_rank["bm25"] else 0.0,
            "dense_inv": 1.0 / member_rank["dense"][d] if d in member_rank["dense"] else 0.0,
            "sent_cos": best[i], "sent_gap": best[i] - max(best), "title_cos": float(titles[i]),
            "cover": cover,
            "doc_cover": len(claim_words & set(content_words(docs_by_id[d].text))) / max(1, len(claim_words)),
            "n_pass": float(n_pass.get(d, 0)), "head_inv": 1.0 / head_rank[d] if d in head_rank else 0.0,
        })
    return top, out


def dump(args) -> None:
    from core.evaluate.retrieval_sets import load_retrieval_set
    from core.retrieve.fusion import load_sentence_fusion
    from core.retrieve.sentence_head import load_sentence_head

    data = load_retrieval_set("scifact", args.claims, DATA / "scifact" / "corpus.jsonl")
    docs_by_id = {d.ext_id: d for d in data.documents}
    head, fusion = load_sentence_head(MODE), load_sentence_fusion(MODE)
    rows, t0 = [], time.perf_counter()
    with open_bench(args.db) as bench:
        doc_passages: dict[str, list[int]] = {}
        for pid, d in sorted(bench.doc_of.items()):
            doc_passages.setdefault(d, []).append(pid)
        for c in data.claims:
            ranked, _, _ = bench.passage_ranking(MODE, c.claim, "flat")
            members, _ = bench.members(c.claim, "flat")
            order, admitted = shipped_sentences(bench, head, fusion, c.claim, ranked)
            t1 = time.perf_counter()
            top, feats = doc_features(bench, c.claim, ranked, members, order, doc_passages, docs_by_id)
            rows.append({"id": c.id, "claim": c.claim, "gold": sorted(c.gold_docs), "admitted": admitted,
                         "shipped": bench.docs(ranked), "top": top, "feats": feats,
                         "features_ms": 1000 * (time.perf_counter() - t1)})
    r5 = np.mean([len(set(r["shipped"][:5]) & set(r["gold"])) / len(r["gold"]) for r in rows])
    print(f"{args.claims}: {len(rows)} claims, {sum(r['admitted'] for r in rows)} admitted, shipped doc R@5 "
          f"{r5:.4f}, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    args.out.write_text(json.dumps(rows))


# --- fit ----------------------------------------------------------------------------------------

def load(path: Path) -> list[dict]:
    rows = json.loads(path.read_text())
    for r in rows:
        r["X"] = np.array([[f[k] for k in FEATURES] for f in r["feats"]], dtype=float).reshape(-1, len(FEATURES))
        r["y"] = np.array([d in set(r["gold"]) for d in r["top"]], dtype=float)
    return rows


def order_of(row: dict, scores: np.ndarray | None) -> list[str]:
    """The document ranking: the top 20 by ``scores`` (ties keep the shipped order), then the rest."""
    if scores is None or not row["admitted"]:
        return row["shipped"]
    top = [row["top"][i] for i in np.argsort(-scores, kind="stable")]
    return top + [d for d in row["shipped"] if d not in set(top)]


def metrics(rows: list[dict], scorer) -> tuple[np.ndarray, np.ndarray]:
    from core.evaluate.metrics import ndcg_at_k, recall_at_k

    r5, n10 = [], []
    for r in rows:
        ranking = order_of(r, scorer(r) if scorer else None)
        r5.append(recall_at_k(ranking, set(r["gold"]), 5))
        n10.append(ndcg_at_k(ranking, set(r["gold"]), 10))
    return np.array(r5), np.array(n10)


def fit_lr(rows: list[dict], C: float):
    """Pointwise logistic regression on the admitted claims' top 20; every claim weighs the same."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    used = [r for r in rows if r["admitted"] and len(r["y"])]
    X = np.vstack([r["X"] for r in used])
    y = np.concatenate([r["y"] for r in used])
    w = np.concatenate([np.full(len(r["y"]), 1.0 / len(r["y"])) for r in used])
    scaler = StandardScaler().fit(X)
    model = LogisticRegression(C=C, max_iter=5000).fit(scaler.transform(X), y, sample_weight=w * len(used))
    coef = dict(zip(FEATURES, (model.coef_[0] / scaler.scale_).round(6).tolist(), strict=True))
    return (lambda r: r["X"] @ np.array([coef[k] for k in FEATURES])), coef


def cv(rows: list[dict], C: float, folds: int = 5) -> float:
    vals = []
    for f in range(folds):
        scorer, _ = fit_lr([r for j, r in enumerate(rows) if j % folds != f], C)
        held = [r for j, r in enumerate(rows) if j % folds == f]
        r5, n10 = metrics(held, scorer)
        vals.extend(r5 + 0.01 * n10)
    return float(np.mean(vals))


def fit(args) -> None:
    from benchmarks.sentence_head_probe import paired

    train, dev = load(args.dumps / "train.json"), load(args.dumps / "dev.json")
    grid = {C: cv(train, C) for C in C_GRID}
    C = max(grid, key=lambda c: grid[c])
    scorer, coef = fit_lr(train, C)
    out = {"task": "doc_head_probe", "mode": MODE, "top_docs": TOP_DOCS, "features": FEATURES,
           "admitted": {"train": sum(r["admitted"] for r in train), "dev": sum(r["admitted"] for r in dev)},
           "n": {"train": len(train), "dev": len(dev)}, "cv_objective_by_C": grid, "C": C, "coef_unscaled": coef}
    for name, rows in (("train", train), ("dev", dev)):
        a5, a10 = metrics(rows, None)
        b5, b10 = metrics(rows, scorer)
        # analysis only (not a candidate): documents by their first sentence under the sentence head
        h5, _ = metrics(rows, lambda r: np.array([f["head_inv"] for f in r["feats"]]))
        out[name] = {"recall@5": paired(a5, b5), "ndcg@10": paired(a10, b10),
                     "analysis_sentence_head_order_recall@5": paired(a5, h5)}
    ms = [r["features_ms"] for r in dev if r["admitted"]]
    out["features_ms_p95"] = float(np.percentile(ms, 95)) if ms else 0.0
    text = json.dumps(out, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("dump")
    d.add_argument("claims", type=Path)
    d.add_argument("db", type=Path)
    d.add_argument("out", type=Path)
    f = sub.add_parser("fit")
    f.add_argument("dumps", type=Path, help="folder with train.json and dev.json")
    f.add_argument("--json", type=Path)
    args = ap.parse_args()
    (dump if args.step == "dump" else fit)(args)


if __name__ == "__main__":
    main()
