"""Concurrency: several writers on one database at once, as users run claimscope.

Scenarios (each on its own database, all writers started together):

1. ``two source add``: two ``claimscope source add`` processes indexing the same source;
2. ``check during source add``: ``claimscope check --jsonl`` while ``claimscope source add``
   indexes another source;
3. ``TUI thread + CLI``: a thread that works like the TUI's pipeline worker (its own
   connection from ``open_db`` in that thread; start + resume runs) while a UI-like reader
   polls the runs from the main thread's connection, plus a ``source add`` and a
   ``check --jsonl`` process.

A writer *fails* if it exits non-zero, if "database is locked" (or any other error) reaches its
output, or (the thread) if it raises. Afterwards no row may be lost: every source holds all of
its documents with a passage and a vector each and a fresh FAISS index, every run the writers
report is stored and finished with a verdict per checkable claim, the database passes
``PRAGMA integrity_check`` and has no duplicate rows.

    python benchmarks/concurrency.py [--rounds 3] [--json benchmarks/results/concurrency.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_harness import (  # the benchmarks folder is not a package: imported by path
    DATA,
    ROOT,
    SOURCE,
    cli,
    copy_db,
    env_for,
    integrity_and_duplicates,
    source_state,
    write_inputs,
    write_report,
)

# What a UI-thread writer checks: text that decomposes into a couple of claims.
THREAD_TEXTS = (
    "Mast cells contribute to diet-induced obesity in mice. Obesity is linked to diabetes.",
    "Bariatric surgery changes mental health outcomes. It is a common operation.",
)


@dataclass
class Writer:
    name: str
    ok: bool = True
    detail: str = ""  # the failure, or what the writer reported
    runs: list[int] = field(default_factory=list)


@dataclass
class Scenario:
    name: str
    writers: list[Writer]
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(not w.ok for w in self.writers)


def start(argv: list[str], db: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, cwd=ROOT, env=env_for(db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, name: str, timeout: float = 900) -> Writer:
    out, err = proc.communicate(timeout=timeout)
    w = Writer(name)
    done_lines = [x for x in err.splitlines() if x.startswith("source ") and "added" in x]
    w.detail = done_lines[-1] if done_lines else ""  # e.g. "source crash: 0 added, … 12 unchanged" after a re-plan
    errors = [x for x in err.splitlines() if "error" in x.lower() or "locked" in x.lower() or "Traceback" in x]
    if proc.returncode != 0 or errors:
        w.ok, w.detail = False, f"exit {proc.returncode}: {' | '.join(errors[-2:])}"
    if name.startswith("check") and proc.returncode == 0:
        w.runs = [json.loads(line)["run_id"] for line in out.splitlines() if line.strip()]
    return w


def source_complete(db: Path, name: str, corpus: Path) -> list[str]:
    """Every document of the corpus stored once, each with passages, each passage with a vector."""
    import sqlite3

    want = {str(json.loads(x)["doc_id"]) for x in corpus.read_text(encoding="utf-8").splitlines() if x.strip()}
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT id FROM sources WHERE name = ?", [name]).fetchone()
        if row is None:
            return [f"source {name} missing"]
        sid = row[0]
        got = {r[0] for r in conn.execute("SELECT ext_id FROM documents WHERE source_id = ?", [sid])}
        problems = []
        if got != want:
            problems.append(f"source {name}: {len(want - got)} documents lost, {len(got - want)} unexpected")
        bare = conn.execute(
            "SELECT count(*) FROM documents d WHERE source_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM passages p WHERE p.document_id = d.id)", [sid]).fetchone()[0]
        unembedded = conn.execute(
            "SELECT count(*) FROM passages p WHERE source_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.passage_id = p.id)", [sid]).fetchone()[0]
        if bare or unembedded:
            problems.append(f"source {name}: {bare} documents without passages, {unembedded} passages without vectors")
        return problems
    finally:
        conn.close()


def index_fresh(db: Path, name: str) -> list[str]:
    fresh = source_state(db, name)["index_fresh"]
    return [] if fresh and all(fresh.values()) else [f"source {name}: FAISS index missing or stale: {fresh}"]


def runs_complete(db: Path, run_ids: list[int]) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        problems = []
        for rid in run_ids:
            row = conn.execute("SELECT status FROM runs WHERE id = ?", [rid]).fetchone()
            if row is None:
                problems.append(f"run {rid} lost")
                continue
            missing = conn.execute(
                "SELECT count(*) FROM claims c WHERE run_id = ? AND checkable = 1 AND NOT EXISTS "
                "(SELECT 1 FROM verdicts v WHERE v.claim_id = c.id)", [rid]).fetchone()[0]
            if row[0] != "done" or missing:
                problems.append(f"run {rid}: status {row[0]}, {missing} claims without a verdict")
        return problems
    finally:
        conn.close()


def db_checks(db: Path) -> list[str]:
    integrity, dups = integrity_and_duplicates(db)
    return ([] if integrity == "ok" else [f"integrity_check: {integrity}"]) + ([f"duplicates: {dups}"] if dups else [])


def two_adds(work: Path, corpus: Path) -> Scenario:
    db = work / "two-adds.db"
    copy_db(None, db)
    t0 = time.perf_counter()
    argv = cli("source", "add", SOURCE, str(corpus))
    procs = [start(argv, db), start(argv, db)]
    writers = [finish(p, f"source add #{i + 1}") for i, p in enumerate(procs)]
    sc = Scenario("two source add, same source", writers, time.perf_counter() - t0)
    sc.problems = db_checks(db) + source_complete(db, SOURCE, corpus) + index_fresh(db, SOURCE)
    return sc


def check_during_add(work: Path, base: Path, corpus2: Path, batch: Path) -> Scenario:
    db = work / "check-add.db"
    copy_db(base, db)
    t0 = time.perf_counter()
    add = start(cli("source", "add", "other", str(corpus2)), db)
    chk = start(cli("check", "--jsonl", str(batch), "--format", "jsonl", "--source", SOURCE), db)
    writers = [finish(add, "source add other"), finish(chk, "check --jsonl")]
    sc = Scenario("check --jsonl during source add", writers, time.perf_counter() - t0)
    sc.problems = (db_checks(db) + source_complete(db, "other", corpus2) + index_fresh(db, "other")
                   + runs_complete(db, writers[1].runs))
    return sc


PipelineFactory = Callable[[object], object]  # db → core.pipeline.runner.Pipeline


def tui_thread_and_cli(work: Path, base: Path, corpus2: Path, batch: Path, pipeline_factory: PipelineFactory) -> Scenario:
    """The TUI's shape: a worker thread with its own connection runs the pipeline while the UI
    thread reads from its connection, and CLI processes write at the same time."""
    from store import open_db
    from store import runs as rq

    db = work / "tui-cli.db"
    copy_db(base, db)
    thread_writer = Writer("TUI-like pipeline thread")
    reader = Writer("TUI-like UI reader")
    done = threading.Event()

    def worker() -> None:
        conn = open_db(db)  # opened in this thread, as the TUI's workers do
        try:
            pipeline = pipeline_factory(conn)
            for text in THREAD_TEXTS:
                run_id = pipeline.start(text, "tui")
                pipeline.resume(run_id)
                thread_writer.runs.append(run_id)
        except Exception as exc:  # any failure is a finding
            thread_writer.ok, thread_writer.detail = False, f"{type(exc).__name__}: {exc}"
        finally:
            conn.conn.close()
            done.set()

    t0 = time.perf_counter()
    add = start(cli("source", "add", "other", str(corpus2)), db)
    chk = start(cli("check", "--jsonl", str(batch), "--format", "jsonl", "--source", SOURCE), db)
    thread = threading.Thread(target=worker, name="pipeline-worker")
    thread.start()
    ui = open_db(db)
    polls = 0
    try:
        while not done.is_set() or add.poll() is None or chk.poll() is None:
            rq.list_runs(ui, 20)  # what the run list screen shows
            polls += 1
            time.sleep(0.2)
            if time.perf_counter() - t0 > 900:
                break
    except Exception as exc:
        reader.ok, reader.detail = False, f"{type(exc).__name__}: {exc}"
    finally:
        ui.conn.close()
    thread.join()
    reader.detail = reader.detail or f"{polls} reads"
    writers = [finish(add, "source add other"), finish(chk, "check --jsonl"), thread_writer, reader]
    sc = Scenario("TUI thread + CLI source add + CLI check", writers, time.perf_counter() - t0)
    sc.problems = (db_checks(db) + source_complete(db, "other", corpus2) + index_fresh(db, "other")
                   + runs_complete(db, writers[1].runs + thread_writer.runs))
    return sc


def second_corpus(work: Path, skip: int, docs: int) -> Path:
    lines = (DATA / "fixtures" / "scifact_mini_corpus.jsonl").read_text(encoding="utf-8").splitlines()[skip : skip + docs]
    path = work / "corpus2.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def default_pipeline_factory() -> PipelineFactory:
    """The embedded models, loaded once and shared by the thread's pipelines (as the TUI does)."""
    from core.decompose import make_decomposer
    from core.pipeline.runner import Pipeline
    from core.retrieve.searcher import Searcher
    from core.verify.verifier import Verifier
    from models.embed import load_embedder
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter

    embedder, nli = load_embedder(), load_nli()
    decomposer = make_decomposer("rules", SpacySentenceSplitter)

    def factory(db):
        return Pipeline(db, decomposer, Searcher(db, lambda: embedder), Verifier(nli), sources=[SOURCE], k=3)

    return factory


def run_concurrency(rounds: int = 1, docs: int = 12, answers: int = 2, pipeline_factory: PipelineFactory | None = None,
                    work: Path | None = None, log=print) -> dict:
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="claimscope-conc-")) if own else work
    try:
        corpus, batch = write_inputs(work, docs, answers)
        corpus2 = second_corpus(work, docs, docs)
        base = work / "base.db"
        copy_db(None, base)
        proc = subprocess.run(cli("source", "add", SOURCE, str(corpus)), cwd=ROOT, env=env_for(base),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"indexing the base database failed: {proc.stderr}")
        factory = pipeline_factory or default_pipeline_factory()
        scenarios: list[Scenario] = []
        for r in range(rounds):
            for sc in (two_adds(work, corpus), check_during_add(work, base, corpus2, batch),
                       tui_thread_and_cli(work, base, corpus2, batch, factory)):
                scenarios.append(sc)
                log(f"round {r + 1}: {sc.name:<42} writers {len(sc.writers)}  failures {sc.failures}  "
                    f"{sc.seconds:5.1f} s  {'ok' if not sc.problems else 'PROBLEMS: ' + '; '.join(sc.problems)}")
                for w in sc.writers:
                    if not w.ok:
                        log(f"    {w.name}: {w.detail}")
        return {
            "rounds": rounds, "corpus_documents": docs, "batch_answers": answers,
            "writers": sum(len(s.writers) for s in scenarios), "failures": sum(s.failures for s in scenarios),
            "locked_errors": sum("locked" in w.detail for s in scenarios for w in s.writers),
            "scenarios_with_lost_or_broken_rows": sum(bool(s.problems) for s in scenarios),
            "scenarios": [{**asdict(s), "failures": s.failures} for s in scenarios],
        }
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="How many times to run the three scenarios.")
    ap.add_argument("--docs", type=int, default=12)
    ap.add_argument("--answers", type=int, default=2)
    ap.add_argument("--json", type=Path, help="Write the report here.")
    args = ap.parse_args()
    report = run_concurrency(args.rounds, args.docs, args.answers)
    print(f"concurrent writers {report['writers']}, failures {report['failures']} "
          f"(database is locked: {report['locked_errors']}); scenarios with lost or broken rows: "
          f"{report['scenarios_with_lost_or_broken_rows']}")
    if args.json:
        write_report(args.json, report)


if __name__ == "__main__":
    main()
