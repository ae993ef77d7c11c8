"""Two verifiers' `eval grounding` reports on the same rows, each at its own support threshold.

Why: a verifier candidate's grounding AUC can rise while its balanced accuracy at the shipped
support threshold (0.60, fitted on Climate-FEVER for v1) falls (docs/verifier_v2.md, "Run 7"). A
fair comparison refits each model's support threshold the way the shipped one was fitted
(`claimscope eval verdicts --path climate_fever/dev.jsonl --no-grounding --verifier M`,
``systems.fitted.thresholds.support``: never on the grounding rows) and scores each report's
per-claim ``rows`` at that model's own value: supported iff score > threshold, BAcc = the mean over
domains of balanced accuracy (LLM-AggreFact's protocol, as `eval grounding` reports it).

    python benchmarks/grounding_paired.py \\
        --pair wice REF.json CAND.json --pair expertqa REF.json CAND.json ... \\
        --ref-threshold 0.60 --cand-threshold 0.55 [--ref-verdicts CF_REF.json --cand-verdicts CF_CAND.json] \\
        --json out.json

With ``--ref-verdicts`` / ``--cand-verdicts`` (the Climate-FEVER `eval verdicts` reports) the
thresholds are read from them. The paired bootstrap (claims resampled with replacement, the same
draw for both models, 2,000 draws, seed 0) gives a 95 % interval for each set's BAcc difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from core.evaluate.grounding import bacc, roc_auc


def fitted_support(verdicts_report: Path) -> float:
    """The support threshold `eval verdicts` fitted on Climate-FEVER's fit half."""
    report = json.loads(verdicts_report.read_text(encoding="utf-8"))
    return float(report["systems"]["fitted"]["thresholds"]["support"])


def domain_bacc(labels: np.ndarray, preds: np.ndarray, domains: np.ndarray) -> float:
    return float(np.mean([bacc(labels[domains == d].tolist(), preds[domains == d].tolist())
                          for d in sorted(set(domains.tolist()))]))


def compare(ref: dict, cand: dict, t_ref: float, t_cand: float, draws: int = 2000, seed: int = 0) -> dict:
    """BAcc and AUC of both reports at their own thresholds, and the paired-bootstrap interval of
    the BAcc difference (candidate − reference). Rows are matched by id; both reports must hold
    the same claims."""
    a = {r["id"]: r for r in ref["rows"]}
    b = {r["id"]: r for r in cand["rows"]}
    if set(a) != set(b):
        raise SystemExit(f"the two reports hold different rows ({len(a)} vs {len(b)} ids, "
                         f"{len(set(a) ^ set(b))} differ): run both on the same --path and --limit")
    ids = sorted(a)
    y = np.array([a[i]["label"] for i in ids])
    dom = np.array([a[i].get("domain", "") for i in ids])
    sa = np.array([a[i]["score"] for i in ids])
    sb = np.array([b[i]["score"] for i in ids])
    pa, pb = (sa > t_ref).astype(int), (sb > t_cand).astype(int)
    out = {
        "n": len(ids),
        "ref": {"threshold": t_ref, "bacc": domain_bacc(y, pa, dom), "auc": roc_auc(y.tolist(), sa.tolist()),
                "bacc_at_0.60": domain_bacc(y, (sa > 0.60).astype(int), dom)},
        "cand": {"threshold": t_cand, "bacc": domain_bacc(y, pb, dom), "auc": roc_auc(y.tolist(), sb.tolist()),
                 "bacc_at_0.60": domain_bacc(y, (sb > 0.60).astype(int), dom)},
    }
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(draws):
        k = rng.integers(0, len(ids), len(ids))
        if len(set(y[k].tolist())) < 2:
            continue
        diffs.append(domain_bacc(y[k], pb[k], dom[k]) - domain_bacc(y[k], pa[k], dom[k]))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    out["diff"] = {"bacc": out["cand"]["bacc"] - out["ref"]["bacc"], "ci95": [float(lo), float(hi)]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", nargs=3, action="append", required=True, metavar=("NAME", "REF", "CAND"),
                    help="a set's name and the two `eval grounding --json` reports on it")
    ap.add_argument("--ref-threshold", type=float, default=None)
    ap.add_argument("--cand-threshold", type=float, default=None)
    ap.add_argument("--ref-verdicts", type=Path, default=None, help="the reference's Climate-FEVER `eval verdicts` report")
    ap.add_argument("--cand-verdicts", type=Path, default=None, help="the candidate's Climate-FEVER `eval verdicts` report")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    t_ref = fitted_support(args.ref_verdicts) if args.ref_verdicts else args.ref_threshold
    t_cand = fitted_support(args.cand_verdicts) if args.cand_verdicts else args.cand_threshold
    if t_ref is None or t_cand is None:
        ap.error("give each model's support threshold (--ref-/--cand-threshold) or its Climate-FEVER "
                 "verdicts report (--ref-/--cand-verdicts)")
    sets = {}
    for name, ref, cand in args.pair:
        sets[name] = compare(json.loads(Path(ref).read_text(encoding="utf-8")),
                             json.loads(Path(cand).read_text(encoding="utf-8")), t_ref, t_cand)
    mean = {k: float(np.mean([s[k]["bacc"] for s in sets.values()])) for k in ("ref", "cand")}
    result = {"thresholds": {"ref": t_ref, "cand": t_cand}, "sets": sets, "mean_bacc": mean,
              "mean_diff": mean["cand"] - mean["ref"]}
    print(f"thresholds: reference {t_ref:.2f}, candidate {t_cand:.2f}")
    print("| set | n | reference BAcc / AUC | candidate BAcc / AUC | Δ BAcc [95 %] |")
    print("|---|---|---|---|---|")
    for name, s in sets.items():
        lo, hi = s["diff"]["ci95"]
        print(f"| {name} | {s['n']} | {s['ref']['bacc']:.3f} / {s['ref']['auc']:.3f} | "
              f"{s['cand']['bacc']:.3f} / {s['cand']['auc']:.3f} | {s['diff']['bacc']:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    print(f"| mean | | {mean['ref']:.3f} | {mean['cand']:.3f} | {result['mean_diff']:+.3f} |")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
