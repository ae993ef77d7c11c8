"""Time the workbench on a ~150-word answer: from pressing run (ctrl+r) to the first and to
the last verdict, in the real app driven headless (Textual's run_test), with the models
already loaded by the app's background warm-up (as for a user who pastes an answer after
the app opened). Then the same answer through `claimscope check` as a whole process.

    python benchmarks/tui_timing.py --db /path/with/wiki-vital.db [--repeat 3]

The database must have the built-in wiki-vital source indexed (`claimscope source add
wiki-vital`); runs are written to a temporary copy, never to it. Results go to
benchmarks/results/tui_timing.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANSWER = (ROOT / "benchmarks" / "data" / "answer_150_words.txt").read_text(encoding="utf-8").strip()


async def time_app(db_path: Path) -> dict:
    from textual.widgets import TextArea

    from core.settings import Settings
    from core.workbench import Workbench
    from tui.app import ClaimscopeApp

    app = ClaimscopeApp(Workbench(Settings(db_path=db_path, sources=("wiki-vital",))), persist_settings=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await app.workers.wait_for_complete()  # the warm-up: models loaded before the user presses run
        app.query_one("#answer", TextArea).load_text(ANSWER)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        t = app.timing
        claims = app.query_one("#claims").row_count
    return {"first_verdict_s": t["first"] - t["start"], "last_verdict_s": t["last"] - t["start"], "claims": claims}


def time_check(db_path: Path) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run(
        [str(Path(sys.executable).with_name("claimscope")), "--db", str(db_path), "check", ANSWER, "--source",
         "wiki-vital", "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    wall = time.perf_counter() - t0
    claims = len(json.loads(res.stdout)[0]["claims"])
    return {"wall_s": wall, "claims": claims}


def fresh_copy(src: Path, folder: Path) -> Path:
    """A copy of the indexed database without its runs' stage cache hits (a cold run)."""
    dst = folder / "timing.db"
    for p in folder.glob("timing.db*"):
        p.unlink() if p.is_file() else shutil.rmtree(p)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
        b.execute("DELETE FROM stage_cache")
    faiss = src.with_name(src.name + ".faiss")
    if faiss.is_dir():
        shutil.copytree(faiss, dst.with_name(dst.name + ".faiss"))
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "tui_timing.json")
    args = ap.parse_args()
    words = len(ANSWER.split())
    app_runs, check_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            app_runs.append(asyncio.run(time_app(fresh_copy(args.db, Path(tmp)))))
            check_runs.append(time_check(fresh_copy(args.db, Path(tmp))))
            print(app_runs[-1], check_runs[-1], file=sys.stderr)

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    report = {
        "answer_words": words, "claims": app_runs[0]["claims"], "repeat": args.repeat,
        "tui_first_verdict_s_median": med(app_runs, "first_verdict_s"),
        "tui_last_verdict_s_median": med(app_runs, "last_verdict_s"),
        "check_process_wall_s_median": med(check_runs, "wall_s"),
        "runs": {"tui": app_runs, "check": check_runs},
        "note": "TUI figures start at ctrl+r with models preloaded; the check figure is a whole process "
                "(interpreter start, model loading, decomposition, retrieval, verification, output).",
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
