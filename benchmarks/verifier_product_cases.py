"""The verifier on the product's own failure cases (real wiki-vital passages).

The cases in ``tests/fixtures/verifier_product_cases.jsonl`` come from the demo answer and
from the ways the first verifier failed there: a passage about someone else that mentions
the claim's subject (Becquerel / Chien-Shiung Wu for Marie Curie), a passage about another
thing of the same kind (Sapporo for Tokyo), and a passage about the claim's own subject
that does not state the fact (Einstein's death, Newton's birthplace). Those must come out
neutral, never contradiction; the demo's true claims against their subject's passage must
come out entailment, and the Eiffel Tower in Berlin contradiction.

Each model is run the way the product runs it (``predict_long``: evidence windows, strongest
window) at the given window size.

    python benchmarks/verifier_product_cases.py [--models embedded,PATH] [--window 96] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from models.nli import load_nli

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "verifier_product_cases.jsonl"
LABELS = ("entailment", "neutral", "contradiction")


def load_cases(path: Path = CASES) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run(spec: str, window: int | None, cases: list[dict]) -> dict:
    nli = load_nli(spec, window_tokens=window)
    preds = nli.predict_long([(c["evidence"], c["claim"]) for c in cases])
    rows = []
    for c, p in zip(cases, preds, strict=True):
        label = LABELS[int(p.probs.argmax())]
        ok = label == c["label"]
        rows.append({"id": c["id"], "gold": c["label"], "pred": label, "ok": ok,
                     "probs": [round(float(x), 3) for x in p.probs]})
    neutral = [r for r in rows if r["gold"] == "neutral"]
    return {
        "model": spec, "window_tokens": window, "n": len(rows),
        "correct": sum(r["ok"] for r in rows),
        "neutral_cases_called_contradiction": sum(r["pred"] == "contradiction" for r in neutral),
        "neutral_cases_called_entailment": sum(r["pred"] == "entailment" for r in neutral),
        "rows": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="embedded")
    ap.add_argument("--window", type=int, default=96, help="evidence tokens per window (0: whole max length)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    cases = load_cases()
    results = []
    for spec in args.models.split(","):
        res = run(spec.strip(), args.window or None, cases)
        results.append(res)
        print(f"{spec} (window {args.window}): {res['correct']}/{res['n']} correct; neutral cases called "
              f"contradiction {res['neutral_cases_called_contradiction']}, entailment {res['neutral_cases_called_entailment']}")
        for r in res["rows"]:
            mark = "  " if r["ok"] else "XX"
            print(f"  {mark} {r['id']:28s} gold {r['gold']:13s} pred {r['pred']:13s} E/N/C {r['probs']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"task": "verifier_product_cases", "cases": str(CASES.relative_to(ROOT)),
                                         "results": results}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
