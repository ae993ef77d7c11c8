"""A learned evidence-sentence relevance head for the default mode: measured, not built (issue 21).

The default mode (``hybrid-sentence``) ranks the sentences of its top 10 passages by a fitted
min-max fusion of three members (dense cosine, BM25 over the pool, passage rank). This probe
asks whether a logistic-regression head over more features of each candidate sentence, with no
new model at run time, ranks rationale sentences better on every dev set.

Step 1, ``dump``: for each claim of one retrieval set, the candidates of ``hybrid-sentence``'s top
10 passages exactly as ``eval retrieval`` builds them, with their features and the shipped
fusion's order (its recall@5 is printed and equals ``eval retrieval``'s ``sentence_recall@5``).
Step 2, ``fit``: the two rules of session 21 (``docs/benchmarks.md``, "A learned
evidence-sentence head"), on the dumps of SciFact train / dev, WiCE train / dev and
Climate-FEVER dev:

- rule 1: fit on SciFact train + WiCE train (each set weighs the same), C by 5-fold CV by claim
  on the train objective (mean rationale-sentence R@5 + .01 R@10), scored on the three dev sets;
- rule 2: as rule 1 with Climate-FEVER dev added to the fit in two folds, its figure out-of-fold;
- analysis: a gradient-boosted head on the same features, and feature-set ablations;
- ``fit --kind`` (session 37): the head only for claims whose candidate passages are of source kind
  ``abstract`` (``core.text.source_kind``; each dump records the claim's kind),
  features and C chosen together by CV on the abstract-kind claims of SciFact train + WiCE train;
- ``fit --short-docs`` (session 38): the same, only for claims whose candidate documents are all
  abstract-length (≤ 500 words; each dump records its longest candidate document), fitted on SciFact
  train alone.

    PYTHONPATH=. python benchmarks/sentence_head_probe.py dump scifact \\
        ../shared/data/scifact/claims_train.jsonl DB_SCIFACT DIR/sf_train.json --corpus ../shared/data/scifact/corpus.jsonl
    (the same for claims_dev.jsonl → sf_dev.json; wice non_supported_tokens/train.jsonl → wice_train.json
     and entailment_retrieval/claim/dev.jsonl → wice_dev.json, each WiCE file in its own DB;
     climate-fever dev.jsonl → cf_dev.json)
    PYTHONPATH=. python benchmarks/sentence_head_probe.py fit DIR --json benchmarks/results/sentence_head_probe.json

The dumps are JSON (no pickle). scikit-learn comes with sentence-transformers.
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

MODE = "hybrid-sentence"
from core.retrieve.sentence_head import FEATURES as _FEATURES  # noqa: E402

FEATURES = list(_FEATURES)
ABLATIONS = {
    "no position, no length": ["dense", "dense_gap", "bm25", "inv_prank", "fused", "cover", "doc_best", "doc_gap"],
    "no position": ["dense", "dense_gap", "bm25", "inv_prank", "fused", "loglen", "cover", "doc_best", "doc_gap"],
    "no length": ["dense", "dense_gap", "bm25", "inv_prank", "fused", "relpos", "first", "last", "cover",
                  "doc_best", "doc_gap"],
    "members + coverage": ["dense", "bm25", "inv_prank", "fused", "cover"],
}
C_GRID = [0.01, 0.1, 1, 10]


def dump(args) -> None:
    """Write one retrieval set's candidates, features and gold sets to ``args.out``."""
    from core.evaluate.metrics import dedupe
    from core.evaluate.retrieval import corpus_bench, scifact_bench, sentence_recall
    from core.evaluate.retrieval_sets import load_retrieval_set
    from core.retrieve.fusion import fuse, load_sentence_fusion
    from core.text import source_kind
    from models.embed import load_embedder
    from models.nlp import SpacySentenceSplitter

    data = load_retrieval_set(args.dataset, args.claims, args.corpus)
    if args.dataset == "scifact":
        ctx = scifact_bench(args.corpus, load_embedder, SpacySentenceSplitter, index_kinds=["flat"], db_path=args.db)
    else:
        ctx = corpus_bench(data.documents, data.fmt, args.claims, load_embedder, SpacySentenceSplitter,
                           index_kinds=["flat"], db_path=args.db, source=f"eval-{args.dataset}")
    params = load_sentence_fusion(MODE)
    words = {d.ext_id: len(d.text.split()) for d in data.documents}
    rows, t0 = [], time.perf_counter()
    with ctx as bench:
        for c in data.claims:
            ranked, _, _ = bench.passage_ranking(MODE, c.claim, "flat")
            cands, members, _ = bench.sentence_candidates(c.claim, ranked)
            row = {"claim": c.claim, "gold": [sorted(map(list, g)) for g in c.gold_sentence_sets],
                   "keys": [], "feats": [], "shipped": [], "kind": "given"}
            if cands:
                shipped = fuse(members, params)
                keys = [bench.sentence_key(x) for x in cands]
                row.update(keys=[list(k) for k in keys], shipped=[i for i, _ in shipped],
                           kind=source_kind({x.passage.id: x.passage.title for x in cands}),
                           max_doc_words=max(words[x.passage.doc_ext_id] for x in cands),
                           feats=candidate_features(c.claim, cands, keys, members, dict(shipped),
                                                    bench.sentence_starts))
            rows.append(row)
    r5 = np.mean([sentence_recall(dedupe([tuple(r["keys"][i]) for i in r["shipped"]]),
                                  tuple(frozenset(map(tuple, g)) for g in r["gold"]), 5) for r in rows])
    print(f"{args.dataset} {args.claims}: {len(rows)} claims, shipped sentence R@5 {r5:.4f}, "
          f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    args.out.write_text(json.dumps(rows))


def candidate_features(claim, cands, keys, members, fused, sentence_starts) -> list[dict]:
    """The features of rule 1, fixed before any fit (``core.retrieve.sentence_head.candidate_features``,
    the function the shipped head runs): a candidate's sentence index is its gold key's, the
    document's sentence count the dataset's."""
    from core.retrieve.sentence_head import candidate_features as features

    return features(claim, [x.text for x in cands], [doc for doc, _ in keys],
                    [(idx, len(sentence_starts.get(doc, [0]))) for doc, idx in keys],
                    [x.passage_rank for x in cands], members, fused)


# --- step 2 -------------------------------------------------------------------------------------

def load_dump(path: Path, features: list[str]) -> list[dict]:
    rows = json.loads(path.read_text())
    for r in rows:
        r["X"] = np.array([[f[k] for k in features] for f in r["feats"]], dtype=float).reshape(-1, len(features))
        gold = {tuple(k) for g in r["gold"] for k in g}
        r["y"] = np.array([tuple(k) in gold for k in r["keys"]], dtype=float)
        r["gsets"] = tuple(frozenset(map(tuple, g)) for g in r["gold"])
    return rows


def recall_of_order(row: dict, order, k: int) -> float:
    """``core.evaluate.retrieval.sentence_recall`` of the candidates in ``order`` (keys deduplicated)."""
    seen, ranked = set(), []
    for i in order:
        key = tuple(row["keys"][i])
        if key not in seen:
            seen.add(key)
            ranked.append(key)
    top = set(ranked[:k])
    return max((len(g & top) / len(g) for g in row["gsets"] if g), default=0.0)


def per_claim(rows: list[dict], scorer, k: int = 5) -> np.ndarray:
    return np.array([recall_of_order(r, np.argsort(-scorer(r), kind="stable"), k) if r["keys"] else 0.0
                     for r in rows])


def shipped_scorer(row: dict) -> np.ndarray:
    s = np.zeros(len(row["keys"]))
    for rank, i in enumerate(row["shipped"]):
        s[i] = -rank
    return s


def fit_head(sets: list[list[dict]], C: float | None, kind: str = "lr", names: list[str] = FEATURES):
    """A head fitted on the candidates of ``sets`` (features ``names``); every set weighs the same."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    used = [[r for r in rows if r["keys"]] for rows in sets]
    X = np.vstack([r["X"] for rows in used for r in rows])
    y = np.concatenate([r["y"] for rows in used for r in rows])
    w = np.concatenate([np.full(sum(len(r["y"]) for r in rows), 1000.0 / sum(len(r["y"]) for r in rows))
                        for rows in used])
    if kind == "lr":
        scaler = StandardScaler().fit(X)
        model = LogisticRegression(C=C, max_iter=2000).fit(scaler.transform(X), y, sample_weight=w)
        coef = dict(zip(names, (model.coef_[0] / scaler.scale_).round(6).tolist(), strict=True))
        return (lambda r: model.decision_function(scaler.transform(r["X"]))), coef
    from sklearn.ensemble import HistGradientBoostingClassifier
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, random_state=0)
    model.fit(X, y, sample_weight=w)
    return (lambda r: model.predict_proba(r["X"])[:, 1]), None


def cv_objective(sets: list[list[dict]], C: float, names: list[str] = FEATURES, folds: int = 5) -> float:
    """Mean over sets of the held-out claims' R@5 + .01 R@10, 5 folds by claim order."""
    per_set: list[list[float]] = [[] for _ in sets]
    for f in range(folds):
        scorer, _ = fit_head([[r for j, r in enumerate(rows) if j % folds != f] for rows in sets], C, names=names)
        for si, rows in enumerate(sets):
            held = [r for j, r in enumerate(rows) if j % folds == f]
            per_set[si].extend(per_claim(held, scorer, 5) + 0.01 * per_claim(held, scorer, 10))
    return float(np.mean([np.mean(p) for p in per_set]))


def choose_c(sets, names: list[str] = FEATURES) -> tuple[float, dict]:
    scores = {C: cv_objective(sets, C, names) for C in C_GRID}
    return max(scores, key=lambda c: scores[c]), scores


def paired(a: np.ndarray, b: np.ndarray, n: int = 10_000, seed: int = 0) -> dict:
    """Mean of b − a over claims with a paired bootstrap 95 % interval."""
    rng = np.random.default_rng(seed)
    d = b - a
    means = d[rng.integers(0, len(d), (n, len(d)))].mean(1)
    return {"shipped": float(a.mean()), "head": float(b.mean()), "delta": float(d.mean()),
            "ci95": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))],
            "claims_up": int((b > a).sum()), "claims_down": int((b < a).sum())}


def rule1(dumps: Path, features: list[str], gbm: bool) -> dict:
    train = [load_dump(dumps / "sf_train.json", features), load_dump(dumps / "wice_train.json", features)]
    C, cv = choose_c(train, features)
    scorer, coef = fit_head(train, C, names=features)
    out = {"features": features, "cv_objective_by_C": cv, "C": C, "coef_unscaled": coef, "dev": {}}
    gscorer = fit_head(train, None, "gbm", features)[0] if gbm else None
    for name in ("sf_dev", "wice_dev", "cf_dev"):
        rows = load_dump(dumps / f"{name}.json", features)
        a = per_claim(rows, shipped_scorer)
        out["dev"][name] = paired(a, per_claim(rows, scorer))
        if gscorer:
            out["dev"][name]["gbm"] = paired(a, per_claim(rows, gscorer))
    return out


def rule2(dumps: Path) -> dict:
    sf, wi = load_dump(dumps / "sf_train.json", FEATURES), load_dump(dumps / "wice_train.json", FEATURES)
    cf = load_dump(dumps / "cf_dev.json", FEATURES)
    halves = [[r for j, r in enumerate(cf) if j % 2 == f] for f in (0, 1)]
    a, b, cs = [], [], []
    for f in (0, 1):
        train = [sf, wi, halves[1 - f]]
        C, _ = choose_c(train)
        scorer, _ = fit_head(train, C)
        cs.append(C)
        a.append(per_claim(halves[f], shipped_scorer))
        b.append(per_claim(halves[f], scorer))
    out = {"cf_dev_out_of_fold": {**paired(np.concatenate(a), np.concatenate(b)), "C_by_fold": cs}}
    C, cv = choose_c([sf, wi, cf])
    scorer, coef = fit_head([sf, wi, cf], C)
    out.update(C=C, cv_objective_by_C=cv, coef_unscaled=coef)
    for name in ("sf_dev", "wice_dev"):
        rows = load_dump(dumps / f"{name}.json", FEATURES)
        out[name] = paired(per_claim(rows, shipped_scorer), per_claim(rows, scorer))
    return out


FEATURE_SETS = {"all 12": FEATURES, **ABLATIONS}


SHORT_DOC_WORDS = 500  # session 38's gate: SciFact abstracts' 99th percentile is 454 words, WiCE pages' 5th 320


def is_abstract(row: dict) -> bool:
    return row.get("kind") == "abstract"


def is_short_abstract(row: dict) -> bool:
    """Session 38's gate, the shipped head's own (``SentenceHead.admits``): kind ``abstract`` and
    every candidate document at most :data:`SHORT_DOC_WORDS` words (a scientific abstract's length)."""
    from core.retrieve.sentence_head import SentenceHead

    return "max_doc_words" in row and SentenceHead({}, SHORT_DOC_WORDS).admits(row["kind"], [row["max_doc_words"]])


def gated_head(dumps: Path, gate, train_names: tuple[str, ...]) -> dict:
    """A head that acts only on the claims ``gate`` admits; features and C chosen together by
    5-fold CV on the admitted claims of ``train_names``; every other dev claim keeps the shipped
    order. Session 37's rule is ``gate = is_abstract`` on SciFact + WiCE train; session 38's is
    ``is_short_abstract`` on SciFact train (docs/benchmarks.md)."""
    def train_for(feats: list[str]) -> list[list[dict]]:
        return [[r for r in load_dump(dumps / f"{n}.json", feats) if gate(r)] for n in train_names]

    names = (*train_names, "sf_dev", "wice_dev", "cf_dev")
    raw = {n: json.loads((dumps / f"{n}.json").read_text()) for n in names}
    kinds = {n: {k: sum(r.get("kind") == k for r in rows) for k in ("abstract", "entity", "given")}
             for n, rows in raw.items()}
    admitted = {n: sum(map(gate, rows)) for n, rows in raw.items()}
    grid = {}
    for name, feats in FEATURE_SETS.items():
        train = train_for(feats)
        for C in C_GRID:
            grid[f"{name} | C {C}"] = (cv_objective(train, C, feats), name, C)
    best = max(grid, key=lambda k: grid[k][0])
    _, fname, C = grid[best]
    feats = FEATURE_SETS[fname]
    scorer, coef = fit_head(train_for(feats), C, names=feats)
    out = {"kinds": kinds, "admitted": admitted, "cv_objective": {k: v[0] for k, v in grid.items()},
           "choice": {"features": fname, "C": C}, "coef_unscaled": coef, "dev": {}}
    for name in ("sf_dev", "wice_dev", "cf_dev"):
        rows = load_dump(dumps / f"{name}.json", feats)
        a = per_claim(rows, shipped_scorer)
        b = np.array([recall_of_order(r, np.argsort(-(scorer(r) if gate(r) else shipped_scorer(r)),
                                                    kind="stable"), 5) if r["keys"] else 0.0 for r in rows])
        out["dev"][name] = paired(a, b)
        t = []
        for r in rows:
            if r["keys"] and gate(r):
                t0 = time.perf_counter()
                scorer(r)
                t.append(time.perf_counter() - t0)
        out["dev"][name]["head_ms_p95"] = float(np.percentile(t, 95) * 1000) if t else 0.0
    return out


def fit(args) -> None:
    if args.kind or args.short_docs:
        gate, train = (is_short_abstract, ("sf_train",)) if args.short_docs else (is_abstract, ("sf_train", "wice_train"))
        task = "sentence_head_probe short-docs" if args.short_docs else "sentence_head_probe kind"
        result = gated_head(args.dumps, gate, train)
        text = json.dumps({"task": task, "mode": MODE, **result}, indent=2)
        if args.write_head:
            args.write_head.write_text(json.dumps({
                "fitted_on": "SciFact train, rationale sentences (benchmarks/sentence_head_probe.py fit --short-docs; "
                             f"features {result['choice']['features']}, C {result['choice']['C']})",
                "modes": {MODE: {"kind": "abstract", "max_doc_words": SHORT_DOC_WORDS,
                                 "weights": result["coef_unscaled"]}}}, indent=2) + "\n")
        if args.json:
            args.json.write_text(text + "\n")
        print(text)
        return
    t0 = time.perf_counter()
    report = {"task": "sentence_head_probe", "mode": MODE, "rule1": rule1(args.dumps, FEATURES, gbm=True),
              "rule2": rule2(args.dumps),
              "ablations_rule1": {name: rule1(args.dumps, feats, gbm=False)["dev"] for name, feats in ABLATIONS.items()}}
    report["wall_s"] = time.perf_counter() - t0
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("dump")
    d.add_argument("dataset", choices=["scifact", "climate-fever", "wice"])
    d.add_argument("claims", type=Path)
    d.add_argument("db", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--corpus", type=Path)
    f = sub.add_parser("fit")
    f.add_argument("dumps", type=Path, help="folder with sf_train/sf_dev/wice_train/wice_dev/cf_dev .json")
    f.add_argument("--json", type=Path)
    f.add_argument("--kind", action="store_true", help="session 37's kind-aware head only")
    f.add_argument("--write-head", type=Path, help="with --short-docs: write the head as core/retrieve/data/sentence_head.json")
    f.add_argument("--short-docs", action="store_true",
                   help="session 38's head for abstract-length documents, fitted on SciFact train only")
    args = ap.parse_args()
    dump(args) if args.step == "dump" else fit(args)


if __name__ == "__main__":
    main()
