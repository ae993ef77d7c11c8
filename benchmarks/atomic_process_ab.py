"""Whole-process A/B of ``claimscope decompose --decomposer atomic``: this tree against another
checkout (a worktree of an earlier commit with the merged model linked in), taking turns.

Why: a start-up change (session 41: the LLM loaded in a thread beside spaCy, ``LLM.preload``)
moves the wall of a whole process by tenths of a second, less than the spread between machines
or sessions, so both arms run alternately in one sitting on the same machine, with the same venv,
on atomic_speed.py's 5-sentence demo answer; the claims of every run must be identical.

    git worktree add /tmp/before REV && ln -s "$PWD/models/decomposer/merged" /tmp/before/models/decomposer/merged
    python benchmarks/atomic_process_ab.py --before /tmp/before --runs 5 --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.atomic_speed import TEXT  # noqa: E402


def run(tree: Path) -> tuple[float, list[str]]:
    """One whole process in ``tree`` (its own code first on the path): wall seconds and claims."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "tui.cli", "decompose", "--decomposer", "atomic", "--json", TEXT],
                         capture_output=True, text=True, check=True, cwd=tree)
    return time.perf_counter() - t0, [json.loads(line)["text"] for line in out.stdout.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the other checkout")
    ap.add_argument("--runs", type=int, default=5, help="per arm")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    arms = {"before": args.before.resolve(), "after": ROOT}
    walls: dict[str, list[float]] = {k: [] for k in arms}
    claims: dict[str, list[list[str]]] = {k: [] for k in arms}
    for i in range(args.runs):
        for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
            wall, got = run(arms[name])
            walls[name].append(wall)
            claims[name].append(got)
            print(f"{name}: {wall:.2f} s, {len(got)} claims", file=sys.stderr)
    median = {k: statistics.median(v) for k, v in walls.items()}
    out = {"text": TEXT, "arms": {k: str(v) for k, v in arms.items()}, "walls_s": walls, "median_s": median,
           "delta_s": median["after"] - median["before"],
           "claims_identical": all(c == claims["before"][0] for runs in claims.values() for c in runs),
           "claims": claims["after"][0]}
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
