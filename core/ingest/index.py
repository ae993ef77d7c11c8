"""Indexing a knowledge source: chunk, embed, store, and keep the FAISS cache in step.

Re-adding a source re-indexes only what changed: each document carries a content hash;
unchanged documents keep their passages and vectors, changed ones are replaced, and
documents no longer in the file are removed. Parsing, sentence splitting and embedding all
happen *before* the one write transaction, so a failure (or Ctrl+C) at any point leaves the
database exactly as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlite_utils

from core.errors import InputError, NotFoundError
from core.ingest.chunk import chunk
from models.bm25_index import TANTIVY_MIN_PASSAGES, BM25Index, build_bm25, read_stamp, remove_bm25, stamp_for
from models.embed import Embedder
from models.nlp import SentenceSplitter
from models.vector_index import EXACT_LIMIT, IVF_TRAIN_PER_CELL, VectorIndex, atomic_write_text, build_ivf, ivf_cells
from store import sources as sq
from store.db import write_tx
from store.records import DocumentRecord, PassageRecord, SourceInfo

# (stage label, items just finished, total items or None)
Progress = Callable[[str, int, int | None], None]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class IndexReport:
    source: str
    added: int
    updated: int
    removed: int
    unchanged: int
    passages_added: int
    passages_embedded: int  # the rest came from the embedding cache
    seconds: float
    sentences_embedded: int = 0  # sentence vectors this call added (ensure_sentence_vectors)


def check_source_name(name: str) -> None:
    if not _NAME.match(name):
        raise InputError(
            f"invalid source name {name!r}: use 1–64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )


def content_hash(doc: DocumentRecord) -> str:
    payload = json.dumps([doc.title, doc.text, doc.url, doc.date, doc.meta, doc.sentences], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def passage_embedding_text(title: str, text: str) -> str:
    """What the dense retriever embeds for a passage: its document title, then its text."""
    return f"{title}. {text}" if title else text


def add_source(
    db: sqlite_utils.Database,
    name: str,
    documents: list[DocumentRecord],
    *,
    fmt: str,
    path: str | None,
    embedder: Embedder,
    splitter: SentenceSplitter,
    attribution: str | None = None,
    licence: str | None = None,
    chunk_words: int = 128,
    chunk_overlap: int = 32,
    progress: Progress | None = None,
    bm25_min: int = TANTIVY_MIN_PASSAGES,
    sentence_vectors: bool = True,
) -> IndexReport:
    """Index ``documents`` as source ``name`` (creating or incrementally updating it).
    Sources above ``bm25_min`` passages also get (or keep current) a Tantivy BM25 index;
    ``sentence_vectors`` embeds every sentence too (:func:`ensure_sentence_vectors`)."""
    check_source_name(name)
    if not documents:
        raise InputError(f"source {name!r} has no documents")
    t0 = time.perf_counter()
    report = progress or (lambda *_: None)
    # Optimistic concurrency: plan and prepare outside the write lock, then write only if what
    # is stored is still what the plan was made from. Another process indexing the same source
    # at the same moment (two `source add`, or the TUI and the CLI) makes the check fail; the
    # plan is then made again from the new state (cheap: sentences are kept on the documents,
    # vectors come back from the embedding cache the other process filled).
    for _attempt in range(MAX_PLAN_ATTEMPTS):
        snapshot = _stored_state(db, name)
        plan = _plan(snapshot, documents, chunk_words, chunk_overlap)
        chunked, vectors, hashes, embedded = _prepare(db, plan.todo, embedder, splitter, chunk_words, chunk_overlap, report)
        model = embedder.ref.model_id
        with write_tx(db):
            if _stored_state(db, name) != snapshot:
                continue  # someone else wrote this source meanwhile: plan again
            source_id = sq.upsert_source(
                db,
                name=name,
                format=fmt,
                path=path,
                attribution=attribution,
                licence=licence,
                chunk_words=chunk_words,
                chunk_overlap=chunk_overlap,
            )
            sq.delete_documents(db, plan.replaced + plan.removed)
            passage_ids: list[int] = []
            for doc, h, passages in chunked:
                passage_ids.extend(sq.insert_document(db, source_id, doc, h, passages))
            sq.insert_embeddings(db, model, passage_ids, vectors)
            sq.cache_embeddings(db, model, hashes, vectors)
            sq.refresh_source_counts(db, source_id, time.perf_counter() - t0)
        break
    else:
        raise InputError(f"source {name!r} kept changing while it was being indexed; try again")
    ensure_embeddings(db, name, embedder, progress)
    sentences_embedded = ensure_sentence_vectors(db, name, embedder, progress) if sentence_vectors else 0
    info = sq.get_source(db, name)
    assert info is not None
    vector_index(db, info, model)
    if bm25_index(db, info, bm25_min) is None:  # at or below the threshold: FTS5, no leftover index
        with contextlib.suppress(InputError):  # an in-memory database has no folder
            remove_bm25(bm25_dir(db) / name)
    seconds = time.perf_counter() - t0
    with write_tx(db):
        sq.refresh_source_counts(db, info.id, seconds)
    return IndexReport(
        name,
        added=len(plan.todo) - len(plan.replaced),
        updated=len(plan.replaced),
        removed=len(plan.removed),
        unchanged=len(documents) - len(plan.todo),
        passages_added=len(passage_ids),
        passages_embedded=embedded,
        seconds=seconds,
        sentences_embedded=sentences_embedded,
    )


MAX_PLAN_ATTEMPTS = 5


@dataclass(frozen=True)
class _Plan:
    todo: list[tuple[DocumentRecord, str]]  # documents to (re-)index, with their content hash
    replaced: list[int]  # stored document ids the todo replaces
    removed: list[int]  # stored document ids no longer in the input


def _stored_state(db: sqlite_utils.Database, name: str) -> tuple[tuple[int, int] | None, dict[str, tuple[int, str]]]:
    """What indexing depends on: the source's chunk settings and its stored document hashes."""
    existing = sq.get_source(db, name)
    if existing is None:
        return None, {}
    return (existing.chunk_words, existing.chunk_overlap), sq.document_hashes(db, existing.id)


def _plan(snapshot, documents: list[DocumentRecord], chunk_words: int, chunk_overlap: int) -> _Plan:
    chunking, stored = snapshot
    rechunk = chunking is not None and chunking != (chunk_words, chunk_overlap)
    todo = []
    for doc in documents:
        h = content_hash(doc)
        if rechunk or stored.get(doc.ext_id, (None, None))[1] != h:
            todo.append((doc, h))
    incoming = {d.ext_id for d in documents}
    replaced = [stored[d.ext_id][0] for d, _ in todo if d.ext_id in stored]
    removed = [doc_id for ext, (doc_id, _) in stored.items() if ext not in incoming]
    return _Plan(todo, replaced, removed)


def _prepare(db, todo, embedder: Embedder, splitter: SentenceSplitter, chunk_words: int, chunk_overlap: int, report):
    """Sentences, passages and vectors for the documents to index; nothing is written."""
    # 1. sentences (spaCy) for documents that do not bring their own
    need = [d for d, _ in todo if d.sentences is None]
    if need:
        report("sentences", 0, len(need))
        for start in range(0, len(need), 256):
            batch = need[start : start + 256]
            for doc, spans in zip(batch, splitter.split(d.text for d in batch), strict=True):
                doc.sentences = spans or [(0, len(doc.text))]
            report("sentences", len(batch), len(need))
    # 2. passages
    chunked: list[tuple[DocumentRecord, str, list[PassageRecord]]] = [
        (d, h, chunk(d.text, d.sentences or [(0, len(d.text))], chunk_words, chunk_overlap)) for d, h in todo
    ]
    # 3. vectors (from the cache where the same text was embedded before)
    texts = [passage_embedding_text(d.title, p.text) for d, _, ps in chunked for p in ps]
    vectors, hashes, embedded = embed_with_cache(db, embedder, texts, report)
    return chunked, vectors, hashes, embedded


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_with_cache(
    db: sqlite_utils.Database, embedder: Embedder, texts: list[str], report: Progress
) -> tuple[np.ndarray, list[str], int]:
    """Vectors for ``texts``: cached ones read back, the rest embedded. Returns (vectors,
    text hashes, how many were embedded). Nothing is written here (the caller's transaction does)."""
    model = embedder.ref.model_id
    hashes = [text_sha256(t) for t in texts]
    cached = sq.cached_embeddings(db, model, list(dict.fromkeys(hashes)))
    todo = [i for i, h in enumerate(hashes) if h not in cached]
    report("embeddings", 0, len(todo))
    fresh = embedder.encode([texts[i] for i in todo], progress=lambda n: report("embeddings", n, len(todo)))
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for row, i in enumerate(todo):
        vectors[i] = fresh[row]
    for i, h in enumerate(hashes):
        if h in cached:
            vectors[i] = cached[h]
    return vectors, hashes, len(todo)


def ensure_embeddings(
    db: sqlite_utils.Database, name: str, embedder: Embedder, progress: Progress | None = None
) -> int:
    """Embed every passage of a source that has no vector for this embedder (e.g. after the
    user switched embedding models). Returns how many were embedded."""
    info = require_source(db, name)
    model = embedder.ref.model_id
    missing = sq.passages_without_embedding(db, info.id, model)
    if not missing:
        return 0
    report = progress or (lambda *_: None)
    texts = [passage_embedding_text(t, x) for _, t, x in missing]
    vecs, hashes, _ = embed_with_cache(db, embedder, texts, report)
    with write_tx(db):
        sq.insert_embeddings(db, model, [pid for pid, _, _ in missing], vecs)
        sq.cache_embeddings(db, model, hashes, vecs)
    return len(missing)


SENTENCE_BATCH = 4096  # sentences embedded, then committed, per transaction


def ensure_sentence_vectors(
    db: sqlite_utils.Database, name: str, embedder: Embedder, progress: Progress | None = None,
    batch: int = SENTENCE_BATCH,
) -> int:
    """Embed every sentence of a source that has no vector for this embedder yet, each sentence
    alone (the text a search cuts: :func:`store.records.cut_sentences`), into ``sentence_vectors``
    by (model, text hash), float16 (store/migrations.py, version 9). Returns how many were embedded.

    Why: ``hybrid-sentence`` scores the sentences of the top 20 passages of every claim by their
    cosine to it (core/retrieve/sentence_score.py), and ``search`` marks each hit's best
    sentence the same way. Embedded at query time that cost about 3 s on a 19-claim answer;
    stored here, a search reads them back. Late chunking (vectors pooled from the passage pass)
    would be free but lost the stage's gain (docs/benchmarks.md, session 9), so each sentence
    is embedded on its own, once (a sentence shared by overlapping passages or by another source
    is stored once). The vectors are derived data: the pass runs after the passages are
    committed, in batches of ``batch``, each its own transaction, in passage order, so an
    interrupted pass keeps what it finished, and a sentence without a stored vector is embedded
    by the search that needs it."""
    info = require_source(db, name)
    model = embedder.ref.model_id
    report = progress or (lambda *_: None)
    seen: set[str] = set()
    todo: list[tuple[str, str]] = []  # (hash, text) in passage order
    for texts in sq.iter_passage_sentences(db, info.id):
        fresh: dict[str, str] = {}
        for t in texts:
            h = text_sha256(t)
            if h not in seen:
                seen.add(h)
                fresh[h] = t
        have = sq.sentence_vector_hashes(db, model, list(fresh))
        todo.extend((h, t) for h, t in fresh.items() if h not in have)
    if not todo:
        return 0
    done = 0
    report("sentence vectors", 0, len(todo))
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        vecs = embedder.encode([t for _, t in part], progress=lambda n: report("sentence vectors", n, len(todo)))
        with write_tx(db):
            sq.store_sentence_vectors(db, model, [h for h, _ in part], vecs)
        done += len(part)
    return done


def sentence_vectors(db: sqlite_utils.Database, embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Vectors of the sentence ``texts``: as stored by :func:`ensure_sentence_vectors`, the rest
    embedded now (nothing is written: a search never writes)."""
    hashes = [text_sha256(t) for t in texts]
    stored = sq.stored_sentence_vectors(db, embedder.ref.model_id, hashes)
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    rest = [i for i, h in enumerate(hashes) if h not in stored]
    if rest:
        out[rest] = embedder.encode([texts[i] for i in rest])
    for i, h in enumerate(hashes):
        if h in stored:
            out[i] = stored[h]
    return out


def sentence_vectors_missing(db: sqlite_utils.Database, name: str, model: str) -> bool:
    """Whether a source's sentence vectors for ``model`` look unbuilt: the sentences of its newest
    passage lack a stored vector. :func:`ensure_sentence_vectors` writes in passage order, so this
    one cheap look tells a finished pass from none or an interrupted one (a run decides from it
    whether to complete the pass; a wrong answer costs only speed)."""
    info = require_source(db, name)
    texts = sq.last_passage_sentences(db, info.id)
    hashes = list(dict.fromkeys(text_sha256(t) for t in texts))
    return len(sq.sentence_vector_hashes(db, model, hashes)) < len(hashes)


def require_source(db: sqlite_utils.Database, name: str) -> SourceInfo:
    info = sq.get_source(db, name)
    if info is None:
        known = ", ".join(s.name for s in sq.list_sources(db)) or "none yet"
        raise NotFoundError(f"no source named {name!r} (sources: {known}); add it with `claimscope source add`")
    return info


def remove_source(db: sqlite_utils.Database, name: str) -> None:
    info = require_source(db, name)
    used = db.execute(
        "SELECT count(*) FROM evidence e JOIN passages p ON p.id = e.passage_id WHERE p.source_id = ?",
        [info.id],
    ).fetchone()[0]
    if used:
        raise InputError(
            f"source {name!r} is evidence in {used} stored claim–passage pairs; "
            "delete those runs first so no stored run loses its evidence"
        )
    with write_tx(db):
        sq.delete_source(db, info.id)
    shutil.rmtree(index_dir(db) / name, ignore_errors=True)
    remove_bm25(bm25_dir(db) / name)


def db_file(db: sqlite_utils.Database) -> Path:
    row = db.execute("PRAGMA database_list").fetchone()
    if not row or not row[2]:
        raise InputError("vector indexes need a database file (not an in-memory database)")
    return Path(row[2])


def index_dir(db: sqlite_utils.Database) -> Path:
    """FAISS files live beside the database: ``<db>.faiss/<source>/``."""
    f = db_file(db)
    return f.with_name(f.name + ".faiss")


def _slug(model: str) -> str:
    return hashlib.sha1(model.encode()).hexdigest()[:12]


def vector_index(
    db: sqlite_utils.Database, source: SourceInfo, model: str, kind: str = "auto"
) -> VectorIndex | None:
    """The FAISS index of a source for one embedding model, rebuilt if stale or missing."""
    folder = index_dir(db) / source.name
    path = folder / f"{_slug(model)}.{kind}.faiss"
    meta_path = path.with_suffix(".json")
    fingerprint = sq.embedding_fingerprint(db, source.id, model)
    if path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("fingerprint") == fingerprint and meta.get("model") == model:
                return VectorIndex.load(path, meta["kind"])
        except (OSError, ValueError, RuntimeError):
            pass  # unreadable cache: rebuild it below
    n = int(fingerprint.split(":")[0])
    if n == 0:
        return None
    if kind == "ivf" or (kind == "auto" and n > EXACT_LIMIT):
        index = _build_ivf(db, source, model, path, n)
        atomic_write_text(meta_path, json.dumps({"fingerprint": fingerprint, "model": model, "kind": "ivf", "n": n}))
        return index
    ids, vecs = sq.load_embeddings(db, source.id, model)
    index = VectorIndex.build(ids, vecs, kind)
    index.save(path)
    atomic_write_text(meta_path, json.dumps({"fingerprint": fingerprint, "model": model, "kind": index.kind, "n": index.size}))
    return index


def _build_ivf(db: sqlite_utils.Database, source: SourceInfo, model: str, path: Path, n: int) -> VectorIndex:
    """A large source's IVF index (models/vector_index.py), built from the stored vectors in
    batches: the training sample is every (n / sample)-th vector, then 50,000 rows at a time."""
    cells = ivf_cells(n)
    step = max(1, n // (IVF_TRAIN_PER_CELL * cells))
    sample = np.concatenate([vecs[::step].copy() for _ids, vecs in sq.iter_embeddings(db, source.id, model)])
    path.parent.mkdir(parents=True, exist_ok=True)
    return build_ivf(path, sq.iter_embeddings(db, source.id, model), n, sample.shape[1], sample, cells)


def bm25_dir(db: sqlite_utils.Database) -> Path:
    """Tantivy BM25 indexes live beside the database: ``<db>.tantivy/<source>/``."""
    f = db_file(db)
    return f.with_name(f.name + ".tantivy")


def bm25_index(
    db: sqlite_utils.Database, source: SourceInfo, threshold: int = TANTIVY_MIN_PASSAGES
) -> BM25Index | None:
    """The Tantivy BM25 index of a source above ``threshold`` passages (models/bm25_index.py),
    rebuilt from the stored passages if its stamp (passage set, analyzer, BM25 constants) is not
    what is stored now, or it is missing; None for a smaller source (FTS5 serves it; searching
    never deletes an index, ``source add`` removes a leftover one). If the index cannot be (re)built — a
    read-only folder, an in-memory database — the source is searched with FTS5 and a warning
    says so: nothing is lost, the index is derived from the store."""
    if source.n_passages <= threshold:
        return None
    try:
        path = bm25_dir(db) / source.name
        stamp = stamp_for(sq.passage_fingerprint(db, source.id))
        if read_stamp(path) == stamp:
            try:
                return BM25Index.open(path)
            except (OSError, ValueError):
                pass  # unreadable: rebuild it below
        return build_bm25(path, sq.iter_passage_texts(db, source.id), stamp)
    except (OSError, ValueError, InputError, ImportError) as exc:
        warnings.warn(
            f"the Tantivy BM25 index of source {source.name!r} could not be built ({exc}); "
            "searching it with SQLite FTS5 instead (slower on large sources)",
            RuntimeWarning, stacklevel=2,
        )
        return None
