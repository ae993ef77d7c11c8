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

With ``--rows`` (a verdict layer's Factcheck-GPT judgements, ``benchmarks/verdict_candidates.py
collect --bench factcheck-gpt``), ``--model`` (a verdict file) and ``--thresholds S,R,C`` (the
thresholds the rows were judged with), it also scores those verdicts against the annotators'
evidence reading beside the truth: how often a verdict says what the evidence says.

    python benchmarks/factcheck_gpt_oracle.py --rows VL/fc.jsonl --model core/verify/data/verdict_model.json \\
        --thresholds 0.6,0.65,0.65
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


def stance_agreement(rows: list[dict], preds: list[str], stances: dict[str, list[str]]) -> dict:
    """Binary agreement (supported against the rest) of ``preds`` with the evidence stances and,
    beside it, with the truth (each row's ``label``), over the same claims."""
    reading = [stance_verdict(stances.get(r["claim"].strip(), [])) for r in rows]
    ev = agreement(list(zip(reading, preds, strict=True)), binary=True)
    truth = agreement([(r["label"], p) for r, p in zip(rows, preds, strict=True)], binary=True)
    return {"claims": len(rows), "evidence": {"accuracy": ev.observed, "kappa": ev.kappa},
            "truth": {"accuracy": truth.observed, "kappa": truth.kappa}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, default=DATA / "factcheck_gpt" / "dev.jsonl")
    ap.add_argument("--rows", help="a verdict layer's Factcheck-GPT rows (verdict_candidates.py collect)")
    ap.add_argument("--model", help="with --rows: the verdict file deciding them")
    ap.add_argument("--thresholds", help="with --rows: SUPPORT,REFUTE,CONFLICT the rows were judged with (default: the shipped ones)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    report = oracle(args.path)
    if args.rows:
        from benchmarks.verdict_candidates import predict_rows, read_rows, thresholds_of
        from core.verify.verdict_model import load_verdict_model

        rows = read_rows([args.rows]).get("factcheck-gpt")
        if not rows:
            raise SystemExit(f"{args.rows} holds no factcheck-gpt rows")
        preds = predict_rows(rows, load_verdict_model(args.model), thresholds_of(args.thresholds))
        report["verdicts"] = {"rows": args.rows, "model": args.model,
                              **stance_agreement(rows, preds, stances_by_claim(args.path))}
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
