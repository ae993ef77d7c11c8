"""Typed reads and writes for knowledge sources, documents, passages and embeddings."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import sqlite_utils

from store.records import DocumentLayout, DocumentRecord, PassageRecord, SourceInfo, StoredPassage, cut_sentences

_SOURCE_COLS = (
    "id, name, format, path, attribution, licence, chunk_words, chunk_overlap, "
    "n_documents, n_passages, index_seconds, updated_at"
)


def get_source(db: sqlite_utils.Database, name: str) -> SourceInfo | None:
    row = db.execute(f"SELECT {_SOURCE_COLS} FROM sources WHERE name = ?", [name]).fetchone()
    return SourceInfo(*row) if row else None


def list_sources(db: sqlite_utils.Database) -> list[SourceInfo]:
    """The user's knowledge sources; reserved ``_``-sources (the documents given to
    ``check --against``, core/pipeline/given.py) are not searchable and not listed."""
    rows = db.execute(f"SELECT {_SOURCE_COLS} FROM sources WHERE substr(name, 1, 1) != '_' ORDER BY name").fetchall()
    return [SourceInfo(*r) for r in rows]


def upsert_source(
    db: sqlite_utils.Database,
    *,
    name: str,
    format: str,
    path: str | None,
    attribution: str | None,
    licence: str | None,
    chunk_words: int,
    chunk_overlap: int,
) -> int:
    """Create the source row or update its descriptive fields; returns its id."""
    db.execute(
        """INSERT INTO sources(name, format, path, attribution, licence, chunk_words, chunk_overlap)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(name) DO UPDATE SET format = excluded.format, path = excluded.path,
             attribution = excluded.attribution, licence = excluded.licence,
             chunk_words = excluded.chunk_words, chunk_overlap = excluded.chunk_overlap,
             updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')""",
        [name, format, path, attribution, licence, chunk_words, chunk_overlap],
    )
    return db.execute("SELECT id FROM sources WHERE name = ?", [name]).fetchone()[0]


def refresh_source_counts(db: sqlite_utils.Database, source_id: int, index_seconds: float | None) -> None:
    db.execute(
        """UPDATE sources SET
             n_documents = (SELECT count(*) FROM documents WHERE source_id = :id),
             n_passages = (SELECT count(*) FROM passages WHERE source_id = :id),
             index_seconds = coalesce(:secs, index_seconds),
             updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
           WHERE id = :id""",
        {"id": source_id, "secs": index_seconds},
    )


def delete_source(db: sqlite_utils.Database, source_id: int) -> None:
    """Delete a source with its documents, passages, FTS rows and embeddings.

    Passages are deleted explicitly (not only by cascade) so the FTS trigger fires for each.
    Evidence rows of past runs that point at these passages block the delete through
    their foreign key: a run's evidence is never silently lost.
    """
    db.execute(
        "DELETE FROM embeddings WHERE passage_id IN (SELECT id FROM passages WHERE source_id = ?)",
        [source_id],
    )
    db.execute("DELETE FROM passages WHERE source_id = ?", [source_id])
    db.execute("DELETE FROM documents WHERE source_id = ?", [source_id])
    db.execute("DELETE FROM sources WHERE id = ?", [source_id])


def document_hashes(db: sqlite_utils.Database, source_id: int) -> dict[str, tuple[int, str]]:
    """ext_id → (document id, content hash) for every stored document of a source."""
    rows = db.execute(
        "SELECT ext_id, id, content_hash FROM documents WHERE source_id = ?", [source_id]
    ).fetchall()
    return {ext: (doc_id, h) for ext, doc_id, h in rows}


def delete_documents(db: sqlite_utils.Database, doc_ids: Sequence[int]) -> None:
    for chunk_start in range(0, len(doc_ids), 500):
        ids = list(doc_ids[chunk_start : chunk_start + 500])
        marks = ",".join("?" * len(ids))
        db.execute(
            f"DELETE FROM embeddings WHERE passage_id IN "
            f"(SELECT id FROM passages WHERE document_id IN ({marks}))",
            ids,
        )
        db.execute(f"DELETE FROM passages WHERE document_id IN ({marks})", ids)
        db.execute(f"DELETE FROM documents WHERE id IN ({marks})", ids)


def insert_document(
    db: sqlite_utils.Database,
    source_id: int,
    doc: DocumentRecord,
    content_hash: str,
    passages: Sequence[PassageRecord],
) -> list[int]:
    """Insert one document and its passages; returns the new passage ids in order."""
    cur = db.execute(
        """INSERT INTO documents(source_id, ext_id, title, url, date, text, meta, content_hash)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        [
            source_id,
            doc.ext_id,
            doc.title,
            doc.url,
            doc.date,
            doc.text,
            json.dumps(doc.meta) if doc.meta else None,
            content_hash,
        ],
    )
    doc_id = cur.lastrowid
    ids = []
    for p in passages:
        cur = db.execute(
            """INSERT INTO passages(document_id, source_id, idx, title, text, char_start,
                 char_end, first_sentence, sentences) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                doc_id,
                source_id,
                p.idx,
                doc.title,
                p.text,
                p.char_start,
                p.char_end,
                p.first_sentence,
                json.dumps(p.sentences),
            ],
        )
        ids.append(cur.lastrowid)
    return ids


def insert_embeddings(
    db: sqlite_utils.Database, model: str, passage_ids: Sequence[int], vectors: np.ndarray
) -> None:
    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    db.conn.executemany(
        "INSERT OR REPLACE INTO embeddings(passage_id, model, vector) VALUES (?, ?, ?)",
        ((pid, model, vecs[i].tobytes()) for i, pid in enumerate(passage_ids)),
    )


def _rows_by_hash(db: sqlite_utils.Database, table: str, columns: str, model: str, hashes: Sequence[str]) -> list[tuple]:
    """``columns`` of the rows of a vector table (``embedding_cache`` or ``sentence_vectors``)
    for ``model`` and these text hashes, 500 hashes a query (SQLite's bound-variable limit)."""
    rows: list[tuple] = []
    for start in range(0, len(hashes), 500):
        chunk = list(hashes[start : start + 500])
        rows.extend(db.execute(
            f"SELECT {columns} FROM {table} WHERE model = ? AND text_sha256 IN ({','.join('?' * len(chunk))})",
            [model, *chunk],
        ).fetchall())
    return rows


def cached_embeddings(db: sqlite_utils.Database, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """text sha256 → vector for the hashes the cache holds for ``model``."""
    return {h: np.frombuffer(v, dtype=np.float32)
            for h, v in _rows_by_hash(db, "embedding_cache", "text_sha256, vector", model, hashes)}


def cache_embeddings(db: sqlite_utils.Database, model: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    db.conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache(model, text_sha256, vector) VALUES (?, ?, ?)",
        ((model, h, vecs[i].tobytes()) for i, h in enumerate(hashes)),
    )


def stored_sentence_vectors(db: sqlite_utils.Database, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """text sha256 → float32 vector of the sentences stored for ``model`` (migration 9)."""
    return {h: np.frombuffer(v, dtype=np.float16).astype(np.float32)
            for h, v in _rows_by_hash(db, "sentence_vectors", "text_sha256, vector", model, hashes)}


def sentence_vector_hashes(db: sqlite_utils.Database, model: str, hashes: Sequence[str]) -> set[str]:
    """The hashes among ``hashes`` that have a stored sentence vector for ``model`` (none read)."""
    return {r[0] for r in _rows_by_hash(db, "sentence_vectors", "text_sha256", model, hashes)}


def store_sentence_vectors(db: sqlite_utils.Database, model: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
    """Sentence vectors as float16 (migration 9 says why); a hash already stored is kept."""
    vecs = np.ascontiguousarray(vectors, dtype=np.float16)
    db.conn.executemany(
        "INSERT OR IGNORE INTO sentence_vectors(model, text_sha256, vector) VALUES (?, ?, ?)",
        ((model, h, vecs[i].tobytes()) for i, h in enumerate(hashes)),
    )


def passages_without_embedding(db: sqlite_utils.Database, source_id: int, model: str) -> list[tuple[int, str, str]]:
    """(id, title, text) of passages of a source that have no vector for ``model``."""
    return db.execute(
        """SELECT p.id, p.title, p.text FROM passages p
           LEFT JOIN embeddings e ON e.passage_id = p.id AND e.model = ?
           WHERE p.source_id = ? AND e.passage_id IS NULL ORDER BY p.id""",
        [model, source_id],
    ).fetchall()


def load_embeddings(db: sqlite_utils.Database, source_id: int, model: str) -> tuple[np.ndarray, np.ndarray]:
    """All (passage ids, vectors) of a source for one model, ordered by passage id."""
    rows = db.execute(
        """SELECT e.passage_id, e.vector FROM embeddings e JOIN passages p ON p.id = e.passage_id
           WHERE p.source_id = ? AND e.model = ? ORDER BY e.passage_id""",
        [source_id, model],
    ).fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vecs = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    return ids, vecs


def iter_embeddings(
    db: sqlite_utils.Database, source_id: int, model: str, batch: int = 50_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`load_embeddings` in batches of ``batch`` rows (keyset pagination on passage id),
    so a large source's index is built without holding every vector (core/ingest/index.py)."""
    last = -1
    while True:
        rows = db.execute(
            """SELECT e.passage_id, e.vector FROM embeddings e JOIN passages p ON p.id = e.passage_id
               WHERE p.source_id = ? AND e.model = ? AND e.passage_id > ? ORDER BY e.passage_id LIMIT ?""",
            [source_id, model, last, batch],
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield (np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
               np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]))


def embedding_fingerprint(db: sqlite_utils.Database, source_id: int, model: str) -> str:
    """A cheap identity of a source's embedded passage set, to tell if an index is stale."""
    row = db.execute(
        """SELECT count(*), coalesce(sum(e.passage_id), 0), coalesce(max(e.passage_id), 0)
           FROM embeddings e JOIN passages p ON p.id = e.passage_id
           WHERE p.source_id = ? AND e.model = ?""",
        [source_id, model],
    ).fetchone()
    return f"{row[0]}:{row[1]}:{row[2]}"


def get_passages(db: sqlite_utils.Database, ids: Iterable[int]) -> dict[int, StoredPassage]:
    ids = list(ids)
    out: dict[int, StoredPassage] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"""SELECT p.id, p.document_id, s.name, d.ext_id, p.title, d.url, p.text,
                       p.char_start, p.sentences
                FROM passages p JOIN documents d ON d.id = p.document_id
                JOIN sources s ON s.id = p.source_id WHERE p.id IN ({marks})""",
            chunk,
        ).fetchall()
        for r in rows:
            spans = tuple(tuple(s) for s in json.loads(r[8]))
            out[r[0]] = StoredPassage(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], spans)
    return out


def document_layouts(db: sqlite_utils.Database, document_ids: Iterable[int]) -> dict[int, DocumentLayout]:
    """Each document's :class:`DocumentLayout`: its word count and where its sentences start.
    Read for the evidence-sentence head (core/retrieve/sentence_head.py), which needs a
    sentence's position in its whole document, not only in its passage."""
    ids = list(dict.fromkeys(document_ids))
    out: dict[int, DocumentLayout] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        words = dict(db.execute(f"SELECT id, text FROM documents WHERE id IN ({marks})", chunk).fetchall())
        starts: dict[int, set[int]] = {i: set() for i in words}
        for doc, spans in db.execute(f"SELECT document_id, sentences FROM passages WHERE document_id IN ({marks})",
                                     chunk).fetchall():
            starts[doc].update(s for s, _ in json.loads(spans))
        for doc, text in words.items():
            out[doc] = DocumentLayout(len(text.split()), tuple(sorted(starts[doc])))
    return out


# BM25 weight of a passage's title column against its text column (1.0). Measured and kept: on
# SciFact train 1.0 / 2.0 gave default-mode doc R@5 .942 / .946 against .935, but on dev 2.0 lost
# Climate-FEVER .838 -> .831 for SciFact +.001 and WiCE +.003 (docs/benchmarks.md, session 11).
FTS_TITLE_WEIGHT = 0.5


def fts_search(
    db: sqlite_utils.Database, match: str, source_ids: Sequence[int] | None, limit: int
) -> list[tuple[int, float]]:
    """(passage id, bm25 score) best first. FTS5's ``bm25()`` is lower-is-better; we negate
    it so that every retriever's score is higher-is-better. Title hits weigh
    :data:`FTS_TITLE_WEIGHT` of text hits (models/bm25_index.py's ``TITLE_WEIGHT`` for Tantivy).
    """
    w = float(FTS_TITLE_WEIGHT)
    sql = (
        f"SELECT f.rowid, -bm25(passages_fts, {w!r}, 1.0) AS score FROM passages_fts f "
        "JOIN passages p ON p.id = f.rowid WHERE passages_fts MATCH ?"
    )
    params: list = [match]
    if source_ids:
        sql += f" AND p.source_id IN ({','.join('?' * len(source_ids))})"
        params.extend(source_ids)
    sql += f" ORDER BY bm25(passages_fts, {w!r}, 1.0) LIMIT ?"
    params.append(limit)
    return [(int(r[0]), float(r[1])) for r in db.execute(sql, params).fetchall()]


def passage_fingerprint(db: sqlite_utils.Database, source_id: int) -> str:
    """A cheap identity of a source's passage set (count, id sum, max id), to tell if a derived
    BM25 index (models/bm25_index.py) is stale: passages are only inserted and deleted, never
    edited in place, so a changed set changes one of the three."""
    row = db.execute(
        "SELECT count(*), coalesce(sum(id), 0), coalesce(max(id), 0) FROM passages WHERE source_id = ?",
        [source_id],
    ).fetchone()
    return f"{row[0]}:{row[1]}:{row[2]}"


def iter_passage_texts(
    db: sqlite_utils.Database, source_id: int, batch: int = 20_000
) -> Iterator[list[tuple[int, str, str]]]:
    """(passage id, title, text) of a source in batches of ``batch`` rows (keyset pagination on
    id), so a large source's BM25 index is built without holding every passage."""
    last = -1
    while True:
        rows = db.execute(
            "SELECT id, title, text FROM passages WHERE source_id = ? AND id > ? ORDER BY id LIMIT ?",
            [source_id, last, batch],
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [(int(r[0]), r[1], r[2]) for r in rows]


def iter_passage_sentences(
    db: sqlite_utils.Database, source_id: int, batch: int = 5_000
) -> Iterator[list[str]]:
    """The sentence texts of a source's passages, in passage-id order, a batch of ``batch``
    passages at a time (keyset pagination on id), cut exactly as a search cuts them
    (:func:`store.records.cut_sentences`)."""
    last = -1
    while True:
        rows = db.execute(
            "SELECT id, text, char_start, sentences FROM passages WHERE source_id = ? AND id > ? ORDER BY id LIMIT ?",
            [source_id, last, batch],
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [t for r in rows for t in cut_sentences(r[1], r[2], json.loads(r[3]))]


def last_passage_sentences(db: sqlite_utils.Database, source_id: int) -> list[str]:
    """The sentence texts of a source's newest passage (the highest id), or [] without passages."""
    row = db.execute(
        "SELECT text, char_start, sentences FROM passages WHERE source_id = ? ORDER BY id DESC LIMIT 1", [source_id]
    ).fetchone()
    return cut_sentences(row[0], row[1], json.loads(row[2])) if row else []
