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
        [--ref-fit POOL_REF.json --cand-fit POOL_CAND.json [--bag 300]] \\
        --json out.json

With ``--ref-verdicts`` / ``--cand-verdicts`` (the Climate-FEVER `eval verdicts` reports) the
thresholds are read from them. With ``--ref-fit`` / ``--cand-fit`` they are fitted on given
documents instead (session 18: the Climate-FEVER fit transferred badly to given documents): on
each model's `eval grounding --data POOL` report of rows that no compared set scores (a row id in
both is refused), the cut between neighbouring scores with the best mean over domains of
balanced accuracy. The paired bootstrap (claims resampled with replacement, the same
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


def fitted_on_rows(report: dict) -> float:
    """The support threshold that maximises the mean over domains of balanced accuracy on a
    grounding report's rows (supported iff score > cut; cuts are midpoints between neighbouring
    distinct scores). Tied best cuts give their median, so the choice does not lean to either end
    of a plateau."""
    y = np.array([r["label"] for r in report["rows"]])
    s = np.array([r["score"] for r in report["rows"]])
    dom = np.array([r.get("domain", "") for r in report["rows"]])
    u = np.unique(s)
    cuts = np.concatenate([[u[0] - 1e-9], (u[:-1] + u[1:]) / 2, [u[-1] + 1e-9]])
    scores = np.array([domain_bacc(y, (s > c).astype(int), dom) for c in cuts])
    return float(np.median(cuts[scores == scores.max()]))


def bagged_fit(report: dict, draws: int, seed: int = 0) -> float:
    """The median of :func:`fitted_on_rows` over ``draws`` bootstrap resamples of the fitting rows
    (seed 0). Why: the cut is the argmax of a flat objective, and resampling the fit pool's 712
    rows moves it by .08-.12 (s.d.; docs/verifier_v2.md, "How stable is the fit-pool support
    threshold?"), about as much as two seeds of one recipe differ. The median of the resampled
    cuts is the bagged estimate, steadier from one model to the next."""
    rows = report["rows"]
    rng = np.random.default_rng(seed)
    cuts = [fitted_on_rows({"rows": [rows[i] for i in rng.integers(0, len(rows), len(rows))]}) for _ in range(draws)]
    return float(np.median(cuts))


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
    out["diff"] = paired_bacc(y, pa, pb, dom, draws, seed)
    return out


def paired_bacc(y: np.ndarray, pa: np.ndarray, pb: np.ndarray, dom: np.ndarray | None = None, draws: int = 2000,
                seed: int = 0) -> dict:
    """The BAcc difference of two predictions of the same rows (``pb`` − ``pa``, mean over
    ``dom``'s domains) and its 95 % paired-bootstrap interval: rows resampled with replacement, the
    same draw for both, draws holding one label only skipped (no interval at all: the difference
    itself)."""
    dom = np.zeros(len(y), dtype=int) if dom is None else dom
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(draws):
        k = rng.integers(0, len(y), len(y))
        if len(set(y[k].tolist())) < 2:
            continue
        diffs.append(domain_bacc(y[k], pb[k], dom[k]) - domain_bacc(y[k], pa[k], dom[k]))
    delta = domain_bacc(y, pb, dom) - domain_bacc(y, pa, dom)
    lo, hi = np.percentile(diffs, [2.5, 97.5]) if diffs else (delta, delta)
    return {"bacc": delta, "ci95": [float(lo), float(hi)]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", nargs=3, action="append", required=True, metavar=("NAME", "REF", "CAND"),
                    help="a set's name and the two `eval grounding --json` reports on it")
    ap.add_argument("--ref-threshold", type=float, default=None)
    ap.add_argument("--cand-threshold", type=float, default=None)
    ap.add_argument("--ref-verdicts", type=Path, default=None, help="the reference's Climate-FEVER `eval verdicts` report")
    ap.add_argument("--cand-verdicts", type=Path, default=None, help="the candidate's Climate-FEVER `eval verdicts` report")
    ap.add_argument("--ref-fit", type=Path, default=None,
                    help="the reference's `eval grounding` report on rows kept for fitting the threshold")
    ap.add_argument("--cand-fit", type=Path, default=None,
                    help="the candidate's `eval grounding` report on the same fitting rows")
    ap.add_argument("--bag", type=int, default=0, metavar="N",
                    help="with --ref-/--cand-fit: the median cut over N bootstrap resamples of the fitting rows "
                         "(0: the cut fitted on the rows as they are)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    reports = {name: (json.loads(Path(ref).read_text(encoding="utf-8")), json.loads(Path(cand).read_text(encoding="utf-8")))
               for name, ref, cand in args.pair}
    fits = {k: json.loads(p.read_text(encoding="utf-8")) for k, p in (("ref", args.ref_fit), ("cand", args.cand_fit)) if p}
    scored = {r["id"] for pair in reports.values() for report in pair for r in report["rows"]}
    for k, fit in fits.items():
        if shared := scored & {r["id"] for r in fit["rows"]}:
            ap.error(f"--{k}-fit holds {len(shared)} rows that a compared set scores (e.g. {min(shared)}): "
                     "fit the threshold on other rows")
    t, source = {}, {}
    for k, threshold, verdicts in (("ref", args.ref_threshold, args.ref_verdicts),
                                   ("cand", args.cand_threshold, args.cand_verdicts)):
        if k in fits and args.bag:
            t[k] = bagged_fit(fits[k], args.bag)
            source[k] = f"median of {args.bag} bootstrap fits on {fits[k].get('path', 'the --fit rows')}"
        elif k in fits:
            t[k], source[k] = fitted_on_rows(fits[k]), f"fitted on {fits[k].get('path', 'the --fit rows')}"
        elif verdicts:
            t[k], source[k] = fitted_support(verdicts), f"Climate-FEVER fit in {verdicts}"
        else:
            t[k], source[k] = threshold, "given"
    t_ref, t_cand = t["ref"], t["cand"]
    if t_ref is None or t_cand is None:
        ap.error("give each model's support threshold (--ref-/--cand-threshold), its Climate-FEVER "
                 "verdicts report (--ref-/--cand-verdicts) or its report on fitting rows (--ref-/--cand-fit)")
    sets = {name: compare(ref, cand, t_ref, t_cand) for name, (ref, cand) in reports.items()}
    mean = {k: float(np.mean([s[k]["bacc"] for s in sets.values()])) for k in ("ref", "cand")}
    result = {"thresholds": {"ref": t_ref, "cand": t_cand}, "threshold_source": source, "sets": sets, "mean_bacc": mean,
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
