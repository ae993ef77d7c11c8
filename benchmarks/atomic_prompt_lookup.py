"""Prompt-lookup decoding for the ``atomic`` decomposer: measured against a rule written first, not adopted (issue 17, speed).

``atomic``'s time is decoding: about 47 tokens a call at 22 ms each, on one thread. Its facts copy
words from their sentence, so drafts copied from the prompt could be verified several tokens per
batch. This is prompt-lookup decoding: llama-cpp-python's ``LlamaPromptLookupDecoding``, maximum
n-gram 2, ``num_pred_tokens`` drafts. Decoding stays greedy. The only way the facts can change is
through floats that depend on the batch shape: verification batches, and the full-vocabulary
logits a draft model needs.

The candidate is switched on here only, by wrapping ``llama_cpp.Llama`` in this process. Nothing in
``models/`` has the option. The first ``--answers`` answers of a FActScore file go through
``make_decomposer("atomic")`` twice in the same process, shipped and candidate, alternating which
goes first. The output reports identical claim lists and summed wall time.

    PYTHONPATH=. python benchmarks/atomic_prompt_lookup.py --json benchmarks/results/atomic_prompt_lookup_s39.json

The JSON holds figures only; the claims (the dataset's text) are left out.
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


def with_prompt_lookup(num_pred_tokens: int):
    """A ``llama_cpp.Llama`` factory that adds the prompt-lookup draft model (and ``logits_all``,
    by which the bindings size the logits buffer a draft model needs)."""
    import llama_cpp
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    plain = llama_cpp.Llama

    def make(*args, **kwargs):
        return plain(*args, draft_model=LlamaPromptLookupDecoding(num_pred_tokens=num_pred_tokens),
                     logits_all=True, **kwargs)

    return plain, make


def main() -> None:
    import llama_cpp

    from core.settings import load_settings
    from core.workbench import Workbench
    from models.atomic import load_atomic_llm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, default=DATA / "factscore" / "InstructGPT_dev.jsonl")
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--draft", type=int, default=10, help="num_pred_tokens (the library's default)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    dec = Workbench(load_settings(None)).decomposer("atomic")
    shipped = dec.llm
    _ = shipped.llama  # loaded with the plain class
    plain, make = with_prompt_lookup(args.draft)
    llama_cpp.Llama = make
    try:
        cand = load_atomic_llm()
        _ = cand.llama
    finally:
        llama_cpp.Llama = plain
    rows = [json.loads(line) for line in args.path.open(encoding="utf-8")][: args.answers]
    per = []
    for i, r in enumerate(rows):
        arms = [("shipped", shipped), ("prompt_lookup", cand)]
        res = {}
        for name, llm in arms if i % 2 == 0 else arms[::-1]:
            dec.llm = llm
            t0 = time.perf_counter()
            claims = [c.text for c in dec.decompose(r["output"])]
            res[name] = (time.perf_counter() - t0, claims)
        per.append({"answer": i, "identical": res["shipped"][1] == res["prompt_lookup"][1],
                    "claims": {k: len(v[1]) for k, v in res.items()},
                    "wall_s": {k: round(v[0], 3) for k, v in res.items()}})
        print(i, per[-1]["identical"], per[-1]["wall_s"], file=sys.stderr, flush=True)
    total = {k: sum(p["wall_s"][k] for p in per) for k in ("shipped", "prompt_lookup")}
    report = {"task": "atomic_prompt_lookup", "path": str(args.path), "answers": len(per), "draft_tokens": args.draft,
              "identical_answers": sum(p["identical"] for p in per), "wall_s": total,
              "ratio": total["prompt_lookup"] / total["shipped"],
              "claims": {k: sum(p["claims"][k] for p in per) for k in ("shipped", "prompt_lookup")}, "per_answer": per}
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
