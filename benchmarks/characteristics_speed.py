"""Evidence characteristics (seed 001 §4.1): seconds per claim–evidence pair, and how often
each flag fires, on Climate-FEVER claim × evidence-sentence pairs and SciFact mini
claim × abstract pairs (the inspector computes them for every passage it shows).

    python benchmarks/characteristics_speed.py [--json benchmarks/results/characteristics.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CLAIMSCOPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
sys.path.insert(0, str(ROOT))


def pairs() -> dict[str, list[tuple[str, str]]]:
    from core.evaluate.acu import load_acu_pairs
    from core.evaluate.datasets import load_scifact_pairs

    fx = DATA / "fixtures"
    cf = [(p.claim, p.evidence) for p in load_acu_pairs(fx / "climate_fever_dev_10.jsonl")]
    sf = [(ex.hypothesis, ex.premise) for ex in load_scifact_pairs(fx / "scifact_mini_claims.jsonl",
                                                                  fx / "scifact_mini_corpus.jsonl")]
    return {"climate_fever_fixture (sentences)": cf, "scifact_mini (rationales)": sf}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from core.diagnostics.characteristics import Characterizer, load_domain_lists
    from models.nlp import SpacyEntities

    t0 = time.perf_counter()
    ner = SpacyEntities()
    load_s = time.perf_counter() - t0
    report: dict = {"ner_load_s": load_s, "sets": {}}
    for name, items in pairs().items():
        ch = Characterizer(entities=ner.entities, domains=load_domain_lists())
        times, flags = [], Counter()
        for claim, evidence in items:
            t = time.perf_counter()
            c = ch.characterize(claim, evidence)
            times.append(time.perf_counter() - t)
            flags.update(c.flags())
        report["sets"][name] = {
            "pairs": len(items), "ms_per_pair_median": 1000 * statistics.median(times),
            "ms_per_pair_mean": 1000 * statistics.mean(times),
            "flag_share": {k: v / len(items) for k, v in flags.most_common()},
        }
        print(f"{name}: {len(items)} pairs, {1000 * statistics.median(times):.1f} ms/pair median "
              f"(NER included; claim NER cached per claim); flags: "
              + ", ".join(f"{k} {v / len(items):.0%}" for k, v in flags.most_common()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
