"""Does a refutation carry a competing value of the claim's type? A probe on cached training rows.

Why: a user's check of a short Einstein bio against wiki-vital ends with "born in Ulm", "born in
1879", "died in Princeton" and "died in 1955" all refuted (support −.81 to −.90) by his own lead
sentence, "Albert Einstein was a German-born theoretical physicist …", which states none of them;
the demo's "Marie Curie was Polish-born." is the same case. True refutations in the product cases
carry a competing value of the claim's type ("Berlin" against "Paris, France"; 1935 against 1921).
A verdict feature "the claim has a value (date, number, place, nationality, person, organisation:
spaCy's entities, the subject left out) and the best contradicting unit has none of its types"
would tell the two apart, if training claims showed it. This measures that, on the rows
``benchmarks/fit_verdicts.py --cache`` writes (train splits only: Climate-FEVER's fit half,
VitaminC, FEVER claims over wiki-vital), before any feature is built.

    python benchmarks/verdict_slot_probe.py CFVC.jsonl FEVER.jsonl --json benchmarks/results/verdict_slot_probe.json

Rule, written first (session 29): go on to a feature only if "slot missing" and "slot present"
each hold >= 20 strongly contradicted claims (best grounded P(contradiction) > .65, the shipped
refute threshold) and the share that people call refuted is at least .15 lower when the slot is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.verify.base import Thresholds  # noqa: E402

# spaCy entity labels grouped into the kinds of value a claim turns on.
GROUP = {"DATE": "date", "TIME": "date", "CARDINAL": "number", "QUANTITY": "number", "PERCENT": "number",
         "MONEY": "number", "ORDINAL": "number", "GPE": "place", "LOC": "place", "FAC": "place", "NORP": "nationality",
         "PERSON": "person", "ORG": "organisation"}
KEYS = ("slot missing", "slot present", "no value in claim")


def value_kinds(nlp, text: str, subject: set[str]) -> set[str]:
    """The kinds of value ``text`` holds, the subject's own name left out; any digit counts as a number."""
    kinds = set()
    for ent in nlp(text).ents:
        words = {w.lower().strip(".,'’s") for w in ent.text.split()}
        if ent.label_ in GROUP and not (subject and words and words <= subject | {"the"}):
            kinds.add(GROUP[ent.label_])
    if re.search(r"\d", text):
        kinds.add("number")
    return kinds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="+", type=Path, help="fit_verdicts.py --cache files")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    from models.nlp import SpacyPipeline

    nlp = SpacyPipeline()
    refute = Thresholds().refute
    tab: Counter = Counter()
    for path in args.rows:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            units = [j for j in row["judgements"] if j["kind"] in ("sentence", "passage") and j["grounded"]]
            best = max(units, key=lambda j: j["probs"][2], default=None)
            if best is None or best["probs"][2] <= refute:
                continue
            subject = set(row.get("terms") or [])
            claim_kinds = value_kinds(nlp, row["claim"], subject)
            if not claim_kinds:
                key = "no value in claim"
            else:
                key = "slot present" if claim_kinds & value_kinds(nlp, best["text"], subject) else "slot missing"
            tab[(row["dataset"], key, row["label"] == "refuted")] += 1
    table = {}
    for ds in [*sorted({k[0] for k in tab}), "all"]:
        for key in KEYS:
            ref = sum(v for k, v in tab.items() if k[1] == key and k[2] and ds in ("all", k[0]))
            n = sum(v for k, v in tab.items() if k[1] == key and ds in ("all", k[0]))
            if n:
                table.setdefault(ds, {})[key] = {"n": n, "gold_refuted": ref / n}
                print(f"{ds:24s} {key:18s} n={n:4d}  people say refuted {ref / n:.2f}")
    a = table.get("all", {})
    miss, pres = a.get("slot missing", {"n": 0, "gold_refuted": 0}), a.get("slot present", {"n": 0, "gold_refuted": 0})
    go = miss["n"] >= 20 and pres["n"] >= 20 and pres["gold_refuted"] - miss["gold_refuted"] >= 0.15
    print(f"rule: {'go on to a feature' if go else 'stop: build nothing'}")
    if args.json:
        report = {"task": "verdict_slot_probe", "refute_threshold": refute, "rows": [str(p.name) for p in args.rows],
                  "table": table, "go": go}
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
