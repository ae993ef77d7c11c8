"""Batch checking and embedding on Ray: workers compute, the driver alone writes the store.

Why this split: the store's guarantees (WAL, one transaction per result, resume by id, nothing
lost) hold because one process writes. So every Ray actor is a pure function of its inputs —
it loads the models once (decomposer, embedder, NLI verifier), opens the knowledge source
read-only and turns an answer into plain records (claims, hits, verdicts) — and the driver
(``claimscope check --jsonl F --ray``) stores each claim's result in its own transaction
through the same :class:`~core.pipeline.runner.Pipeline` methods the local batch uses. A driver
killed mid-batch leaves stored runs that the next invocation finds by id and finishes; an
actor killed mid-answer is restarted by Ray and the answer sent again; an answer that fails
is recorded (an ``error`` event, the run's status) and retried, never dropped.

The knowledge source reaches the workers one of two ways (:class:`Knowledge`): a path every
node can read (the user's database and its ``.faiss`` folder, opened read-only), or a snapshot
shipped once through Ray's object store (``ship=True``) for nodes that share no file system.
A batch checked against given documents (``--against`` files, or each line's own ``documents``:
a RAG log) needs no knowledge source: the driver stores the documents, as a local batch does,
and each answer travels with its given passages (one object-store copy per document set), which
the worker judges as :class:`~core.pipeline.given.GivenPipeline` judges them.

Ray is an optional dependency (``pip install claimscope[cluster]``): it is imported only here,
only when a ``--ray`` command runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.decompose.citations import CitedClaim
from core.errors import ClaimscopeError, InputError
from core.pipeline.given import GIVEN_MODE, GivenPipeline, GivenSearcher, given_verifier
from core.pipeline.runner import BATCH_CLAIMS, Listener, Pipeline, passage_evidence, split_claims, window_sizes
from core.retrieve.searcher import HYBRID_MODES, Hit
from core.verify.verifier import ClaimVerdict
from store import runs as rq
from store.db import write_tx

MAX_ATTEMPTS = 3  # tries per answer within one invocation (a killed actor, a failed answer)
ACTOR_CPUS = 1  # CPUs a checking actor holds, and the threads its models use
CLUSTER_MODES = ("bm25", "dense", *HYBRID_MODES, GIVEN_MODE)


class ClusterUnavailable(ClaimscopeError):
    """``--ray`` without Ray installed."""

    exit_code = 2


def import_ray():
    """Ray, or one clear error naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise ClusterUnavailable(
            "--ray needs Ray: install claimscope[cluster] (pip install 'claimscope[cluster]')"
        ) from None
    return ray


@dataclass(frozen=True)
class ClusterOptions:
    """Where and how wide: ``address`` of a running cluster (None: start a local Ray with
    ``workers`` CPUs), ``workers`` actors, and whether to ship the knowledge source."""

    address: str | None = None
    workers: int = 2
    ship: bool = False


@dataclass
class Knowledge:
    """How a worker reaches the knowledge source: ``path`` (shared) or ``files`` (an object
    store reference to {relative path: bytes}: the snapshot database and its FAISS files);
    neither for a batch against given documents."""

    path: str | None = None
    files: Any = None


@dataclass
class AnswerJob:
    """One batch line for a worker: split ``text`` into claims (``claims`` None) or verify
    only the given (idx, claim text) pairs — the pending claims of a stored run."""

    key: int
    text: str
    claims: list[tuple[int, str]] | None = None


@dataclass
class ClaimOutcome:
    idx: int
    hits: list[Hit]
    verdict: ClaimVerdict


@dataclass
class AnswerOutcome:
    """What a worker returns: plain records, nothing written."""

    key: int
    cited: list[CitedClaim] | None
    outcomes: list[ClaimOutcome] = field(default_factory=list)
    error: str | None = None
    worker: str = ""


# ---------------------------------------------------------------- knowledge source


def snapshot_files(db_path: Path) -> dict[str, bytes]:
    """A consistent copy of the store (SQLite backup API: a committed state, even while the
    driver writes) and the FAISS and Tantivy files beside it, as bytes keyed by relative path."""
    out: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="claimscope-snap-") as tmp:
        copy = Path(tmp) / "knowledge.db"
        src = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        dst = sqlite3.connect(str(copy))
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            src.close()
            dst.close()
        out["knowledge.db"] = copy.read_bytes()
    for suffix in (".faiss", ".tantivy"):  # the FAISS files and the Tantivy BM25 indexes of large sources
        folder = db_path.with_name(db_path.name + suffix)
        if folder.is_dir():
            for f in folder.rglob("*"):
                if f.is_file() and not f.name.endswith(".tmp") and ".build." not in str(f.relative_to(folder)):
                    out["knowledge.db" + suffix + "/" + str(f.relative_to(folder))] = f.read_bytes()
    return out


SCRATCH_PREFIX = "claimscope-worker-"


def new_scratch(tmp: str | None = None) -> Path:
    """A worker's snapshot folder, named for its process (``claimscope-worker-<pid>-…``), after
    sweeping the folders of this node's workers whose process is gone (killed, crashed, or a
    Ray shutdown that ran no finaliser) — so shipped snapshots never pile up in the temp dir."""
    root = Path(tmp or tempfile.gettempdir())
    for old in root.glob(SCRATCH_PREFIX + "*"):
        pid = old.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=root))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def open_knowledge(knowledge: Knowledge, scratch: Path | None):
    """The knowledge source as a read-only sqlite-utils database: the shared file, or the
    shipped snapshot written under ``scratch`` (the worker's own temp folder)."""
    import sqlite_utils

    if knowledge.files is not None:
        for rel, data in knowledge.files.items():
            target = scratch / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        path = scratch / "knowledge.db"
    else:
        path = Path(knowledge.path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=30)
    return sqlite_utils.Database(conn)


# ---------------------------------------------------------------- the worker


class CheckWorker:
    """A Ray actor's state: the models, loaded once, and the read-only knowledge source (none
    for given documents). ``stages(db)`` builds (decomposer, verifier, searcher, language guard) on the worker —
    a function of the composition root (core/workbench.py: ``cluster_stages``), pickled by
    reference; ``db`` None builds no searcher."""

    def __init__(self, stages: Callable[[Any], tuple[Any, ...]], run: tuple[Any, ...],
                 path: str | None = None, files: dict[str, bytes] | None = None) -> None:
        """``run``: (k, mode, sources[, claims per batched NLI pass]) of the driver's pipeline.
        ``path`` (shared) or ``files`` (the snapshot: passed to the actor as a top-level
        object-store reference, which Ray resolves before the constructor runs)."""
        for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                     ("OMP_WAIT_POLICY", "PASSIVE")):
            os.environ.setdefault(k, v)
        # One actor holds one CPU (``num_cpus=ACTOR_CPUS``): its ONNX Runtime sessions get as many
        # threads, so N actors on N cores do not oversubscribe them (models/nli.py reads CLAIMSCOPE_THREADS).
        os.environ["CLAIMSCOPE_THREADS"] = str(ACTOR_CPUS)
        # A shipped snapshot needs a folder on the node; a shared path needs none.
        self._scratch = new_scratch() if files is not None else None
        self.db = open_knowledge(Knowledge(path, files), self._scratch) if path or files is not None else None
        # (decomposer, verifier, searcher[, language guard]): the guard when the run is English-only
        self.decomposer, self.verifier, self.searcher, *guard = stages(self.db)
        self.language_guard = guard[0] if guard else None
        self.given = given_verifier(self.verifier)  # every unit judged, as GivenPipeline judges
        self.k, self.mode, self.sources, *rest = run
        self.batch_claims = rest[0] if rest else BATCH_CLAIMS
        self.name = f"{os.uname().nodename}:{os.getpid()}"

    def check(self, job: AnswerJob, passages: Sequence[Any] | None = None) -> AnswerOutcome:
        """Decompose (unless the claims are given), retrieve and verify every checkable claim;
        with ``passages`` (the answer's given documents, resolved from the object store by Ray),
        every claim is judged against those instead of the knowledge source."""
        try:
            cited = None
            claims = job.claims
            if claims is None:
                cited = split_claims(job.text, self.decomposer, self.language_guard)
                claims = [(c.claim.idx, c.claim.text) for c in cited if c.claim.checkable]
            searcher, verifier = self.searcher, self.verifier
            if passages is not None:
                searcher, verifier = GivenSearcher(None, (), passages), self.given
            found = [(idx, text, searcher.search(text, k=self.k, mode=self.mode, sources=self.sources,
                                                 mark_sentences=False, rank_sentences=verifier.wants_sentence_ranks))
                     for idx, text in claims]
            # the answer's claims share batched NLI passes (Verifier.verify_many), in the local
            # batch's windows: the same batches give the same numbers
            verdicts: list[ClaimVerdict] = []
            sizes = window_sizes(self.batch_claims)
            while len(verdicts) < len(found):
                window = found[len(verdicts):len(verdicts) + next(sizes)]
                verdicts += verifier.verify_many([(text, passage_evidence(hits)) for _, text, hits in window])
            outcomes = [ClaimOutcome(idx, hits, v) for (idx, _, hits), v in zip(found, verdicts, strict=True)]
            return AnswerOutcome(job.key, cited, outcomes, worker=self.name)
        except Exception as exc:  # reported to the driver, which records it
            return AnswerOutcome(job.key, None, error=f"{type(exc).__name__}: {exc}", worker=self.name)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        """Remove the snapshot's folder: the driver calls this before it kills the pool, since a
        killed actor runs no finaliser (a crashed one's folder is swept by the next worker)."""
        if self.db is not None:
            self.db.conn.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


class EmbedWorker:
    """A Ray actor holding one embedding model; :func:`ray_embedder` sends it batches."""

    def __init__(self, spec: str | None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from models.embed import load_embedder

        self._model = load_embedder(spec)

    def dim(self) -> int:
        return self._model.dim

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return self._model.encode(texts, batch_size=batch_size)


# ---------------------------------------------------------------- Ray session


def init_ray(options: ClusterOptions):
    """Connect to ``options.address`` or start a local Ray with ``workers`` CPUs. On a local
    instance the workers inherit this environment; on a cluster every node has claimscope
    installed (docs/cluster.md)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
    try:
        if options.address:
            ray.init(address=options.address, **kwargs)
        else:  # a new instance ("local": never a cluster found on this machine); workers inherit the environment
            ray.init(address="local", num_cpus=options.workers, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise InputError(f"cannot reach a Ray cluster at {options.address or 'a new local instance'}: {exc}") from exc
    return ray


# ---------------------------------------------------------------- the driver


@dataclass
class _Line:
    key: int
    ext_id: str | None
    text: str
    run_id: int | None = None
    attempts: int = 0


class RayBatch:
    """Checks a batch of answers on a Ray actor pool; ``pipeline`` (the driver's, on the user's
    database) stores every result. Same run config as the local batch, so the two resume each
    other's runs. ``pipeline`` may be one per line instead: a RAG log, each line checked against
    its own given documents (:class:`~core.pipeline.given.GivenPipeline`, documents stored)."""

    def __init__(self, pipeline: Pipeline | Sequence[Pipeline], stages: Callable[[Any], tuple[Any, ...]],
                 options: ClusterOptions, listener: Listener | None = None,
                 on_done: Callable[[int, str | None, int], None] | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        pipes = [pipeline] if isinstance(pipeline, Pipeline) else list(pipeline)
        self.per_line = None if isinstance(pipeline, Pipeline) else pipes
        if self.per_line is not None and (not pipes or not all(isinstance(p, GivenPipeline) for p in pipes)):
            raise InputError("a pipeline per line is for lines with their own given documents")
        if pipes[0].mode not in CLUSTER_MODES:
            raise InputError(f"--ray runs bm25, dense, hybrid or hybrid-sentence retrieval, or given documents, "
                             f"not {pipes[0].mode}")
        self.pipeline, self.stages, self.options = pipes[0], stages, options
        self.listener, self.on_done = listener, on_done
        self.warn = warn or (lambda _m: None)
        self.failed: list[str] = []

    def _pipe(self, key: int) -> Pipeline:
        """The pipeline of line ``key``: its own (given documents per line) or the batch's."""
        return self.per_line[key] if self.per_line is not None else self.pipeline

    def _knowledge(self, ray) -> Knowledge:
        from core.ingest.index import db_file

        if isinstance(self.pipeline, GivenPipeline):
            return Knowledge()  # the given passages travel with the answers
        db = self.pipeline.db
        path = db_file(db)
        sources = self.pipeline.searcher.sources(self.pipeline.sources)  # unknown source: fail before Ray starts
        if self.pipeline.mode in ("dense", *HYBRID_MODES):  # build (or refresh) the FAISS files once, here
            self.pipeline.searcher.dense(sources)
        if self.pipeline.mode in ("bm25", *HYBRID_MODES):  # and the Tantivy indexes of large sources
            self.pipeline.searcher.bm25(sources)
        if self.options.ship:
            return Knowledge(files=ray.put(snapshot_files(path)))
        return Knowledge(path=str(path))

    def _actors(self, ray, knowledge: Knowledge) -> list:
        # max_restarts: a killed actor comes back (loading its models again); the driver
        # re-sends the answer it was working on (max_task_retries stays 0 so each failure is seen).
        remote = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=MAX_ATTEMPTS, max_task_retries=0)(CheckWorker)
        run = (self.pipeline.k, self.pipeline.mode, self.pipeline.sources, self.pipeline.batch_claims)
        self._held = knowledge  # keeps the snapshot in the object store while actors may restart
        return [remote.remote(self.stages, run, knowledge.path, knowledge.files) for _ in range(self.options.workers)]

    def run(self, lines: Sequence[tuple[str | None, str]]) -> list[int]:
        """Check every line; returns the run id per line (input order)."""
        db = self.pipeline.db
        if self.per_line is not None and len(self.per_line) != len(lines):
            raise InputError(f"{len(self.per_line)} pipelines for {len(lines)} lines")
        todo: list[_Line] = []
        ids: list[int | None] = [None] * len(lines)
        jobs: dict[int, AnswerJob] = {}
        for key, (ext_id, text) in enumerate(lines):
            prior = rq.find_run(db, ext_id, rq.input_hash(text), self._pipe(key).config())
            line = _Line(key, ext_id, text, prior.id if prior else None)
            if prior is not None and prior.status == "done":
                ids[key] = prior.id
                if self.on_done:
                    self.on_done(prior.id, ext_id, len(rq.run_claims(db, prior.id)))
                continue
            jobs[key] = self._job(line)
            todo.append(line)
        if not todo:
            return [i for i in ids if i is not None]
        ray = init_ray(self.options)
        actors = self._actors(ray, self._knowledge(ray))
        given: dict[int, Any] = {}  # id of a given-documents pipeline → its passages in the object store
        by_key = {line.key: line for line in todo}
        queue = list(todo)
        # object ref → (line key, actor index); key None: a ping to an actor Ray is restarting,
        # which gets work again only once it answers (its models loaded afresh).
        running: dict[Any, tuple[int | None, int]] = {}
        free = list(range(len(actors)))
        alive = set(free)
        while (queue and alive) or running:
            while queue and free:
                line, a = queue.pop(0), free.pop(0)
                line.attempts += 1
                running[actors[a].check.remote(jobs[line.key], self._passages(ray, line.key, given))] = (line.key, a)
            ready, _ = ray.wait(list(running), num_returns=1)
            ref = ready[0]
            key, a = running.pop(ref)
            failure: Exception | None = None
            try:
                outcome = ray.get(ref)
            except ray.exceptions.RayError as exc:  # the actor died (killed, out of memory, node lost)
                failure = exc
                outcome = AnswerOutcome(key or 0, None, error=f"worker lost: {type(exc).__name__}")
            if failure is None:
                free.append(a)
            elif key is None and isinstance(failure, ray.exceptions.ActorDiedError):
                alive.discard(a)  # out of restarts: the pool shrinks
            else:
                if key is None:
                    time.sleep(0.5)  # still restarting: ask again shortly
                running[actors[a].pid.remote()] = (None, a)
            if key is None:
                continue
            line = by_key[key]
            if self.per_line is not None and (outcome.error is None or line.attempts >= MAX_ATTEMPTS):
                given.pop(id(self._pipe(key)), None)  # a line's own passages leave the object store with it
            if outcome.error is None:
                self._store(line, outcome)
                ids[key] = line.run_id
                if self.on_done:
                    self.on_done(line.run_id, line.ext_id, -1)
                continue
            self._record_failure(line, outcome.error)
            if line.attempts < MAX_ATTEMPTS:
                jobs[key] = self._job(line)  # a partly stored run sends only its pending claims
                queue.append(line)
            else:
                self.failed.append(line.ext_id or str(key))
        self.failed.extend(line.ext_id or str(line.key) for line in queue)  # no worker left for these
        # snapshot folders removed while the actors still live (a dead one's is swept later)
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get([actor.close.remote() for actor in actors], timeout=30)
        for actor in actors:
            ray.kill(actor)
        ray.shutdown()  # disconnect (and stop a local instance) before the caller prints results
        return [i for i in ids if i is not None]

    def _passages(self, ray, key: int, given: dict[int, Any]) -> Any:
        """An object-store reference to line ``key``'s given passages, put there when the line is
        first sent (None for a batch over a knowledge source). Lines that share a document set
        (``--against``) share one copy; a line's own set is dropped once the line is done, so a
        large RAG log never holds every line's passages in the store at once. Ray resolves a
        reference passed as a top-level argument before the worker's method runs."""
        pipe = self._pipe(key)
        if not isinstance(pipe, GivenPipeline):
            return None
        if id(pipe) not in given:
            given[id(pipe)] = ray.put(pipe.searcher.passages)
        return given[id(pipe)]

    def _job(self, line: _Line) -> AnswerJob:
        """Everything the line still needs: the whole answer, or a stored run's pending claims."""
        claims = rq.run_claims(self.pipeline.db, line.run_id) if line.run_id is not None else []
        if not claims:
            return AnswerJob(line.key, line.text, None)
        return AnswerJob(line.key, line.text, [(c.idx, c.text) for c in claims if c.checkable and c.status != "done"])

    def _store(self, line: _Line, outcome: AnswerOutcome) -> None:
        """The driver's writes for one answer: the run and its claims (one transaction, if new),
        each claim's result (one transaction each), the scores."""
        pipe = self._pipe(line.key)
        if line.run_id is None or (outcome.cited is not None and not rq.run_claims(pipe.db, line.run_id)):
            if line.run_id is None:
                line.run_id = pipe.start_decomposed(line.text, outcome.cited or [], line.ext_id, self.listener)
            else:  # a run recorded as failed before its claims were known
                self._add_claims(pipe, line.run_id, outcome.cited or [])
        claims = {c.idx: c for c in rq.run_claims(pipe.db, line.run_id)}
        with write_tx(pipe.db):
            rq.set_run_status(pipe.db, line.run_id, "running")
        for o in outcome.outcomes:
            claim = claims[o.idx]
            if claim.status == "done":
                continue  # stored meanwhile (never twice)
            pipe.store_result(line.run_id, claim.id, o.idx, claim.text, o.hits, o.verdict, self.listener)
        pipe.score(line.run_id, self.listener)

    def _add_claims(self, pipe: Pipeline, run_id: int, cited: list[CitedClaim]) -> None:
        from core.pipeline.events import EventKind

        with write_tx(pipe.db):
            rq.add_manifest(pipe.db, run_id, pipe._manifests(), asdict(pipe.verifier.t))
            rq.add_event(pipe.db, run_id, EventKind.RUN_STARTED, {"claims": len(cited), "config": pipe.config()})
            for c in cited:
                cid = rq.add_claim(pipe.db, run_id, c.claim.idx, c.claim.text, c.claim.span, c.claim.checkable,
                                   c.claim.note, c.claim.context, c.citations)
                rq.add_event(pipe.db, run_id, EventKind.CLAIM_FOUND,
                             {"idx": c.claim.idx, "text": c.claim.text, "span": list(c.claim.span)}, cid)

    def _record_failure(self, line: _Line, message: str) -> None:
        """A failed answer is stored, never dropped: its run (created now if the worker failed
        before the claims were known, with no claims) gets status ``error`` and an error event,
        so a later invocation (or the retry below) finds it by id and finishes it."""
        from core.pipeline.events import EventKind

        pipe = self._pipe(line.key)
        with write_tx(pipe.db):
            if line.run_id is None:
                line.run_id = rq.create_run(pipe.db, line.text, pipe.config())
                rq.set_external_id(pipe.db, line.run_id, line.ext_id)
            rq.add_event(pipe.db, line.run_id, EventKind.ERROR, {"message": message, "attempt": line.attempts})
            rq.set_run_status(pipe.db, line.run_id, "error")
        self.warn(f"input {line.ext_id}: {message} (attempt {line.attempts} of {MAX_ATTEMPTS})")


# ---------------------------------------------------------------- embedding on Ray


class RayEmbedder:
    """The :class:`~models.embed.Embedder` protocol over a pool of Ray embedding actors:
    ``encode`` cuts the texts into batches, runs them on the actors (each loaded the model
    once) and puts the vectors back in order. The driver keeps writing (core/ingest/index.py
    is unchanged: it only calls ``encode``)."""

    def __init__(self, spec: str | None, options: ClusterOptions, batch: int = 512) -> None:
        from models.registry import resolve_embedder

        self.ref = resolve_embedder(spec)  # the manifest without loading the model here
        ray = init_ray(options)
        remote = ray.remote(num_cpus=1, max_restarts=MAX_ATTEMPTS, max_task_retries=MAX_ATTEMPTS)(EmbedWorker)
        self._ray, self._batch = ray, batch
        self._actors = [remote.remote(spec) for _ in range(options.workers)]
        self._dim = int(ray.get(self._actors[0].dim.remote()))

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str], batch_size: int = 32,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        ray = self._ray
        refs = {}
        for n, start in enumerate(range(0, len(texts), self._batch)):
            chunk = list(texts[start:start + self._batch])
            refs[self._actors[n % len(self._actors)].encode.remote(chunk, batch_size)] = (start, len(chunk))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            start, n = refs[ready[0]]
            out[start:start + n] = ray.get(ready[0])
            if progress:
                progress(n)
        return out

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
