"""Given documents: is "supported" better decided by the grounding score than by the learned verdicts?

Why: ``eval grounding`` reads a claim as supported when its grounding score (the largest
P(entailment) among the units that decided) passes the support threshold, LLM-AggreFact's
protocol, and that reading agrees with people better than the verdicts ``check --against`` shows
(Factcheck-GPT BAcc .704 against .653; WiCE and ExpertQA the same way). Candidate V
(:func:`by_score`) makes the score decide "supported" for given documents and keeps the learned
verdict otherwise. That leaves one question the grounding sets
cannot answer, since their labels are two-way: does V cost the refutations? This probe judges
SciFact dev claims against the abstracts they cite, as given documents (the ``check --against``
path), once, and reads four verdict rules from the same judgements:

- ``learned``: the shipped verdicts;
- ``V``: the learned verdicts with "supported" decided by the score (what would ship);
- ``V2``: the rules without their conflict step (supported iff score > support; refuted iff the
  best grounded P(contradiction) of the same units > refute; else not enough info);
- ``rules``: the hand rules as they are.

    PYTHONPATH=. python benchmarks/given_support_probe.py --json benchmarks/results/given_support_probe_scifact_dev_s45.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fit_verdicts import judge_given, scifact_given_items

from core.evaluate.metrics import confusion, per_class_f1
from core.pipeline.given import entailment_score
from core.verify.verifier import VERDICTS, ClaimVerdict, Verifier
from models.nli import CONTRADICT

LABELS = ("supported", "refuted", "not_enough_info")


def three_way_f1(gold: list[str], pred: list[str]) -> float:
    """Macro-F1 over the three gold classes; a ``conflicting`` verdict counts as an error for
    whichever class the claim has (it is no class of SciFact's)."""
    f1 = per_class_f1(gold, pred, VERDICTS)
    return sum(f1[lab] or 0.0 for lab in LABELS) / len(LABELS)


def by_score(verifier: Verifier, verdict: ClaimVerdict) -> str:
    """V: ``supported`` iff the grounding score (``eval grounding``'s number) > the support threshold;
    otherwise the learned verdict, with ``supported`` and ``conflicting`` read as not enough info."""
    if entailment_score(verdict, verifier) > verifier.t.support:
        return "supported"
    return "not_enough_info" if verdict.label in ("supported", "conflicting") else verdict.label


def rules_without_conflict(verifier: Verifier, verdict: ClaimVerdict) -> str:
    """V2: the any-snippet rule on the staged units, contradiction only when nothing supports."""
    if entailment_score(verdict, verifier) > verifier.t.support:
        return "supported"
    grounded = [j for j in verdict.judgements if j.grounded]
    singles = [j for j in grounded if j.unit.kind != "set"]
    pool = singles if verifier._decides(singles) else grounded
    return "refuted" if any(j.probs[CONTRADICT] > verifier.t.refute for j in pool) else "not_enough_info"


def readings(verifier: Verifier, verdict: ClaimVerdict) -> dict[str, str]:
    """The four verdict rules' labels for one claim's judgements (no model call)."""
    rules = verifier.decide_staged(list(verdict.judgements)).label
    return {"learned": verdict.label, "V": by_score(verifier, verdict),
            "V2": rules_without_conflict(verifier, verdict), "rules": rules}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", default=str(Path(__file__).resolve().parents[2] / "shared/data/scifact/claims_dev.jsonl"))
    ap.add_argument("--limit", type=int)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from core.settings import load_settings
    from core.workbench import RunOptions, Workbench

    wb = Workbench(load_settings())
    items = scifact_given_items(Path(args.claims), args.limit)
    gold: list[str] = []
    pred: dict[str, list[str]] = {k: [] for k in ("learned", "V", "V2", "rules")}
    t0 = time.perf_counter()
    for _claim, verdict, _passages, label, given in judge_given(wb.verifier(RunOptions.from_settings(wb.settings)),
                                                               wb.splitter(), items):
        gold.append(label)
        for k, v in readings(given, verdict).items():
            pred[k].append(v)
    report = {
        "claims": args.claims, "n": len(gold), "seconds": round(time.perf_counter() - t0, 1),
        "gold": {lab: gold.count(lab) for lab in LABELS},
        "rules": {k: {"macro_f1": three_way_f1(gold, p), "f1": per_class_f1(gold, p, VERDICTS),
                      "predicted": {lab: p.count(lab) for lab in (*LABELS, "conflicting")},
                      "confusion": confusion(gold, p, VERDICTS)} for k, p in pred.items()},
    }
    for k, r in report["rules"].items():
        f1 = " ".join(f"{lab[:3]} {r['f1'][lab]:.3f}" for lab in LABELS if r["f1"][lab] is not None)
        print(f"{k:8s} macro-F1 {r['macro_f1']:.4f}  {f1}  predicted {r['predicted']}")
    print(f"gold {report['gold']}  ({report['n']} claims, {report['seconds']} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
