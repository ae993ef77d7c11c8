"""Does the shipped verifier contradict a claim *and* its negation from the same premise?

Why: the demo's last miss ("Marie Curie was Polish-born." refuted by her own article's sentence
on the 1903 Nobel Prize, P(contradiction) .82) and the issue's product cases (Becquerel, Josephus)
are contradictions read into sentences about the claim's subject that do not state the fact. A
premise that really contradicts a claim cannot also contradict its negation, so a test-time check
"discount a contradiction the negated claim also receives" would catch such readings, if the model
kept the two apart on true contradictions. This probe measures that before any code is built,
and a second idea beside it: resolving the premise's pronoun to its document's subject ("She
shared …" → "Marie Curie shared …"), or prefixing the title, before judging.

Cases: ``tests/fixtures/verifier_product_cases.jsonl`` (18 real wiki-vital passages, labelled)
plus the demo's deciding and stating sentences. Negation is FactCC's (``models.hard_negatives.negate``:
"not" after the first auxiliary; claims it cannot negate are reported without).

    PYTHONPATH=. python benchmarks/verifier_negation_probe.py --json benchmarks/results/verifier_negation_probe.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.hard_negatives import negate  # noqa: E402
from models.nli import CONTRADICT, ENTAIL, load_nli  # noqa: E402

CASES = ROOT / "tests" / "fixtures" / "verifier_product_cases.jsonl"
PRIZE = ('She shared the 1903 Nobel Prize in Physics with her husband, Pierre Curie, "for their joint researches on the '
         'radioactivity phenomena discovered by Professor Henri Becquerel".')
STATES = ("Maria Salomea Skłodowska Curie, better known as Marie Curie was a Polish and naturalised-French physicist "
          "and chemist.")
EIFFEL = "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France."
# The demo's claim against its own article's sentences (gold: the prize sentence is neutral).
DEMO = [
    ("demo_prize_sentence", "neutral", "Marie Curie was Polish-born.", PRIZE),
    ("demo_stating_sentence", "entailment", "Marie Curie was Polish-born.", STATES),
]
# The pronoun idea: the same premise bare, with "She" resolved to the title, and title-prefixed.
PRONOUN = {
    "bare": PRIZE,
    "resolved": "Marie Curie" + PRIZE[3:],
    "titled": "Marie Curie: " + PRIZE,
}
PRONOUN_CLAIMS = ("Marie Curie was Polish-born.", "Marie Curie was a Polish-born physicist.", "Marie Curie was born in Warsaw.")


def _pe(p) -> dict:
    return {"entail": round(float(p[ENTAIL]), 3), "contradict": round(float(p[CONTRADICT]), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    nli = load_nli()
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [(c["id"], c["label"], c["claim"], c["evidence"]) for c in cases] + DEMO
    out = []
    for cid, label, claim, evidence in rows:
        neg = negate(claim)
        probs = nli.predict([(evidence, claim)] + ([(evidence, neg)] if neg else []))
        row = {"id": cid, "gold": label, "claim": claim, "negated": neg, "claim_probs": _pe(probs[0]),
               "negated_probs": _pe(probs[1]) if neg else None}
        out.append(row)
        neg_c = f"{probs[1][CONTRADICT]:.2f}" if neg else "  - "
        print(f"{cid:28s} gold {label:13s} C(claim) {probs[0][CONTRADICT]:.2f}  C(negated) {neg_c}  E(claim) {probs[0][ENTAIL]:.2f}")
    pron = []
    for claim in PRONOUN_CLAIMS:
        for how, premise in PRONOUN.items():
            p = nli.predict([(premise, claim)])[0]
            pron.append({"claim": claim, "premise": how, **_pe(p)})
            print(f"pronoun {how:9s} C {p[CONTRADICT]:.2f}  E {p[ENTAIL]:.2f}  {claim}")
    off = nli.predict([(EIFFEL, "Marie Curie was Polish-born.")])[0]
    print(f"off-subject premise (Eiffel Tower) C {off[CONTRADICT]:.2f}")
    # The check's question: among contradictions read at > .65, does the negated claim separate
    # true ones (gold contradiction) from false ones (gold neutral)?
    strong = [r for r in out if r["negated"] and r["claim_probs"]["contradict"] > 0.65]
    summary = {
        "strong_contradictions_with_negation": len(strong),
        "negation_also_contradicted_gold_contradiction": sum(
            r["negated_probs"]["contradict"] > 0.65 for r in strong if r["gold"] == "contradiction"),
        "gold_contradiction": sum(r["gold"] == "contradiction" for r in strong),
        "negation_also_contradicted_gold_neutral": sum(
            r["negated_probs"]["contradict"] > 0.65 for r in strong if r["gold"] == "neutral"),
        "gold_neutral": sum(r["gold"] == "neutral" for r in strong),
    }
    print(json.dumps(summary))
    if args.json:
        report = {"task": "verifier_negation_probe", "model": "embedded", "runtime": getattr(nli, "runtime", None),
                  "rows": out, "pronoun": pron, "off_subject_contradict": round(float(off[CONTRADICT]), 3), "summary": summary}
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
