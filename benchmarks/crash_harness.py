"""Crash safety: SIGKILL `claimscope source add` and `claimscope check --jsonl` at random moments.

For each command an uninterrupted reference run is timed first; then every trial starts the
same command on a fresh copy of the starting database, kills it with SIGKILL at a seeded
random moment spread over the reference run's whole duration (stratified: trial i of N draws
its moment from the i-th N-th of the duration, in shuffled order), and checks:

- the database opens (``store.open_db``) and ``PRAGMA integrity_check`` says ``ok``;
- no committed row was lost: every row a read connection saw just before the kill (its
  rowid in every table, and the whole row in append-only tables) is still there;
- nothing is duplicated: the schema's unique keys plus one verdict per claim, one run per
  (external id, input hash, config), one ``run_started`` event per run;
- re-running the same command finishes (exit 0) with the reference run's results: the same
  documents, passages and vectors, a fresh FAISS index over them (``source add``); the same
  claims, verdicts, support scores and deciding evidence per input line (``check``), and
  the same row counts as the reference database (no row written twice).

    python benchmarks/crash_harness.py --trials 50 --json benchmarks/results/crash_safety.json

Prints kills survived / rows lost per command. The test suite runs a short form
(tests/test_crash_safety.py, 3 trials each).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CLAIMSCOPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
SOURCE = "crash"
# Rows of these tables are written once and never updated by `source add` / `check`; rows of
# the others (sources' counts, run / claim status, scores) legitimately change after commit.
APPEND_ONLY = {"documents", "passages", "embeddings", "embedding_cache", "evidence", "judgements",
               "verdicts", "events", "model_manifest"}
SKIP_TABLES = ("sqlite_", "passages_fts")  # SQLite internals and FTS shadow tables (integrity_check covers them)


@dataclass
class Trial:
    command: str
    index: int
    kill_at_s: float
    killed: bool = False  # False: the process had finished before its kill moment
    rows_before_kill: int = 0  # committed rows the killed process had written (beyond the starting database)
    rows_lost: int = 0
    duplicates: list[str] = field(default_factory=list)
    integrity: str = ""
    rerun_exit: int | None = None
    same_as_reference: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def survived(self) -> bool:
        return not self.problems


# ------------------------------------------------------------------ commands


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui.cli", *args]


def env_for(db: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(CLAIMSCOPE_DB=str(db), CLAIMSCOPE_CONFIG=str(db.parent / "no-config.toml"),
               OMP_WAIT_POLICY="PASSIVE", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def write_inputs(work: Path, docs: int, answers: int) -> tuple[Path, Path]:
    """A corpus slice (the first ``docs`` SciFact mini documents) and ``answers`` batch lines
    made of SciFact claims about that slice (two sentences each, so each run has 2+ claims)."""
    fixtures = DATA / "fixtures"
    lines = (fixtures / "scifact_mini_corpus.jsonl").read_text(encoding="utf-8").splitlines()[:docs]
    corpus = work / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    titles = [json.loads(x)["title"] for x in lines]
    claims = [json.loads(x) for x in (fixtures / "scifact_mini_claims.jsonl").read_text(encoding="utf-8").splitlines()]
    batch = work / "answers.jsonl"
    with batch.open("w", encoding="utf-8") as fh:
        for i in range(answers):
            c = claims[i % len(claims)]
            text = f"{c['claim']} {titles[i % len(titles)]}."
            fh.write(json.dumps({"id": f"a{i}", "text": text}) + "\n")
    return corpus, batch


@dataclass(frozen=True)
class Command:
    name: str
    argv: list[str]
    base_db: Path | None  # the database each trial starts from (None: a new, empty one)


def copy_db(src: Path | None, dst: Path) -> None:
    """Copy a closed database with its WAL and its FAISS cache folder."""
    for p in list(dst.parent.glob(dst.name + "*")):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    if src is None:
        return
    for p in src.parent.glob(src.name + "*"):
        target = dst.parent / (dst.name + p.name[len(src.name):])
        shutil.copytree(p, target) if p.is_dir() else shutil.copy2(p, target)


# ------------------------------------------------------------------ database checks


def user_tables(conn: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return sorted(n for n in names if not n.startswith(SKIP_TABLES))


def snapshot(db: Path) -> dict[str, dict]:
    """Every committed row (by rowid) of every table, read in one transaction. (Not a
    ``mode=ro`` connection: on a WAL database that fails while no ``-shm`` file exists yet.)"""
    if not db.exists():
        return {}
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("PRAGMA query_only = 1")
        conn.execute("BEGIN")
        out = {}
        for t in user_tables(conn):
            cols = conn.execute(f'PRAGMA table_info("{t}")').fetchall()
            pk = [c[1] for c in sorted(cols, key=lambda c: c[5]) if c[5]]
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'", [t]).fetchone():
                key = ", ".join(f'"{c}"' for c in pk)  # no rowid: the primary key identifies a row
                out[t] = {tuple(r[: len(pk)]): tuple(r[len(pk):]) for r in conn.execute(f'SELECT {key}, * FROM "{t}"')}
            else:
                out[t] = {r[0]: tuple(r[1:]) for r in conn.execute(f'SELECT rowid, * FROM "{t}"')}
        return out
    finally:
        conn.close()


def rows_lost(before: dict[str, dict], after: dict[str, dict]) -> int:
    lost = 0
    for table, rows in before.items():
        now = after.get(table, {})
        for rowid, row in rows.items():
            if rowid not in now or (table in APPEND_ONLY and now[rowid] != row):
                lost += 1
    return lost


DUPLICATE_QUERIES = {
    "documents (source, ext_id)": "SELECT count(*) - count(DISTINCT source_id || '/' || ext_id) FROM documents",
    "passages (document, idx)": "SELECT count(*) - count(DISTINCT document_id || '/' || idx) FROM passages",
    "claims (run, idx)": "SELECT count(*) - count(DISTINCT run_id || '/' || idx) FROM claims",
    "verdicts per claim": "SELECT count(*) - count(DISTINCT claim_id) FROM verdicts",
    "evidence (claim, passage)": "SELECT count(*) - count(DISTINCT claim_id || '/' || passage_id) FROM evidence",
    "runs (external id, input, config)":
        "SELECT count(*) - count(DISTINCT coalesce(external_id, '') || input_hash || config) FROM runs",
    "run_started per run": "SELECT count(*) - count(DISTINCT run_id) FROM events WHERE kind = 'run_started'",
}


def integrity_and_duplicates(db: Path) -> tuple[str, list[str]]:
    """Open the database the way claimscope does, run integrity_check, count duplicates."""
    from store import open_db

    handle = open_db(db)
    try:
        integrity = "; ".join(r[0] for r in handle.execute("PRAGMA integrity_check").fetchall())
        dups = [name for name, sql in DUPLICATE_QUERIES.items() if handle.execute(sql).fetchone()[0]]
        return integrity, dups
    finally:
        handle.conn.close()


def table_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        # A resumed run logs more events than an uninterrupted one. The stage cache must hold
        # exactly the reference's entries (stage, manifest key, input hash): a kill must not
        # leave an entry under a second key (checked: it does not).
        skip = {"events", "meta", "stage_cache"}
        out: dict = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in user_tables(conn) if t not in skip}
        out["stage_cache keys"] = sorted(
            "/".join(r) for r in conn.execute("SELECT stage, manifest_key, input_sha256 FROM stage_cache"))
        return out
    finally:
        conn.close()


# ------------------------------------------------------------------ results


def source_state(db: Path, source: str = SOURCE) -> dict:
    """What `source add` produced: documents, passages with offsets, vectors, and whether the
    FAISS cache beside the database is complete and fresh."""
    import numpy as np

    from core.ingest.index import _slug, index_dir
    from store import open_db
    from store import sources as sq

    handle = open_db(db)
    try:
        info = sq.get_source(handle, source)
        docs = handle.execute(
            "SELECT ext_id, title, content_hash FROM documents WHERE source_id = ? ORDER BY ext_id", [info.id]
        ).fetchall()
        passages = handle.execute(
            """SELECT d.ext_id, p.idx, p.text, p.sentences FROM passages p JOIN documents d ON d.id = p.document_id
               WHERE p.source_id = ? ORDER BY d.ext_id, p.idx""", [info.id]
        ).fetchall()
        models = [r[0] for r in handle.execute("SELECT DISTINCT model FROM embeddings")]
        vectors = {}
        index_ok = {}
        for model in models:
            ids, vecs = sq.load_embeddings(handle, info.id, model)
            vectors[model] = round(float(np.abs(vecs).sum()), 3)
            path = index_dir(handle) / source / f"{_slug(model)}.auto.faiss"
            meta_path = path.with_suffix(".json")
            ok = path.exists() and meta_path.exists()
            if ok:
                import faiss

                meta = json.loads(meta_path.read_text())
                ok = (meta["fingerprint"] == sq.embedding_fingerprint(handle, info.id, model)
                      and faiss.read_index(str(path)).ntotal == len(ids))
            index_ok[model] = ok
        return {"n_documents": info.n_documents, "n_passages": info.n_passages, "documents": [list(r) for r in docs],
                "passages": [list(r) for r in passages], "vectors": vectors, "index_fresh": index_ok}
    finally:
        handle.conn.close()


def check_state(stdout: str) -> list:
    """What `check --jsonl --format jsonl` printed, without run ids (a resumed run keeps its own)."""
    out = []
    for line in stdout.splitlines():
        r = json.loads(line)
        claims = [
            (c["idx"], c["text"], c["verdict"], round(c["support"], 5) if c["support"] is not None else None,
             (c["evidence"] or {}).get("doc_id"), (c["evidence"] or {}).get("text"))
            for c in r["claims"]
        ]
        fp = r["scores"].get("factual_precision", {}).get("value")
        out.append([r["id"], claims, fp])
    return out


def state_of(cmd: Command, db: Path, stdout: str):
    return source_state(db) if cmd.name == "source add" else check_state(stdout)


# ------------------------------------------------------------------ running


def run_to_end(cmd: Command, db: Path, timeout: float = 900) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd.argv, cwd=ROOT, env=env_for(db), capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def kill_at(cmd: Command, db: Path, delay: float) -> tuple[bool, dict]:
    """Start the command, SIGKILL it after ``delay`` seconds; returns (killed, rows committed just before)."""
    proc = subprocess.Popen(cmd.argv, cwd=ROOT, env=env_for(db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
        return False, snapshot(db)  # finished before its kill moment
    except subprocess.TimeoutExpired:
        pass
    before = snapshot(db)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True, before


def one_trial(cmd: Command, index: int, delay: float, work: Path, reference) -> Trial:
    db = work / f"trial{index}.db"
    copy_db(cmd.base_db, db)
    base_rows = sum(len(v) for v in snapshot(db).values())
    trial = Trial(cmd.name, index, round(delay, 3))
    trial.killed, before = kill_at(cmd, db, delay)
    trial.rows_before_kill = sum(len(v) for v in before.values()) - base_rows
    try:
        trial.integrity, trial.duplicates = integrity_and_duplicates(db)
    except Exception as exc:  # the database does not even open: the worst outcome
        trial.problems.append(f"does not open after the kill: {exc}")
        return trial
    trial.rows_lost = rows_lost(before, snapshot(db))
    if trial.integrity != "ok":
        trial.problems.append(f"integrity_check: {trial.integrity}")
    if trial.rows_lost:
        trial.problems.append(f"{trial.rows_lost} committed rows lost")
    if trial.duplicates:
        trial.problems.append(f"duplicates after the kill: {trial.duplicates}")
    code, stdout, stderr, _ = run_to_end(cmd, db)
    trial.rerun_exit = code
    if code != 0:
        trial.problems.append(f"re-run exit {code}: {stderr.strip().splitlines()[-1:] or ''}")
        return trial
    ref_state, ref_counts = reference
    trial.same_as_reference = state_of(cmd, db, stdout) == ref_state
    if not trial.same_as_reference:
        trial.problems.append("re-run results differ from the uninterrupted run")
    counts = table_counts(db)
    if counts != ref_counts:
        diff = {t: (counts.get(t), ref_counts.get(t)) for t in set(counts) | set(ref_counts)
                if counts.get(t) != ref_counts.get(t)}
        trial.problems.append(f"row counts differ from the uninterrupted run (got, reference): {diff}")
    _, dups = integrity_and_duplicates(db)
    if dups:
        trial.problems.append(f"duplicates after the re-run: {dups}")
    for p in db.parent.glob(db.name + "*"):  # keep the disk use flat over many trials
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    return trial


def kill_moments(n: int, duration: float, rng: random.Random) -> list[float]:
    """N moments spread over the whole duration: one uniform draw in each N-th, shuffled."""
    moments = [duration * (i + rng.random()) / n for i in range(n)]
    rng.shuffle(moments)
    return moments


def run_harness(trials: int, seed: int = 0, docs: int = 12, answers: int = 3, commands: tuple[str, ...] = ("add", "check"),
                work: Path | None = None, log=print, checkpoint=None) -> dict:
    """Run the trials; ``checkpoint(report)`` (if given) gets the report so far after every trial."""
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="claimscope-crash-")) if own else work
    try:
        corpus, batch = write_inputs(work, docs, answers)
        rng = random.Random(seed)
        base = work / "base.db"  # the reference `source add` result: where `check` starts from
        add = Command("source add", cli("source", "add", SOURCE, str(corpus)), None)
        code, out, err, add_seconds = run_to_end(add, base)
        if code != 0:
            raise RuntimeError(f"reference source add failed: {err}")
        report = {"seed": seed, "trials_per_command": trials, "corpus_documents": docs, "batch_answers": answers,
                  "commands": {}}
        plan = []
        if "add" in commands:
            plan.append((add, add_seconds, (state_of(add, base, out), table_counts(base))))
        if "check" in commands:
            chk = Command("check --jsonl", cli("check", "--jsonl", str(batch), "--format", "jsonl", "--source", SOURCE), base)
            ref_db = work / "check-ref.db"
            copy_db(base, ref_db)
            code, out, err, seconds = run_to_end(chk, ref_db)
            if code != 0:
                raise RuntimeError(f"reference check failed: {err}")
            plan.append((chk, seconds, (state_of(chk, ref_db, out), table_counts(ref_db))))
        for cmd, seconds, reference in plan:
            log(f"{cmd.name}: reference run {seconds:.1f} s; {trials} kills spread over it")
            results = []
            for i, delay in enumerate(kill_moments(trials, seconds, rng)):
                t = one_trial(cmd, i, delay, work, reference)
                results.append(t)
                log(f"  trial {i:>3}: kill at {t.kill_at_s:6.2f} s  killed={t.killed!s:5}  rows written {t.rows_before_kill:>6}"
                    f"  lost {t.rows_lost}  {'ok' if t.survived else 'FAILED: ' + '; '.join(t.problems)}")
                report["commands"][cmd.name] = {
                    "argv": cmd.argv[3:], "reference_seconds": round(seconds, 2), "trials": len(results),
                    "killed": sum(t.killed for t in results), "survived": sum(t.survived for t in results),
                    "rows_lost": sum(t.rows_lost for t in results),
                    "reruns_same_as_reference": sum(t.same_as_reference for t in results),
                    "killed_after_rows_committed": sum(t.killed and t.rows_before_kill > 0 for t in results),
                    "trial_details": [asdict(t) for t in results],
                }
                if checkpoint:
                    checkpoint(report)
        return report
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=50, help="Kills per command.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--docs", type=int, default=12, help="Corpus documents (SciFact mini slice).")
    ap.add_argument("--answers", type=int, default=3, help="Lines in the check --jsonl batch.")
    ap.add_argument("--commands", default="add,check", help="Comma-separated: add, check.")
    ap.add_argument("--json", type=Path, help="Write the report here.")
    args = ap.parse_args()

    def save(report: dict) -> None:  # after every trial, so a long run that is stopped still reports
        if args.json:
            write_report(args.json, report, quiet=True)

    report = run_harness(args.trials, args.seed, args.docs, args.answers, tuple(args.commands.split(",")),
                         log=lambda *a: print(*a, flush=True), checkpoint=save)
    for name, r in report["commands"].items():
        print(f"{name:<14} trials {r['trials']:>3}  killed {r['killed']:>3}  survived {r['survived']:>3}/{r['trials']}"
              f"  rows lost {r['rows_lost']}  re-runs same as reference {r['reruns_same_as_reference']}/{r['trials']}")
    if args.json:
        write_report(args.json, report)


def write_report(path: Path, report: dict, quiet: bool = False) -> None:
    """The JSON report of a reliability benchmark (shared by the three scripts)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    if not quiet:
        print(f"report written to {path}")


if __name__ == "__main__":
    main()
