"""Concurrent writers on one database (short form of benchmarks/concurrency.py), and the
indexing race they exposed: two `source add` of one source planned from the same state."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# benchmarks/ is a folder of scripts, not a package: the scenarios are imported from there by path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import concurrency

from core.ingest.index import add_source
from core.ingest.sources import load_documents
from store import open_db


@pytest.fixture(scope="module")
def pipeline_factory(embedder):
    """The TUI worker's pipeline over the session's models (as benchmarks/concurrency.py builds it)."""
    from core.decompose import make_decomposer
    from core.pipeline.runner import Pipeline
    from core.retrieve.searcher import Searcher
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter

    nli = load_nli()
    decomposer = make_decomposer("rules", SpacySentenceSplitter)
    return lambda db: Pipeline(db, decomposer, Searcher(db, lambda: embedder), Verifier(nli),
                               sources=[concurrency.SOURCE], k=3)


@pytest.mark.crash
def test_concurrent_writers_never_see_a_locked_database_nor_lose_rows(tmp_path, pipeline_factory):
    """Two `source add` of one source; `check --jsonl` during a `source add`; a TUI-like
    pipeline thread (its own connection) and UI reader beside CLI writers."""
    report = concurrency.run_concurrency(rounds=1, docs=4, answers=1, pipeline_factory=pipeline_factory,
                                         work=tmp_path, log=lambda *_: None)
    assert report["writers"] == 8
    failed = [(w["name"], w["detail"]) for s in report["scenarios"] for w in s["writers"] if not w["ok"]]
    assert not failed
    assert [s["problems"] for s in report["scenarios"]] == [[], [], []]
    thread = report["scenarios"][2]["writers"][2]
    assert thread["name"] == "TUI-like pipeline thread" and len(thread["runs"]) == len(concurrency.THREAD_TEXTS)


def test_indexing_plans_again_when_another_writer_indexed_the_source_meanwhile(tmp_path, embedder, splitter, data_dir):
    """A second writer commits the same source between this one's planning and its write
    transaction (forced here from inside the embedding step): the write is re-planned from
    the new state instead of failing on the documents' unique key, and every document is
    stored once."""
    corpus = data_dir / "fixtures" / "scifact_mini_corpus.jsonl"
    docs = load_documents(corpus)[:5]
    db_path = tmp_path / "race.db"
    db = open_db(db_path)

    class RacingEmbedder:
        """Embeds like the real one; on its first call another connection indexes the source."""

        def __init__(self):
            self.ref, self.dim, self.raced = embedder.ref, embedder.dim, False

        def encode(self, texts, **kw):
            if not self.raced:
                self.raced = True
                other = open_db(db_path)
                add_source(other, "mini", load_documents(corpus)[:5], fmt="scifact", path=None, embedder=embedder,
                           splitter=splitter)
                other.conn.close()
            return embedder.encode(texts, **kw)

    racing = RacingEmbedder()
    report = add_source(db, "mini", docs, fmt="scifact", path=None, embedder=racing, splitter=splitter)
    assert racing.raced
    assert (report.added, report.unchanged) == (0, 5)  # the other writer's documents were kept
    rows = db.execute("SELECT ext_id, count(*) FROM documents GROUP BY ext_id").fetchall()
    assert sorted(r[0] for r in rows) == sorted(d.ext_id for d in docs) and {r[1] for r in rows} == {1}
    unembedded = db.execute(
        "SELECT count(*) FROM passages p WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.passage_id = p.id)"
    ).fetchone()[0]
    assert unembedded == 0
