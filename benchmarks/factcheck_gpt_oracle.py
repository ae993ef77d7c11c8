"""The ceiling of the Factcheck-GPT verdict measure: a reader that judges each claim's evidence
exactly as Factcheck-GPT's annotators did.

Why: the verdict bench (``claimscope eval factuality --dataset factcheck-gpt``, criterion (5) of
the verifier runs) scores verdicts against the claim's *truth*, while a verifier can only judge
its *evidence*. The annotators also marked each evidence passage's stance towards the claim, so
the best any evidence reader can do is computable: supported iff a passage completely supports
the claim, refuted iff one refutes it, else not enough info, scored with the same binary
agreement (core.score.agreement) over the claims that have evidence (docs/verifier_v2.md,
"Factcheck-GPT's verdicts: the path, the ceiling").

    python benchmarks/factcheck_gpt_oracle.py [--path ../shared/data/factcheck_gpt/dev.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.factuality import load_factuality
from core.score.agreement import agreement

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def stance_verdict(stances: list[str]) -> str:
    """The verdict the annotators' stances give: any complete support, else any refutation, else NEI."""
    if "completely-support" in stances:
        return "supported"
    return "refuted" if any("refute" in s for s in stances) else "not_enough_info"


def stances_by_claim(path: Path) -> dict[str, list[str]]:
    """Each claim's evidence stances (``stance_claim_autoEvid``), keyed by the claim text."""
    out: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            for s in json.loads(line)["sentences"].values():
                stances = s.get("stance_claim_autoEvid") or []
                for i, claim in enumerate(s.get("claims") or []):
                    out[claim.strip()] = list(stances[i]) if i < len(stances) and isinstance(stances[i], list) else []
    return out


def oracle(path: Path) -> dict:
    answers, _ = load_factuality("factcheck-gpt", path)
    stances = stances_by_claim(path)
    pairs = [(c.label, stance_verdict(stances.get(c.text.strip(), []))) for a in answers for c in a.claims]
    a = agreement(pairs, binary=True)
    return {"claims": len(pairs), "accuracy": a.observed, "kappa": a.kappa,
            "pairs": {f"{g} / {p}": n for (g, p), n in sorted(Counter(pairs).items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, default=DATA / "factcheck_gpt" / "dev.jsonl")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    report = oracle(args.path)
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
