"""Crash safety: SIGKILL during `source add` and `check --jsonl` (short form of
benchmarks/crash_harness.py), batch re-runs that resume instead of duplicating, atomic FAISS saves."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

# benchmarks/ is a folder of scripts, not a package: the harness is imported from there by path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import crash_harness

from store import open_db, write_tx
from store import runs as rq
from tui.cli import app


@pytest.mark.crash
def test_sigkill_at_random_moments_loses_nothing_and_reruns_finish_the_same(tmp_path):
    """2 kills per command (the long form: benchmarks/crash_harness.py --trials 50), spread
    over the reference run's duration (seeded): the database opens, passes integrity_check,
    keeps every committed row, has no duplicates, and the re-run gives the uninterrupted
    run's passages / claims and verdicts."""
    report = crash_harness.run_harness(trials=2, seed=1, docs=6, answers=1, work=tmp_path, log=lambda *_: None)
    assert set(report["commands"]) == {"source add", "check --jsonl"}
    for name, r in report["commands"].items():
        failed = [(t["kill_at_s"], t["problems"]) for t in r["trial_details"] if t["problems"]]
        assert not failed, (name, failed)
        assert r["trials"] == 2 and r["survived"] == 2 and r["rows_lost"] == 0
        assert r["reruns_same_as_reference"] == 2


def test_snapshot_and_loss_detection_see_a_lost_row(tmp_path):
    """The harness's own check can fail: a row deleted after the snapshot is counted as lost,
    a changed row of an append-only table too."""
    db = open_db(tmp_path / "s.db")
    with write_tx(db):
        run = rq.create_run(db, "A text.", {})
        rq.add_claim(db, run, 0, "A text.")
        rq.add_event(db, run, "run_started", {})
    db.conn.close()
    before = crash_harness.snapshot(tmp_path / "s.db")
    db = open_db(tmp_path / "s.db")
    with write_tx(db):
        db.execute("DELETE FROM claims")
        db.execute("UPDATE events SET payload = '{\"x\": 1}'")
    db.conn.close()
    assert crash_harness.rows_lost(before, crash_harness.snapshot(tmp_path / "s.db")) == 2


def test_find_run_matches_external_id_text_and_settings(tmp_path):
    db = open_db(tmp_path / "runs.db")
    with write_tx(db):
        a = rq.create_run(db, "Paris is in France.", {"k": 3})
        rq.set_external_id(db, a, "q1")
        b = rq.create_run(db, "Paris is in France.", {"k": 5})
        rq.set_external_id(db, b, "q1")
    h = rq.input_hash("Paris is in France.")
    assert rq.find_run(db, "q1", h, {"k": 3}).id == a
    assert rq.find_run(db, "q1", h, {"k": 5}).id == b
    assert rq.find_run(db, "q1", h).id == b  # newest, whatever the settings
    assert rq.find_run(db, "q2", h) is None
    assert rq.find_run(db, "q1", rq.input_hash("Paris is in Spain.")) is None
    assert rq.find_run(db, None, h) is None


@pytest.fixture()
def indexed(tmp_path, data_dir):
    lines = (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").read_text().splitlines()[:6]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    db = tmp_path / "batch.db"
    assert CliRunner().invoke(app, ["--db", str(db), "source", "add", "mini", str(corpus)]).exit_code == 0
    titles = [json.loads(x)["title"] for x in lines]
    batch = tmp_path / "answers.jsonl"
    batch.write_text("".join(json.dumps({"id": f"a{i}", "text": f"{t}. Mice were studied."}) + "\n"
                             for i, t in enumerate(titles[:2])))
    return db, batch


def test_a_batch_rerun_resumes_its_runs_instead_of_starting_new_ones(indexed):
    """What a kill between two claims leaves (one claim pending) is finished by re-running
    the same command; finished lines are reused; nothing is stored twice."""
    db_path, batch = indexed
    args = ["--db", str(db_path), "check", "--jsonl", str(batch), "--format", "jsonl", "--source", "mini", "-k", "3"]
    runner = CliRunner()
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    ref = [json.loads(x) for x in first.stdout.splitlines()]
    db = open_db(db_path)
    run_ids = [r["run_id"] for r in ref]
    # Undo the last claim of the second run, as a kill before its transaction committed would.
    last = db.execute("SELECT max(id) FROM claims WHERE run_id = ?", [run_ids[1]]).fetchone()[0]
    with write_tx(db):
        for table in ("verdicts", "judgements", "evidence"):
            db.execute(f"DELETE FROM {table} WHERE claim_id = ?", [last])
        db.execute("UPDATE claims SET status = 'pending' WHERE id = ?", [last])
        db.execute("UPDATE runs SET status = 'running' WHERE id = ?", [run_ids[1]])
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "claims", "verdicts")}
    db.conn.close()

    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    got = [json.loads(x) for x in again.stdout.splitlines()]
    assert [r["run_id"] for r in got] == run_ids  # resumed / reused, not new runs
    strip = lambda rs: [[(c["text"], c["verdict"], round(c["support"] or 0, 5)) for c in r["claims"]] for r in rs]  # noqa: E731
    assert strip(got) == strip(ref)
    db = open_db(db_path)
    after = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "claims", "verdicts")}
    assert after == {**counts, "verdicts": counts["verdicts"] + 1}
    assert {r[0] for r in db.execute("SELECT status FROM runs")} == {"done"}
    # Other settings are another run: the same batch with -k 2 starts new runs.
    third = runner.invoke(app, [*args[:-1], "2"])
    assert third.exit_code == 0 and {json.loads(x)["run_id"] for x in third.stdout.splitlines()}.isdisjoint(run_ids)


def test_faiss_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    import faiss

    from models.vector_index import VectorIndex

    path = tmp_path / "ix" / "a.faiss"
    rng = np.random.default_rng(0)
    VectorIndex.build(np.arange(5), rng.normal(size=(5, 8)).astype(np.float32)).save(path)
    good = path.read_bytes()

    def half_then_crash(index, name):
        Path(name).write_bytes(good[: len(good) // 2])
        raise RuntimeError("disk full")

    monkeypatch.setattr(faiss, "write_index", half_then_crash)
    with pytest.raises(RuntimeError):
        VectorIndex.build(np.arange(7), rng.normal(size=(7, 8)).astype(np.float32)).save(path)
    assert path.read_bytes() == good
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.faiss"]  # no temp file left behind


def test_concurrent_index_metadata_saves_do_not_collide(tmp_path):
    """Two processes (here threads) refreshing the same index metadata each use their own temp
    file: a shared fixed name let one rename the other's file away (FileNotFoundError)."""
    from models.vector_index import atomic_write_text

    target = tmp_path / "meta.json"
    errors = []

    def save(n):
        try:
            for i in range(200):
                atomic_write_text(target, json.dumps({"writer": n, "i": i}))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert json.loads(target.read_text())["i"] == 199
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]
