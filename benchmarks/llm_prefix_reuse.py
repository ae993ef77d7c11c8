"""What reproducible LLM calls cost: block-aligned prefix reuse against the alternatives.

The LLM judge scores FEVER-Symmetric dev pairs (evidence + claim after a shared instruction)
with the embedded SmolLM2 GGUF, in four runtime modes:

- ``legacy``: the old behaviour — reuse the cache up to the longest common prefix and
  evaluate the rest as one batch (fast, but the floats depend on the previous prompt);
- ``block32`` (the default, ``models.llm.PROMPT_BLOCK``) and ``block64``: reuse whole
  blocks only, evaluate in block-sized batches counted from the prompt's first token;
- ``fresh``: no reuse at all, the whole prompt as one batch (``llm.reset()`` every call).

For each mode: seconds per pair (the pairs once forward, once in reverse order, after a
warm-up) and the largest difference between the two passes' probabilities, which is 0 when
a call does not depend on what came before. On CPUs where batch shape does not change the
kernels' rounding (e.g. this project's AVX-512 machines) legacy shows 0 too; on an AMD EPYC
without AVX-512 it showed up to 0.013 (issue 13).

    python benchmarks/llm_prefix_reuse.py [--pairs 16] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from core.machine import machine_manifest
from models.llm import LLM, PROMPT_BLOCK, resolve_llm
from models.llm_judge import LLMJudge

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT.parent / "shared" / "data" / "fever_symmetric" / "dev.jsonl"


class LegacyLLM(LLM):
    """The pre-issue-13 runtime: longest-common-prefix reuse, the rest as one batch."""

    def _prefill(self, tokens: list[int]) -> int:
        llama = self.llama
        keep = 0
        for a, b in zip(llama.input_ids[: llama.n_tokens], tokens[:-1], strict=False):
            if a != b:
                break
            keep += 1
        llama.n_tokens = keep
        llama.eval(tokens[keep:])
        return keep


def run(mode: str, pairs: list[tuple[str, str]]) -> dict:
    ref = resolve_llm("embedded")
    if mode == "legacy":
        llm: LLM = LegacyLLM(ref, prompt_block=512)
    elif mode == "fresh":
        llm = LLM(ref, prompt_block=2048)  # = n_ctx: nothing is ever reused, one batch
    else:
        llm = LLM(ref, prompt_block=int(mode.removeprefix("block")))
    judge = LLMJudge(llm)
    judge.predict(pairs[:2])  # load and warm up
    t0 = time.perf_counter()
    forward = judge.predict(pairs)
    t1 = time.perf_counter()
    backward = judge.predict(pairs[::-1])[::-1]
    t2 = time.perf_counter()
    tokens = [len(llm.render(judge.messages(e, c))) for e, c in pairs]
    return {
        "mode": mode, "prompt_block": llm.prompt_block,
        "s_per_pair_forward": round((t1 - t0) / len(pairs), 4),
        "s_per_pair_reverse": round((t2 - t1) / len(pairs), 4),
        "max_abs_diff_forward_vs_reverse": float(np.abs(forward - backward).max()),
        "mean_prompt_tokens": round(float(np.mean(tokens)), 1),
        "probs_forward": forward.tolist(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=16)
    ap.add_argument("--modes", default=f"legacy,block{PROMPT_BLOCK},block64,fresh")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = [json.loads(line) for line in FEVER.open(encoding="utf-8")][: args.pairs]
    pairs = [(r["evidence"], r["claim"]) for r in rows]
    results = [run(m, pairs) for m in args.modes.split(",")]
    ref = {r["mode"]: np.array(r.pop("probs_forward")) for r in results}
    base = ref.get(f"block{PROMPT_BLOCK}")
    for r in results:
        if base is not None:
            r["max_abs_diff_vs_default"] = float(np.abs(ref[r["mode"]] - base).max())
        print(f"{r['mode']:>8}  {r['s_per_pair_forward']:.3f} / {r['s_per_pair_reverse']:.3f} s per pair"
              f"  forward-vs-reverse max |Δp| {r['max_abs_diff_forward_vs_reverse']:.2e}")
    report = {"benchmark": "llm_prefix_reuse", "dataset": "FEVER-Symmetric dev", "n_pairs": len(pairs),
              "model": resolve_llm("embedded").manifest(), "machine": machine_manifest(), "results": results}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
