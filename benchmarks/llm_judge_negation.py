"""Does the LLM judge tell a claim from its negation? A property of the model, measured here
rather than asserted in a test on one pair (issue 13: one pair's ordering flipped on another
CPU).

Each row of ``benchmarks/data/claim_negations.jsonl`` is an evidence sentence, a claim it
states and the claim negated. Reports, over all rows, how often the claim gets the higher
P(entail) and the negation the higher P(contradict), and the mean margins.

    python benchmarks/llm_judge_negation.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.machine import machine_manifest
from models.llm import load_llm
from models.llm_judge import LLMJudge
from models.nli import CONTRADICT, ENTAIL

DATA = Path(__file__).resolve().parent / "data" / "claim_negations.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llm", default="embedded")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    llm = load_llm(args.llm)
    judge = LLMJudge(llm)
    pos = judge.predict([(r["evidence"], r["claim"]) for r in rows])
    neg = judge.predict([(r["evidence"], r["negation"]) for r in rows])
    d_ent = pos[:, ENTAIL] - neg[:, ENTAIL]
    d_con = neg[:, CONTRADICT] - pos[:, CONTRADICT]
    report = {
        "benchmark": "llm_judge_negation", "data": str(DATA.relative_to(DATA.parents[2])), "n": len(rows),
        "entail_claim_above_negation": int((d_ent > 0).sum()),
        "contradict_negation_above_claim": int((d_con > 0).sum()),
        "mean_entail_margin": round(float(d_ent.mean()), 4),
        "mean_contradict_margin": round(float(d_con.mean()), 4),
        "mean_probs_claim": [round(float(x), 4) for x in pos.mean(0)],
        "mean_probs_negation": [round(float(x), 4) for x in neg.mean(0)],
        "model": llm.manifest(), "machine": machine_manifest(),
    }
    print(f"{report['entail_claim_above_negation']}/{len(rows)} claims above their negation in P(entail) "
          f"(mean margin {report['mean_entail_margin']:+.4f}); {report['contradict_negation_above_claim']}/{len(rows)} "
          f"negations above in P(contradict) (mean {report['mean_contradict_margin']:+.4f})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
