"""Batched decoding of an answer's sentences for the ``atomic`` decomposer (issue 17, speed).

``atomic`` decodes one token at a time on one thread, and a decoded token of the 135M model costs
about one pass over its weights. The sentences of one answer are independent calls, so
``LLM.generate_many`` (models/llm_batch.py) decodes them together, each in its own cache stream,
once a check on this machine has found that a sequence gets the same logits beside others as
alone. This script measures what that gives and whether anything changes: the first ``--answers``
answers of a FActScore file go through ``make_decomposer("atomic").decompose`` twice in one
process, one by one (``batch_sentences = False``, the path before) and batched, alternating which
goes first, and the claim lists are compared.

    PYTHONPATH=. python benchmarks/atomic_batched_decode.py --json benchmarks/results/atomic_batched_decode_s40.json

The JSON holds figures only; claims and sentences (the dataset's text) are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    from core.settings import load_settings
    from core.workbench import Workbench

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, default=DATA / "factscore" / "InstructGPT_dev.jsonl")
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    dec = Workbench(load_settings(None)).decomposer("atomic")
    rows = [json.loads(line) for line in args.path.open(encoding="utf-8")][: args.answers]
    t0 = time.perf_counter()
    dec.decompose(rows[0]["output"])  # loads spaCy, the model and the batched context; runs the check
    warm = time.perf_counter() - t0
    per, tot = [], {"one_by_one": 0.0, "batched": 0.0}
    for i, r in enumerate(rows):
        res = {}
        for arm in ("one_by_one", "batched") if i % 2 == 0 else ("batched", "one_by_one"):
            dec.batch_sentences = arm == "batched"
            before = dec.stats["batched_sentences"]
            t = time.perf_counter()
            claims = [(c.text, c.span, c.note, c.checkable) for c in dec.decompose(r["output"])]
            res[arm] = (time.perf_counter() - t, claims, dec.stats["batched_sentences"] - before)
            tot[arm] += res[arm][0]
        per.append({"answer": i, "claims": len(res["one_by_one"][1]), "sentences_batched": res["batched"][2],
                    "one_by_one_s": round(res["one_by_one"][0], 3), "batched_s": round(res["batched"][0], 3),
                    "claims_equal": res["one_by_one"][1] == res["batched"][1]})
        print(json.dumps(per[-1]), flush=True)
    out = {
        "path": str(args.path.relative_to(DATA)) if args.path.is_relative_to(DATA) else str(args.path),
        "answers": len(per), "claims": sum(p["claims"] for p in per),
        "sentences_batched": sum(p["sentences_batched"] for p in per),
        "batch_invariant_on_this_machine": bool(dec.llm._batched and dec.llm._batched._invariant),
        "answers_claims_equal": sum(p["claims_equal"] for p in per),
        "first_call_s": round(warm, 2),
        "one_by_one_s": round(tot["one_by_one"], 2), "batched_s": round(tot["batched"], 2),
        "ratio": round(tot["batched"] / tot["one_by_one"], 3), "per_answer": per,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "per_answer"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
