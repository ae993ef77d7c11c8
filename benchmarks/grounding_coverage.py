"""Would word coverage help the verifier decide grounding? A pre-registered ablation.

On WiCE the lexical-overlap baseline of ``eval grounding`` ranks claims better than the
verifier (AUC .730 against .623): a supported WiCE claim's words are on its page. This script
tests the obvious combination without fitting it on the rows it is judged on:

    P(supported) = sigmoid(a + b * score + c * lexical)

``score`` is the shipped grounding score (the largest P(entailment) that decided, min over
the claim's sentences) and ``lexical`` the largest share of the claim's content words in one
passage of the document (``baseline:lexical``); both are in every ``eval grounding --json``
report's ``rows``. The weights are fitted (logistic regression, L2, C = 1) on SciFact TRAIN
claims against their cited abstracts (1 iff an abstract SUPPORTs the claim), then the rule
"supported iff P > .5" is scored on the dev reports given.

Steps::

    python benchmarks/grounding_coverage.py rows --out /tmp/scifact_train_rows.jsonl
    claimscope eval grounding --data /tmp/scifact_train_rows.jsonl --no-baselines --json train.json
    claimscope eval grounding --dataset wice ... --json wice.json   # and the other dev sets
    python benchmarks/grounding_coverage.py fit --train train.json --dev wice.json --dev ... \
        --json benchmarks/results/grounding_coverage_ablation.json

The rows file holds SciFact text, so it goes to a temporary path, never into the repository.

Session 41 asks the same of the cosine baseline (``--features score,cosine`` and
``score,cosine,lexical``), fitted on the grounding fit pool (``benchmarks/grounding_fit_pool.py``:
WiCE and ExpertQA dev rows no figure scores) with each domain weighing the same
(``--balance-domains``); the reports then need ``eval grounding`` with its baselines (the cosine
is in ``rows`` only when the cosine baseline ran)::

    python benchmarks/grounding_coverage.py fit --train pool.json --features score,cosine --balance-domains \
        --dev wice.json --dev expertqa.json --dev factcheck_gpt.json --json OUT.json

Session 42 gates the combination by the document's length (``--gate-words N --docs ROWS``, ROWS being
``eval grounding --convert`` / ``grounding_fit_pool.py`` rows that give each id its document): it is
fitted on the train rows whose document has at least N words and decides only those; shorter
documents keep the shipped rule. Why: every coverage-style signal so far helped WiCE's long pages
and lost on the short evidence sets, whose cut does not carry over.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.grounding import bacc, roc_auc

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"


def write_rows(claims: Path, corpus: Path, out: Path) -> tuple[int, int]:
    """One row per (train claim, cited abstract): the abstract (title + sentences) as the
    document, label 1 iff that abstract SUPPORTs the claim (CONTRADICT and no evidence → 0)."""
    docs = {d["doc_id"]: d for d in map(json.loads, corpus.read_text().splitlines())}
    n = pos = 0
    with out.open("w") as f:
        for c in map(json.loads, claims.read_text().splitlines()):
            for did in c["cited_doc_ids"]:
                d = docs.get(did)
                if d is None:
                    continue
                label = int(any(e["label"] == "SUPPORT" for e in c["evidence"].get(str(did), [])))
                f.write(json.dumps({"id": f"{c['id']}-{did}", "doc": "\n".join([d["title"], *d["abstract"]]),
                                    "claim": c["claim"], "label": label, "domain": "scifact-train"}) + "\n")
                n, pos = n + 1, pos + label
    return n, pos


def features(report: Path, names: tuple[str, ...] = ("score", "lexical")) -> tuple[np.ndarray, list[int], dict]:
    """The report's rows as a (rows × ``names``) matrix, their labels, and the report."""
    d = json.loads(report.read_text())
    rows = d["rows"]
    missing = [n for n in names if n not in rows[0]]
    if missing:
        raise SystemExit(f"{report}: rows have no {', '.join(missing)} (run eval grounding with its baselines)")
    return np.array([[r[n] for n in names] for r in rows]), [r["label"] for r in rows], d


def doc_words(paths: list[Path]) -> dict[str, int]:
    """Each row id's document length in words, from converted rows files (they hold the text)."""
    out: dict[str, int] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["id"]] = len(r["doc"].split())
    return out


def gated(report: dict, words: dict[str, int] | None, gate: int | None) -> np.ndarray:
    """Which rows the combination decides: all without a gate, else those whose document has
    at least ``gate`` words."""
    rows = report["rows"]
    if gate is None:
        return np.ones(len(rows), dtype=bool)
    missing = [r["id"] for r in rows if r["id"] not in words]
    if missing:
        raise SystemExit(f"--docs give no document for {len(missing)} rows (first: {missing[0]})")
    return np.array([words[r["id"]] >= gate for r in rows])


def domain_weights(report: dict) -> np.ndarray:
    """Row weights under which every domain of the report weighs the same in total."""
    domains = [r["domain"] for r in report["rows"]]
    counts = {d: domains.count(d) for d in set(domains)}
    return np.array([len(domains) / (len(counts) * counts[d]) for d in domains])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rows", help="write the SciFact train rows (a temporary file)")
    r.add_argument("--claims", type=Path, default=DATA / "claims_train.jsonl")
    r.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    r.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit", help="fit on the train report, score the dev reports")
    f.add_argument("--train", type=Path, required=True)
    f.add_argument("--dev", type=Path, action="append", required=True)
    f.add_argument("--features", default="score,lexical", help="row fields beside each other (score first)")
    f.add_argument("--balance-domains", action="store_true", help="each domain of --train weighs the same")
    f.add_argument("--gate-words", type=int, default=None,
                   help="fit on, and decide, only rows whose document has at least this many words")
    f.add_argument("--docs", type=Path, action="append", default=[],
                   help="converted rows files giving each id its document (with --gate-words)")
    f.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "rows":
        n, pos = write_rows(args.claims, args.corpus, args.out)
        print(f"{n} rows ({pos} supported) -> {args.out}")
        return 0

    from grounding_paired import paired_bacc
    from sklearn.linear_model import LogisticRegression

    names = tuple(args.features.split(","))
    if names[0] != "score":
        raise SystemExit("--features must start with score")
    if (args.gate_words is None) != (not args.docs):
        raise SystemExit("--gate-words and --docs go together")
    words = doc_words(args.docs) if args.docs else None
    x, y, train = features(args.train, names)
    keep = gated(train, words, args.gate_words)
    train = {**train, "rows": [r for r, k in zip(train["rows"], keep, strict=True) if k]}
    x, y = x[keep], [v for v, k in zip(y, keep, strict=True) if k]
    weights = domain_weights(train) if args.balance_domains else None
    model = LogisticRegression(C=1.0).fit(x, y, sample_weight=weights)
    out = {"fitted_on": f"{args.train.name}: {len(y)} rows, {sum(y)} supported"
                        + (f", documents of >= {args.gate_words} words" if args.gate_words is not None else "")
                        + (", each domain weighing the same" if weights is not None else ""),
           "gate_words": args.gate_words,
           "features": list(names),
           "weights": {"bias": float(model.intercept_[0]), **{n: float(w) for n, w in zip(names, model.coef_[0], strict=True)}},
           "train_auc": {n: roc_auc(y, x[:, i]) for i, n in enumerate(names)}, "dev": {}}
    for path in args.dev:
        xd, yd, rep = features(path, names)
        p = model.predict_proba(xd)[:, 1]
        threshold = rep["systems"]["embedded"]["threshold"]
        shipped = (xd[:, 0] > threshold).astype(int)
        g = gated(rep, words, args.gate_words)
        combined = np.where(g, (p > 0.5).astype(int), shipped)
        p = np.where(g, p, xd[:, 0])  # ungated rows rank by the shipped score (another scale: see gated_auc)
        ya = np.array(yd)
        out["dev"][rep["dataset"]] = {
            "n": len(yd), "gated": int(g.sum()),
            "gated_auc": ({"shipped": roc_auc(ya[g].tolist(), xd[g, 0]), "combined": roc_auc(ya[g].tolist(), p[g])}
                          if args.gate_words is not None and 0 < ya[g].sum() < g.sum() else None),
            "shipped": {"bacc": bacc(yd, shipped.tolist()), "auc": roc_auc(yd, xd[:, 0])},
            **{f"{n}_auc": roc_auc(yd, xd[:, i]) for i, n in enumerate(names) if i},
            "with_coverage": {"bacc": bacc(yd, combined.tolist()), "auc": roc_auc(yd, p),
                              "paired_vs_shipped": paired_bacc(np.array(yd), shipped, combined)},
        }
    for name in ("shipped", "with_coverage"):
        out[f"mean_bacc_{name}"] = float(np.mean([v[name]["bacc"] for v in out["dev"].values()]))
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
