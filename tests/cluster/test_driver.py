"""The Ray driver's bookkeeping without Ray (core/pipeline/cluster.py): a checking worker built
in this process computes, the driver stores. A failed answer is recorded (a run with status
``error`` and an error event) and its retry fills that same run — with its manifest — instead
of starting a second one; a worker reading the store read-only cannot write it."""

from __future__ import annotations

import functools
import json
import sqlite3

import pytest

from core.errors import InputError
from core.pipeline.cluster import AnswerOutcome, CheckWorker, ClusterOptions, RayBatch, _Line
from core.settings import Settings
from core.workbench import RunOptions, Workbench, cluster_stages
from store import runs as rq
from tests.conftest import indexed_fixture


@pytest.fixture()
def setup(tmp_path_factory, embedder, splitter):
    db = indexed_fixture(tmp_path_factory, "mini", "scifact_mini_corpus.jsonl", "scifact", embedder, splitter)
    path = db.execute("PRAGMA database_list").fetchone()[2]
    settings = Settings(db_path=path)
    options = RunOptions.from_settings(settings).with_(sources=("mini",), k=3, mode="hybrid")
    wb = Workbench(settings)
    wb._models[("embedder", settings.embedder)] = embedder  # the session's model, not a second copy
    pipeline = wb.pipeline(db, options)
    stages = functools.partial(cluster_stages, settings, options)
    return db, path, pipeline, stages


def test_a_failed_answer_is_recorded_then_its_retry_fills_the_same_run(setup, monkeypatch):
    db, path, pipeline, stages = setup
    monkeypatch.setenv("CLAIMSCOPE_THREADS", "2")  # the worker sets its actor's threads: undone after the test
    worker = CheckWorker(stages, (3, "hybrid", ["mini"]), path=path)
    batch = RayBatch(pipeline, stages, ClusterOptions(workers=1))
    text = "Mast cell deficiency reduces diet-induced obesity in mice. Mice were studied."
    line = _Line(0, "a0", text, attempts=1)

    batch._record_failure(line, "worker lost: ActorDiedError")
    run = rq.get_run(db, line.run_id)
    assert run.status == "error" and rq.run_claims(db, line.run_id) == []
    errors = db.execute("SELECT payload FROM events WHERE run_id = ? AND kind = 'error'", [line.run_id]).fetchall()
    assert json.loads(errors[0][0])["message"] == "worker lost: ActorDiedError"
    # A re-run of the batch finds that run by id, text and settings …
    assert rq.find_run(db, "a0", rq.input_hash(text), pipeline.config()).id == line.run_id

    job = batch._job(line)
    assert job.claims is None  # no claims known yet: the worker splits the answer again
    outcome = worker.check(job)
    assert isinstance(outcome, AnswerOutcome) and outcome.error is None and len(outcome.outcomes) >= 2
    batch._store(line, outcome)
    # … and fills it: claims, one verdict each, the manifest, status done.
    claims = rq.run_claims(db, line.run_id)
    assert [c.status for c in claims if c.checkable] == ["done"] * len(outcome.outcomes)
    assert rq.get_run(db, line.run_id).status == "done"
    assert db.execute("SELECT count(*) FROM model_manifest WHERE run_id = ?", [line.run_id]).fetchone()[0] >= 2
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    # The same answer computed in-process gives the same verdicts.
    local = pipeline.start(text, "local")
    pipeline.resume(local)
    assert [(c.text, c.verdict) for c in rq.run_claims(db, local)] == [(c.text, c.verdict) for c in claims]

    # A stored run with a pending claim is sent back for that claim only.
    last = claims[-1]
    with db.conn:
        for table in ("verdicts", "judgements", "evidence"):
            db.execute(f"DELETE FROM {table} WHERE claim_id = ?", [last.id])
        db.execute("UPDATE claims SET status = 'pending' WHERE id = ?", [last.id])
    assert batch._job(line).claims == [(last.idx, last.text)]

    # The worker's connection is read-only: the store is written by the driver alone.
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        worker.db.execute("DELETE FROM runs")
    # A pipeline per line is for lines with their own given documents, never a knowledge source's.
    with pytest.raises(InputError, match="own given documents"):
        RayBatch([pipeline], stages, ClusterOptions(workers=1))


def test_a_new_worker_sweeps_the_snapshot_folders_of_dead_workers_only(tmp_path):
    """A killed actor runs no finaliser; the next worker on the node removes its folder, and
    never the folder of a worker that still runs (here: this process)."""
    import os
    import subprocess
    import sys

    from core.pipeline.cluster import SCRATCH_PREFIX, new_scratch

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_dir = tmp_path / f"{SCRATCH_PREFIX}{int(dead.stdout)}-abc"
    (dead_dir / "knowledge.db.faiss").mkdir(parents=True)
    live_dir = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    live_dir.mkdir()
    other = tmp_path / f"{SCRATCH_PREFIX}notapid"
    other.mkdir()
    made = new_scratch(str(tmp_path))
    assert not dead_dir.exists()
    assert live_dir.is_dir() and other.is_dir() and made.is_dir()
    assert made.name.startswith(f"{SCRATCH_PREFIX}{os.getpid()}-")
