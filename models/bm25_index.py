"""Tantivy BM25 index over passage title and text, saved beside the database.

Why another BM25 engine: SQLite FTS5 ranks every passage that matches any query term before
it can cut the top k, so at a million passages a claim's OR-query costs 0.4–1.1 s (p50–p95,
benchmarks/results/scale.json) against a 50 ms budget. Tantivy (Rust, the engine
of Quickwit) keeps an on-disk, memory-mapped inverted index and prunes with block-max WAND,
so it reads only the postings that can still reach the top k. It is used for sources above
:data:`TANTIVY_MIN_PASSAGES` passages (core/ingest/index.py chooses, as for the IVF index);
smaller sources stay on FTS5, which needs no file of its own.

Same intent as our FTS5 table (``porter unicode61 remove_diacritics 2``, store/migrations.py):
split on non-alphanumeric Unicode characters, lowercase, fold diacritics, English stemming
(tantivy's Snowball English, the successor of FTS5's Porter stemmer), BM25 with k1 = 1.2 and
b = 0.75 (tantivy's constants, FTS5's too), title hits weighted 0.5 against text hits
(store/sources.py ``fts_search``). Tantivy keeps per-field statistics where FTS5 pools the
columns, so rankings agree closely but not exactly (tests/retrieve/test_bm25_tantivy.py,
benchmarks/scale.py).

The query is built from terms (term queries OR-ed), never from a query-parser string, so
user text cannot inject query syntax. The index is a cache: it is rebuilt from the passages
stored in SQLite whenever they change (a stamp of what it was built from is kept inside it)
and written into a fresh folder that replaces the old one by rename, so a crash leaves the
old index, or none (then the source is searched with FTS5 until it is rebuilt).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

TANTIVY_MIN_PASSAGES = 30_000  # sources with more passages use Tantivy: where FTS5 stops fitting the hybrid budget (docs/benchmarks.md)
TITLE_WEIGHT = 0.5  # as FTS5's bm25(passages_fts, 0.5, 1.0)
K1, B = 1.2, 0.75  # tantivy's BM25 constants (not configurable there); recorded in the stamp
TOKENIZER = "claimscope_en"
# What the analyzer does, stamped into every index: an index built with another analyzer is stale.
TOKENIZER_SPEC = "simple|lowercase|ascii_fold|stemmer:english"
FORMAT = 1
WRITER_HEAP = 128 * 2**20  # tantivy flushes a segment when its indexing heap is full: memory stays bounded
STAMP = "claimscope-stamp.json"


def _analyzer():
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("id", stored=False, indexed=False, fast=True)
    sb.add_text_field("title", stored=False, tokenizer_name=TOKENIZER, index_option="freq")
    sb.add_text_field("text", stored=False, tokenizer_name=TOKENIZER, index_option="freq")
    return sb.build()


def stamp_for(fingerprint: str) -> dict:
    """What an index is built from: the passage set and how its text was analysed and scored."""
    import tantivy

    return {"fingerprint": fingerprint, "tokenizer": TOKENIZER_SPEC, "k1": K1, "b": B,
            "title_weight": TITLE_WEIGHT, "format": FORMAT, "tantivy": getattr(tantivy, "__version__", "?")}


def read_stamp(path: Path) -> dict | None:
    try:
        return json.loads((path / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class BM25Index:
    """An opened Tantivy index: ``search(terms, k)`` → (passage id, score) best first."""

    def __init__(self, index) -> None:  # index: tantivy.Index
        self._index = index
        self._analyzer = _analyzer()
        self._schema = index.schema
        self._searcher = index.searcher()

    @classmethod
    def open(cls, path: Path) -> BM25Index:
        import tantivy

        index = tantivy.Index.open(str(path))
        index.register_tokenizer(TOKENIZER, _analyzer())
        return cls(index)

    @property
    def size(self) -> int:
        return int(self._searcher.num_docs)

    def search(self, terms: Iterable[str], k: int) -> list[tuple[int, float]]:
        """BM25 over title (× 0.5) and text for ``terms`` OR-ed; a term given twice counts twice
        (query-term frequency, as FTS5's bm25() sums over repeated phrases)."""
        import tantivy

        clauses = []
        for term in terms:
            for tok in self._analyzer.analyze(term):
                clauses.append((tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", tok)))
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(
                    tantivy.Query.term_query(self._schema, "title", tok), TITLE_WEIGHT)))
        if not clauses or k <= 0:
            return []
        hits = self._searcher.search(tantivy.Query.boolean_query(clauses), limit=k, count=False).hits
        if not hits:
            return []
        ids = self._searcher.fast_field_values("id", [addr for _score, addr in hits])
        return [(int(i), float(s)) for (s, _addr), i in zip(hits, ids, strict=True)]


def build_bm25(path: Path, batches: Iterable[list[tuple[int, str, str]]], stamp: dict,
               progress=None, heap: int = WRITER_HEAP) -> BM25Index:
    """A Tantivy index of the passages ``batches`` yields ((id, title, text) lists, read from
    SQLite batch by batch by the caller), built in a fresh folder beside ``path`` with the
    ``stamp`` inside, then renamed into place: readers see the old folder or the new one."""
    import tantivy

    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=path.parent, prefix=path.name + ".build."))
    try:
        index = tantivy.Index(_schema(), path=str(work))
        index.register_tokenizer(TOKENIZER, _analyzer())
        writer = index.writer(heap, 1)
        for batch in batches:
            for pid, title, text in batch:
                writer.add_document(tantivy.Document(id=pid, title=title or "", text=text))
            if progress:
                progress(len(batch))
        writer.commit()
        writer.wait_merging_threads()
        (work / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
        _swap(work, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return BM25Index.open(path)


def _swap(new: Path, path: Path) -> None:
    """Put folder ``new`` at ``path``: the old folder is renamed aside first (a folder cannot
    be renamed over a non-empty one), then removed; open readers keep their mapped files."""
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(dir=path.parent, prefix=path.name + ".old."))
        os.rename(path, old / "index")
    os.rename(new, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def remove_bm25(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
