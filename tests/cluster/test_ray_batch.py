"""``check --jsonl --ray`` on a local Ray (core/pipeline/cluster.py): the same verdicts as the
single-process batch, and the store's crash safety when the driver or a worker is killed.

One Ray head for the module (``ray start --head --block`` in its own process group, two CPUs,
loopback only), so Ray starts once; every command connects with ``--address``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from tests.conftest import FIXTURES, ROOT

PY = sys.executable
# Ray ≥ 2.59 authenticates every connection to a cluster started with `ray start`: the head,
# its workers and every driver share one token (docs/cluster.md).
TOKEN = secrets.token_hex(16)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", OMP_WAIT_POLICY="PASSIVE", RAY_USAGE_STATS_ENABLED="0",
               RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
    return env


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """A Ray head on 127.0.0.1 with 2 CPUs; stopped (its process group) after the module."""
    ray_bin = Path(PY).with_name("ray")
    port = _free_port()
    tmp = tmp_path_factory.mktemp("ray")
    log = (tmp / "head.log").open("w")
    proc = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--node-ip-address", "127.0.0.1", f"--port={port}",
         "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
         "--temp-dir", str(Path("/tmp") / f"ray-cs-{os.getpid()}")],
        env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    address = f"127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:  # up once the GCS port answers
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, (tmp / "head.log").read_text()
            time.sleep(0.5)
    yield address
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    shutil.rmtree(Path("/tmp") / f"ray-cs-{os.getpid()}", ignore_errors=True)


def _cli(db: Path, *args: str) -> list[str]:
    return [PY, "-m", "tui.cli", "--db", str(db), *args]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """Six SciFact abstracts indexed once; answers = four titles + one shared claim each.
    Each test copies the database (and its FAISS folder), so the runs stay apart."""
    tmp = tmp_path_factory.mktemp("ray-batch")
    lines = (FIXTURES / "scifact_mini_corpus.jsonl").read_text().splitlines()[:6]
    (tmp / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    db = tmp / "base.db"
    subprocess.run(_cli(db, "source", "add", "mini", str(tmp / "corpus.jsonl")), env=_env(), check=True,
                   capture_output=True)
    titles = [json.loads(x)["title"] for x in lines]
    batch = tmp / "answers.jsonl"
    batch.write_text("".join(json.dumps({"id": f"a{i}", "text": f"{t}. Mice were studied."}) + "\n"
                             for i, t in enumerate(titles[:4])))
    single = tmp / "single.db"
    _copy(db, single)
    out = subprocess.run(_cli(single, *CHECK, str(batch)), env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return db, batch, _verdicts(out.stdout)


CHECK = ("check", "--format", "jsonl", "--source", "mini", "-k", "3", "--jsonl")


def _copy(src: Path, dst: Path) -> None:
    shutil.copy(src, dst)
    shutil.copytree(src.with_name(src.name + ".faiss"), dst.with_name(dst.name + ".faiss"))


def _verdicts(stdout: str) -> dict[str, list[tuple[str, str, float]]]:
    return {r["id"]: [(c["text"], c["verdict"], round(c["support"] or 0.0, 4)) for c in r["claims"]]
            for r in map(json.loads, stdout.splitlines())}


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("ship", [False, True], ids=["shared-path", "object-store"])
def test_ray_batch_gives_the_single_process_verdicts(indexed, ray_head, tmp_path, ship):
    base, batch, reference = indexed
    db = tmp_path / "ray.db"
    _copy(base, db)
    args = _cli(db, *CHECK, str(batch), "--ray", "--address", ray_head, "--workers", "2")
    scratch_before = set(Path(tempfile.gettempdir()).glob("claimscope-worker-*"))
    out = subprocess.run([*args, "--ship-index"] if ship else args, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert _verdicts(out.stdout) == reference
    # No worker leaves its snapshot folder behind (the actors are killed: no finaliser runs).
    assert set(Path(tempfile.gettempdir()).glob("claimscope-worker-*")) - scratch_before == set()
    # The driver wrote every result once: one verdict per checkable claim, every run done.
    assert _rows(db, "SELECT claim_id, count(*) FROM verdicts GROUP BY claim_id HAVING count(*) > 1") == []
    assert {r[0] for r in _rows(db, "SELECT status FROM runs")} == {"done"}
    # Workers computed (two actor processes), the driver wrote: the run config is the local batch's,
    # so a local re-run reuses every run instead of starting new ones.
    again = subprocess.run(_cli(db, *CHECK, str(batch)), env=_env(), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert [json.loads(x)["run_id"] for x in again.stdout.splitlines()] == \
        [json.loads(x)["run_id"] for x in out.stdout.splitlines()]


def test_sigkill_of_the_driver_loses_nothing_and_the_rerun_recomputes_nothing_finished(indexed, ray_head, tmp_path):
    base, batch, reference = indexed
    db = tmp_path / "ray.db"
    _copy(base, db)
    args = _cli(db, *CHECK, str(batch), "--ray", "--address", ray_head, "--workers", "2")
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if _rows(db, "SELECT count(*) FROM verdicts")[0][0] >= 1:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the batch finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _rows(db, "SELECT id, claim_id, label, support FROM verdicts ORDER BY id")
    assert before, "no result was stored before the kill"
    assert len(_rows(db, "SELECT id FROM runs WHERE status = 'done'")) < 4
    again = subprocess.run(args, env=_env(), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert _verdicts(again.stdout) == reference
    after = _rows(db, "SELECT id, claim_id, label, support FROM verdicts ORDER BY id")
    assert after[: len(before)] == before  # nothing stored was lost or rewritten
    assert _rows(db, "SELECT claim_id, count(*) FROM verdicts GROUP BY claim_id HAVING count(*) > 1") == []
    assert len(_rows(db, "SELECT id FROM runs")) == 4  # interrupted runs resumed, not started again


def _pids_running(title: str) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split(None, 1)[0]) for line in out.splitlines() if title in line]


def test_sigkill_of_a_worker_retries_its_answer(indexed, ray_head, tmp_path):
    base, batch, reference = indexed
    db = tmp_path / "ray.db"
    _copy(base, db)
    args = _cli(db, *CHECK, str(batch), "--ray", "--address", ray_head, "--workers", "2")
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.time() + 300
    while killed is None and time.time() < deadline and proc.poll() is None:
        busy = _pids_running("ray::CheckWorker.check")  # an actor in the middle of an answer
        if busy:
            os.kill(busy[0], signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=600)
    assert killed is not None, "no worker was caught checking an answer"
    assert proc.returncode == 0, stderr
    assert _verdicts(stdout) == reference
    assert "worker lost" in stderr
    errors = _rows(db, "SELECT payload FROM events WHERE kind = 'error'")
    assert any("worker lost" in json.loads(p)["message"] for (p,) in errors)  # recorded, then retried
    assert {r[0] for r in _rows(db, "SELECT status FROM runs")} == {"done"}
    assert _rows(db, "SELECT claim_id, count(*) FROM verdicts GROUP BY claim_id HAVING count(*) > 1") == []


@pytest.fixture(scope="module")
def rag_log(tmp_path_factory):
    """A RAG log of three WiCE fixture claims, each line with its own web page (field 'documents'),
    and the same claims without them plus every page in one ``--against`` file; both batches
    checked once in a single process, on fresh databases (no knowledge source indexed)."""
    from core.evaluate.grounding import load_wice

    tmp = tmp_path_factory.mktemp("ray-given")
    rows = load_wice(FIXTURES / "wice_dev_6.jsonl")
    picked = [(f"w{i}", rows[i]) for i in (4, 5, 0)]  # two supported claims, one not
    per_line = tmp / "rag.jsonl"
    per_line.write_text("".join(json.dumps({"id": i, "text": r.claim, "documents": [r.doc]}) + "\n" for i, r in picked))
    plain = tmp / "answers.jsonl"
    plain.write_text("".join(json.dumps({"id": i, "text": r.claim}) + "\n" for i, r in picked))
    pages = tmp / "pages.jsonl"
    pages.write_text("".join(json.dumps({"id": i, "title": f"page {i}", "text": r.doc}) + "\n" for i, r in picked))
    variants = {"per-line": ("--jsonl", str(per_line)), "against": ("--jsonl", str(plain), "--against", str(pages))}
    reference = {}
    for name, args in variants.items():
        out = subprocess.run(_cli(tmp / f"{name}.db", "check", "--format", "jsonl", *args), env=_env(),
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        reference[name] = _verdicts(out.stdout)
    return variants, reference


@pytest.mark.parametrize("variant", ["per-line", "against"])
def test_ray_checks_given_documents_as_the_single_process_batch_does(rag_log, ray_head, tmp_path, variant):
    """Given documents on Ray (each line's own, or --against for all): the driver stores them, each
    answer travels with its passages, and the workers judge every passage as a local run does — the
    same verdicts and scores, runs a local re-run reuses, and no knowledge source anywhere."""
    variants, reference = rag_log
    db = tmp_path / "ray.db"
    args = _cli(db, "check", "--format", "jsonl", *variants[variant], "--ray", "--address", ray_head, "--workers", "2")
    out = subprocess.run(args, env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert _verdicts(out.stdout) == reference[variant]
    assert any(v == "supported" for claims in reference[variant].values() for _, v, _ in claims)
    assert _rows(db, "SELECT name FROM sources") == [("_given",)]  # nothing but the given documents
    runs = {r["id"]: r["run_id"] for r in map(json.loads, out.stdout.splitlines())}
    if variant == "per-line":  # each answer's evidence comes from its own page only
        for ext_id, run_id in runs.items():
            (config,) = _rows(db, f"SELECT config FROM runs WHERE id = {run_id}")[0]
            own = {d["document_id"] for d in json.loads(config)["against"]}
            used = {r[0] for r in _rows(db, f"""SELECT DISTINCT p.document_id FROM evidence e
                JOIN passages p ON p.id = e.passage_id JOIN claims c ON c.id = e.claim_id WHERE c.run_id = {run_id}""")}
            assert len(own) == 1 and used == own, ext_id
    again = subprocess.run(_cli(db, "check", "--format", "jsonl", *variants[variant]), env=_env(),
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert {r["id"]: r["run_id"] for r in map(json.loads, again.stdout.splitlines())} == runs  # reused, not re-run


def test_ray_workers_leave_the_other_languages_unverified_as_a_local_english_only_batch_does(rag_log, ray_head, tmp_path):
    """`check --jsonl F --ray --english-only`: the workers split each answer with the same guard
    (core/pipeline/runner.py ``split_claims``), so the Spanish sentence before each claim is noted
    and never judged, and every claim's verdict is the local batch's."""
    variants, _ = rag_log
    spanish = "Madrid es la capital de España y su ciudad más poblada. "
    lines = [json.loads(x) for x in Path(variants["per-line"][1]).read_text().splitlines()]
    batch = tmp_path / "mixed.jsonl"
    batch.write_text("".join(json.dumps({**x, "text": spanish + x["text"]}) + "\n" for x in lines))

    def claims(stdout: str) -> dict[str, list[tuple]]:
        return {r["id"]: [(c["text"], c["note"], c["verdict"], round(c["support"] or 0.0, 4)) for c in r["claims"]]
                for r in map(json.loads, stdout.splitlines())}

    runs = []
    for db, more in ((tmp_path / "local.db", ()), (tmp_path / "ray.db", ("--ray", "--address", ray_head, "--workers", "2"))):
        out = subprocess.run(_cli(db, "check", "--format", "jsonl", "--jsonl", str(batch), "--english-only", *more),
                             env=_env(), capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        runs.append(claims(out.stdout))
    local, on_ray = runs
    assert on_ray == local
    for first, *rest in local.values():
        assert first[1] == "not English (reads as Spanish)" and first[2] is None
        assert rest and all(c[1] is None and c[2] is not None for c in rest)


def test_ray_without_ray_installed_is_one_clear_error(tmp_path):
    """Users without the cluster extra: --ray says what to install, exit 2 (Ray hidden here)."""
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('no ray')\n")
    (tmp_path / "a.jsonl").write_text(json.dumps({"id": "x", "text": "Paris is in France."}) + "\n")
    env = _env()
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    out = subprocess.run(_cli(tmp_path / "x.db", "check", "--jsonl", str(tmp_path / "a.jsonl"), "--ray"),
                         env=env, capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "install claimscope[cluster]" in out.stderr


def test_source_add_on_ray_embeds_what_the_local_index_embeds(indexed, ray_head, tmp_path):
    """`source add --ray`: batches embedded by Ray actors, written by the driver: the same
    passages and, within float tolerance, the same vectors as the local index."""
    import numpy as np

    from store import open_db
    from store import sources as sq

    base, _batch, _reference = indexed
    db_path = tmp_path / "ray-add.db"
    corpus = base.with_name("corpus.jsonl")
    out = subprocess.run(_cli(db_path, "source", "add", "mini", str(corpus), "--ray", "--address", ray_head),
                         env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got, ref = open_db(db_path), open_db(base)
    model = got.execute("SELECT DISTINCT model FROM embeddings").fetchone()[0]
    ids, vecs = sq.load_embeddings(got, sq.get_source(got, "mini").id, model)
    ref_ids, ref_vecs = sq.load_embeddings(ref, sq.get_source(ref, "mini").id, model)
    texts = lambda db, xs: [db.execute("SELECT text FROM passages WHERE id = ?", [int(i)]).fetchone()[0] for i in xs]  # noqa: E731
    assert texts(got, ids) == texts(ref, ref_ids) and len(ids) > 6
    assert np.allclose(vecs, ref_vecs, atol=1e-4)
