"""Factcheck-GPT claim agreement read through the path a user's ``check --against`` takes.

Why: ``claimscope eval factuality --dataset factcheck-gpt`` judges each claim against its own
evidence passages with the verifier as a knowledge-source run uses it: the passages held in
memory untitled, the few units that share the most of the claim's words judged, an early stop.
A user who checks the same claim against the same passages with ``check --against`` (or a RAG
log's per-line ``documents``) gets :func:`core.pipeline.given.given_verifier`'s judging instead:
the passages stored and chunked, every unit judged. Issue 16's agreement target is read on the
first path; this reads the second on the same claims, so the two can be set side by side.

    PYTHONPATH=. python benchmarks/factuality_given_path.py --path ../shared/data/factcheck_gpt/dev.jsonl \\
        --json benchmarks/results/factuality_given_path_factcheck_gpt_dev_s45.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fit_verdicts import judge_given

from core.evaluate.factuality import load_factuality
from core.score.agreement import agreement


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--path", required=True)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from core.settings import load_settings
    from core.workbench import RunOptions, Workbench

    wb = Workbench(load_settings())
    answers, _ = load_factuality("factcheck-gpt", args.path)
    claims = [c for a in answers for c in a.claims]
    with_evidence = [(c.text, list(c.evidence), c.label) for c in claims if c.evidence]
    t0 = time.perf_counter()
    judged = iter([v.label for _, v, _, _, _ in judge_given(
        wb.verifier(RunOptions.from_settings(wb.settings)), wb.splitter(), with_evidence)])
    # a claim with no evidence passage has nothing to be judged against: not enough info, as eval factuality reads it
    pairs = [(c.label, next(judged) if c.evidence else "not_enough_info") for c in claims]
    binary = agreement(pairs, binary=True)
    report = {"path": args.path, "claims": len(claims), "with_evidence": len(with_evidence),
              "seconds": round(time.perf_counter() - t0, 1),
              "accuracy": binary.observed, "cohen_kappa": binary.kappa, "confusion": binary.confusion,
              "verdicts": {v: sum(m == v for _, m in pairs) for v in ("supported", "refuted", "not_enough_info",
                                                                      "conflicting")}}
    print(json.dumps({k: v for k, v in report.items() if k != "confusion"}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
