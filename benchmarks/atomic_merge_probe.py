"""What the atomic decomposer's LoRA costs at run time: the adapter merged into the base, probed.

llama.cpp applies the adapter (models/decomposer/atomic-lora.gguf) as extra products in every
adapted layer. This probe merges it into the embedded base with the install-time merge
(models/atomic_merge.py) in a chosen quantisation, and decodes held-out sentences with the
run-time adapter (base + adapter) and the merged model: CPU seconds, ms per decoded token and
how many answers are equal. The Q8_0 merge is what `make install` now builds
(docs/benchmarks.md, issue 17 "Speed"); benchmarks/results/atomic_merge_probe.json predates it
(a float32 ``B @ A``, before the merge summed outer products in float64).

    python benchmarks/atomic_merge_probe.py --out-dir /tmp/merge --quant Q8_0 --quant Q4_1 \
        --record /work/x17/runs/raw130stop3.jsonl --every 12 --n 25

``--record``: JSONL of {"sentence", "context"} lines (the held-out sentences the shipped
decomposer saw, recorded by the held-out eval).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def merge(base: Path, adapter: Path, out: Path, quant: str) -> float:
    """The shipped merge (models/atomic_merge.py) into ``quant``; returns its seconds."""
    from models.atomic_merge import merge as merge_adapter

    t0 = time.perf_counter()
    merge_adapter(base, adapter, out, quant)
    return time.perf_counter() - t0


def decode_all(llm, rows: list[dict]) -> tuple[list[list[str]], float, float]:
    import llama_cpp

    from models.atomic import messages, parse_answer, repeats

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    out, ms, toks = [], 0.0, 0
    for o in rows:
        llama_cpp.llama_perf_context_reset(llm.llama.ctx)
        out.append(parse_answer(llm.generate(messages(o["sentence"], o["context"]), max_tokens=160, stop_when=repeats)))
        p = llama_cpp.llama_perf_context(llm.llama.ctx)
        ms, toks = ms + p.t_eval_ms, toks + p.n_eval
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return out, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), ms / max(1, toks)


def main() -> None:
    from models.atomic import ADAPTER_FILE, load_atomic_llm
    from models.llm import LLM, resolve_llm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--quant", action="append", default=None)
    ap.add_argument("--record", type=Path, required=True)
    ap.add_argument("--every", type=int, default=12)
    ap.add_argument("--n", type=int, default=25)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.record.read_text().splitlines() if line.strip()][:: args.every][: args.n]
    base = resolve_llm("embedded").path
    ref, cpu, ms = decode_all(load_atomic_llm(), rows)
    report = {"n": len(rows), "load_average": os.getloadavg(),
              "runtime_lora": {"cpu_s": cpu, "ms_per_token": ms}}
    print("runtime LoRA", report["runtime_lora"], file=sys.stderr)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for q in args.quant or ["Q8_0"]:
        path = args.out_dir / f"atomic-merged-{q}.gguf"
        secs = merge(base, ADAPTER_FILE, path, q)
        got, cpu, ms = decode_all(LLM(resolve_llm(str(path)), n_threads=1, n_threads_batch=2), rows)
        report[f"merged_{q}"] = {"merge_s": secs, "bytes": path.stat().st_size, "cpu_s": cpu, "ms_per_token": ms,
                                 "equal_answers": sum(x == y for x, y in zip(got, ref, strict=True))}
        print(q, report[f"merged_{q}"], file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
