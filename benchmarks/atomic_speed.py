"""Where the ``atomic`` decomposer's time goes, per call and per process (issue 17: ≤ 1 s per sentence).

Per model call (llama.cpp's own performance counters, reset before each call): prompt tokens,
how many came from the key/value cache (whole 32-token blocks, models/llm.py), prompt-eval
tokens and milliseconds, decoded tokens and milliseconds. Per process: loading spaCy, the
base GGUF alone, the base with the LoRA adapter applied and the shipped runtime (the merged
model when ``make install`` built it, models/atomic_merge.py), and the prompt and decode speed of
each on the same prompt (what applying the adapter at run time costs).
Whole process: ``claimscope decompose --decomposer atomic TEXT`` as a user runs it, wall and
CPU seconds (user + system of the child), ``--repeat`` times (median).

    python benchmarks/atomic_speed.py [--repeat 3] [--json benchmarks/results/atomic_speed.json]

On a shared machine quote the load average (recorded); CPU seconds are what load inflates least.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The answer the earlier timings used (docs/benchmarks.md, "The trained decomposer"): 5 sentences.
TEXT = ("Marie Curie was a Polish-born physicist and chemist. She was the first woman to win a Nobel Prize. "
        "She won the Nobel Prize in Physics in 1903 with Pierre Curie and Henri Becquerel. In 1911 she won the "
        "Nobel Prize in Chemistry for the discovery of polonium and radium. She died in 1934 in Passy, France.")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def whole_process(repeat: int, runtime: str = "merged") -> dict:
    from models.atomic import RUNTIME_ENV

    runs = []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "tui.cli", "decompose", "--decomposer", "atomic", "--json", TEXT],
                             capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, RUNTIME_ENV: runtime})
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        claims = [json.loads(line)["text"] for line in res.stdout.splitlines() if line.startswith("{")]
        runs.append({"wall_s": wall, "cpu_s": cpu, "claims": claims})
        print(f"whole process ({runtime}): {wall:.2f} s wall, {cpu:.2f} s CPU, {len(claims)} claims", file=sys.stderr)
    return {"runtime": runtime, "text": TEXT, "sentences": 5, "runs": runs,
            "median_wall_s": statistics.median(r["wall_s"] for r in runs),
            "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "median_wall_s_per_sentence": statistics.median(r["wall_s"] for r in runs) / 5,
            "median_cpu_s_per_sentence": statistics.median(r["cpu_s"] for r in runs) / 5}


def per_call() -> dict:
    import llama_cpp

    from core.decompose.atomic import AtomicDecomposer
    from core.decompose.rules import RulesDecomposer
    from models.atomic import BATCH_THREADS, DECODE_THREADS, load_atomic_llm, messages
    from models.llm import load_llm

    out: dict = {}
    t0, c0 = time.perf_counter(), _cpu()
    rules = RulesDecomposer()
    out["load_spacy_rules_s"] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    t0, c0 = time.perf_counter(), _cpu()
    base = load_llm("embedded", n_threads=DECODE_THREADS, n_threads_batch=BATCH_THREADS)
    _ = base.llama
    out["load_base_s"] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    t0, c0 = time.perf_counter(), _cpu()
    lora = load_atomic_llm(runtime="lora")
    _ = lora.llama
    out["load_base_with_adapter_s"] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    t0, c0 = time.perf_counter(), _cpu()
    llm = load_atomic_llm()  # the shipped runtime: the install-time merge when it is there (models/atomic_merge.py)
    _ = llm.llama
    out["load_shipped_s"] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    out["shipped_model"] = llm.ref.manifest()
    out["n_threads"], out["n_threads_batch"] = llm.n_threads, llm.n_threads_batch

    calls = []
    # one call at a time, so that each call's own prompt and decode time is what is read (batched, the
    # answer's calls are made together before the walk, and each `facts` call only reads its answer)
    dec = AtomicDecomposer(llm, fallback_factory=lambda: rules, batch_sentences=False)
    orig = dec.facts

    def facts(sentence: str, context: str) -> list[str]:
        ctx = llm.llama.ctx
        prompt = llm.render(messages(sentence, context))
        llama_cpp.llama_perf_context_reset(ctx)
        t, c = time.perf_counter(), _cpu()
        got = orig(sentence, context)
        wall, cpu = time.perf_counter() - t, _cpu() - c
        p = llama_cpp.llama_perf_context(ctx)
        calls.append({"sentence": sentence, "prompt_tokens": len(prompt), "prompt_eval_tokens": p.n_p_eval,
                      "prompt_eval_ms": p.t_p_eval_ms, "decode_tokens": p.n_eval, "decode_ms": p.t_eval_ms,
                      "wall_s": wall, "cpu_s": cpu, "facts": got})
        print(f"call: prompt {len(prompt)} (evaluated {p.n_p_eval}, {p.t_p_eval_ms:.0f} ms), decode {p.n_eval} "
              f"({p.t_eval_ms:.0f} ms), {wall:.2f} s wall", file=sys.stderr)
        return got

    dec.facts = facts  # type: ignore[method-assign]
    dec.decompose("Warm-up sentence about Paris, the capital of France.")
    calls.clear()
    t0, c0 = time.perf_counter(), _cpu()
    claims = dec.decompose(TEXT)
    out["decompose_s"] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    out["claims"] = [c.text for c in claims]
    out["calls"] = calls

    # the adapter's run-time cost: the same prompt, decoded greedily for a fixed length, base vs adapter
    prompt_msgs = messages("She won the Nobel Prize in Physics in 1903 with Pierre Curie and Henri Becquerel.",
                           "Marie Curie was a Polish-born physicist and chemist.")
    models = {"base": base, "adapter": lora}
    if llm.ref.merged_lora is not None:
        models["merged"] = llm
    for name, model in models.items():
        rates = []
        for _ in range(3):
            ctx = model.llama.ctx
            model.llama.reset()
            llama_cpp.llama_perf_context_reset(ctx)
            model.generate(prompt_msgs, max_tokens=48, stop_when=lambda _t: False)
            p = llama_cpp.llama_perf_context(ctx)
            rates.append({"decode_ms_per_token": p.t_eval_ms / max(1, p.n_eval), "decode_tokens": p.n_eval,
                          "prompt_ms_per_token": p.t_p_eval_ms / max(1, p.n_p_eval), "prompt_tokens": p.n_p_eval})
        out[f"decode_{name}"] = {k: statistics.median(r[k] for r in rates) for k in rates[0]}
        print(name, out[f"decode_{name}"], file=sys.stderr)
    return out


def prompt_threads() -> dict:
    """CPU seconds to evaluate the answer's 5 prompts from an empty cache (best of 3), per
    runtime and number of prompt-block threads: what n_threads_batch and the merge save."""
    from core.decompose.llm import _default_nlp
    from models.atomic import context_of, load_atomic_llm, messages

    sents = [s.text for s in _default_nlp()(TEXT).sents]
    out = {}
    for runtime in ("lora", "merged"):
        for batch in (1, 2):
            llm = load_atomic_llm(runtime=runtime, n_threads=1, n_threads_batch=batch)
            if runtime == "merged" and llm.ref.merged_lora is None:
                continue
            toks = [llm.render(messages(s, context_of(sents[0], sents[i - 1]) if i else "")) for i, s in enumerate(sents)]
            best = (float("inf"), 0.0)
            for _ in range(3):
                c0, t0 = _cpu(), time.perf_counter()
                for t in toks:
                    llm.llama.reset()
                    llm.llama.eval(t)
                best = min(best, (_cpu() - c0, time.perf_counter() - t0))
            n = sum(map(len, toks))
            out[f"{runtime}_batch_threads_{batch}"] = {"tokens": n, "cpu_s": best[0], "wall_s": best[1],
                                                       "cpu_ms_per_token": 1000 * best[0] / n}
            print(runtime, batch, out[f"{runtime}_batch_threads_{batch}"], file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-process", action="store_true", help="only the per-call profile")
    ap.add_argument("--runtimes", default="merged", help="whole process with these runtimes (merged, lora)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "atomic_speed.json")
    args = ap.parse_args()
    from core.machine import machine_manifest

    report: dict = {"load_average_start": os.getloadavg(), "machine": machine_manifest()}
    report["per_call"] = per_call()
    report["prompt_threads"] = prompt_threads()
    if not args.skip_process:
        for rt in args.runtimes.split(","):
            key = "whole_process" if rt == "merged" else f"whole_process_{rt}"
            report[key] = whole_process(args.repeat, rt)
    report["load_average_end"] = os.getloadavg()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("per_call",)}, indent=1)[:2000])


if __name__ == "__main__":
    main()
