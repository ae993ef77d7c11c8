"""The rows a verifier's support threshold is fitted on: given-document rows that no grounding
figure scores.

Why: the shipped support threshold (0.60) was fitted on Climate-FEVER's five curated sentences per
claim, and a refit there moved a candidate's threshold the wrong way for claims against whole
documents (docs/verifier_v2.md, "Run 8"). The grounding figures score WiCE's first 100 dev rows and
ExpertQA's first 300; the rows after them are the same registers, never scored. This writes them as
`eval grounding --data` rows (WiCE rows 101-349, ExpertQA rows 301-764 by default), dropping any
row whose claim or document also occurs in the scored rows. Factcheck-GPT's 86 claims are all
scored, so none of its rows is here. Session 18 (docs/verifier_v2.md, "Run 9").

    python benchmarks/grounding_fit_pool.py --out fit_pool.jsonl
    claimscope eval grounding --data fit_pool.jsonl --no-baselines --verifier M --json pool_M.json
    python benchmarks/grounding_paired.py ... --ref-fit pool_REF.json --cand-fit pool_CAND.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.evaluate.grounding import GroundingRow, load_dataset, write_rows

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
# (dataset, its file under the data root, how many leading rows the grounding figures score)
SETS = (("wice", "wice/entailment_retrieval/claim/dev.jsonl", 100),
        ("expertqa", "expertqa/dev.jsonl", 300))


def spare_rows(rows: list[GroundingRow], scored: int) -> list[GroundingRow]:
    """The rows after the first ``scored``, without any whose claim or document is also scored."""
    seen = {r.claim for r in rows[:scored]} | {r.doc for r in rows[:scored]}
    return [r for r in rows[scored:] if r.claim not in seen and r.doc not in seen]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the data root (../shared/data)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    pool = []
    for name, rel, scored in SETS:
        rows = load_dataset(name, args.data / rel)
        spare = spare_rows(rows, scored)
        print(f"{name}: rows {scored + 1}-{len(rows)}, {len(spare)} kept "
              f"({sum(r.label for r in spare)} supported)")
        pool += spare
    print(f"wrote {write_rows(pool, args.out)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
