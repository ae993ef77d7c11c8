"""Every speed figure of "fast enough to stay in flow" in one run, so before/after compare like
with like:

1. the workbench (Textual app, headless) on the 151-word answer: ctrl+r → first and last verdict,
   models preloaded by the app's warm-up (benchmarks/tui_timing.py's measurement);
2. ``claimscope check --no-cache --file benchmarks/data/answer_150_words.txt`` as a whole process
   (interpreter start, model loading, decomposition, retrieval, verification, output), with the
   number of NLI pairs that run judged (load-independent: what pruning cuts);
3. with ``--index``: ``claimscope source add wiki-vital`` on an empty database, whole process
   (minutes: off by default);
4. verifier throughput, pairs/s, on FEVER-Symmetric dev pairs as they are (short evidence) and
   with evidence padded to 60 words (benchmarks/nli_speed.py's shapes), through the verifier the
   workbench loads (its default runtime).

    python benchmarks/speed.py --db /path/with/wiki-vital.db [--repeat 3] [--index] [--out FILE]

Runs are written to temporary copies of the database, never to it. Medians over ``--repeat``.
On a shared machine quote the load average (recorded) and compare before/after ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tui_timing import fresh_copy, time_app  # noqa: E402

ANSWER_FILE = ROOT / "benchmarks" / "data" / "answer_150_words.txt"
FEVER = ROOT.parent / "shared" / "data" / "fever_symmetric" / "dev.jsonl"
CLAIMSCOPE = [sys.executable, "-m", "tui.cli"]


def time_check(db_path: Path) -> dict:
    """``check --no-cache`` as a whole process; the pairs judged are read back from the run.
    CPU seconds (user + sys of the child) are what a loaded machine inflates least."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(
        [*CLAIMSCOPE, "--db", str(db_path), "check", "--file", str(ANSWER_FILE), "--source", "wiki-vital",
         "--format", "json", "--no-cache"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    run = json.loads(res.stdout[res.stdout.index("["):])[0]
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        pairs = conn.execute(
            "SELECT count(*) FROM judgements j JOIN claims c ON c.id = j.claim_id WHERE c.run_id = ?", [run["run_id"]]
        ).fetchone()[0]
    verdicts = [c["verdict"] for c in run["claims"]]
    return {"wall_s": wall, "cpu_s": cpu, "claims": len(run["claims"]), "pairs_judged": pairs, "verdicts": verdicts}


def time_index(folder: Path) -> dict:
    db = folder / "index.db"
    t0 = time.perf_counter()
    subprocess.run([*CLAIMSCOPE, "--db", str(db), "source", "add", "wiki-vital"], check=True, cwd=ROOT,
                   capture_output=True, text=True)
    return {"wall_s": time.perf_counter() - t0}


def nli_throughput(n: int) -> dict:
    """Pairs/s through the workbench's verifier (whatever runtime it loads by default)."""
    from core.evaluate.datasets import load_verifier_dataset
    from core.settings import Settings
    from core.workbench import Workbench

    nli = Workbench(Settings()).nli("embedded")
    examples = load_verifier_dataset("fever-symmetric", FEVER)[:n]
    pairs = [(e.premise, e.hypothesis) for e in examples]
    long_pairs = [(" ".join(" ".join([p] * 4).split()[:60]), h) for p, h in pairs]
    out = {"runtime": getattr(nli, "runtime", "torch-fp32"), "n": len(pairs)}
    for name, ps in (("short", pairs), ("60w", long_pairs)):
        nli.predict(ps[:32])  # warm-up
        rates = []
        for _ in range(3):
            t0 = time.perf_counter()
            nli.predict(ps)
            rates.append(len(ps) / (time.perf_counter() - t0))
        out[f"pairs_per_s_{name}"] = statistics.median(rates)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a database with wiki-vital indexed")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--index", action="store_true", help="also time wiki-vital's first index (minutes)")
    ap.add_argument("--nli-pairs", type=int, default=512)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "speed.json")
    args = ap.parse_args()
    report: dict = {"load_average_start": os.getloadavg(), "cpus": os.cpu_count(), "repeat": args.repeat}
    app_runs, check_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            app_runs.append(asyncio.run(time_app(fresh_copy(args.db, Path(tmp)))))
            check_runs.append(time_check(fresh_copy(args.db, Path(tmp))))
            print(app_runs[-1], {k: v for k, v in check_runs[-1].items() if k != "verdicts"}, file=sys.stderr)
        if args.index:
            report["index_wiki_vital_s"] = time_index(Path(tmp))["wall_s"]
            print("index", report["index_wiki_vital_s"], file=sys.stderr)

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    report.update({
        "answer_words": len(ANSWER_FILE.read_text(encoding="utf-8").split()), "claims": app_runs[0]["claims"],
        "tui_first_verdict_s": med(app_runs, "first_verdict_s"),
        "tui_last_verdict_s": med(app_runs, "last_verdict_s"),
        "check_no_cache_process_s": med(check_runs, "wall_s"),
        "check_no_cache_process_cpu_s": med(check_runs, "cpu_s"),
        "check_pairs_judged": med(check_runs, "pairs_judged"),
        "check_verdicts": check_runs[0]["verdicts"],
    })
    report["nli"] = nli_throughput(args.nli_pairs)
    report["load_average_end"] = os.getloadavg()
    report["runs"] = {"tui": app_runs, "check": check_runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
