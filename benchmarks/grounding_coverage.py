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


def features(report: Path) -> tuple[np.ndarray, list[int], dict]:
    d = json.loads(report.read_text())
    rows = d["rows"]
    return np.array([[r["score"], r["lexical"]] for r in rows]), [r["label"] for r in rows], d


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
    f.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "rows":
        n, pos = write_rows(args.claims, args.corpus, args.out)
        print(f"{n} rows ({pos} supported) -> {args.out}")
        return 0

    from sklearn.linear_model import LogisticRegression

    x, y, _ = features(args.train)
    model = LogisticRegression(C=1.0).fit(x, y)
    out = {"fitted_on": f"{args.train.name}: {len(y)} rows, {sum(y)} supported",
           "weights": {"bias": float(model.intercept_[0]), "score": float(model.coef_[0][0]),
                       "lexical": float(model.coef_[0][1])},
           "train_auc": {"score": roc_auc(y, x[:, 0]), "lexical": roc_auc(y, x[:, 1])}, "dev": {}}
    for path in args.dev:
        xd, yd, rep = features(path)
        p = model.predict_proba(xd)[:, 1]
        threshold = rep["systems"]["embedded"]["threshold"]
        out["dev"][rep["dataset"]] = {
            "n": len(yd),
            "shipped": {"bacc": bacc(yd, [int(s > threshold) for s in xd[:, 0]]), "auc": roc_auc(yd, xd[:, 0])},
            "lexical_auc": roc_auc(yd, xd[:, 1]),
            "with_coverage": {"bacc": bacc(yd, [int(q > 0.5) for q in p]), "auc": roc_auc(yd, p)},
        }
    for name in ("shipped", "with_coverage"):
        out[f"mean_bacc_{name}"] = float(np.mean([v[name]["bacc"] for v in out["dev"].values()]))
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
