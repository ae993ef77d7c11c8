"""Sentence vectors stored at index time (core.ingest.index.ensure_sentence_vectors) and read back
by the searcher's best-sentence stage, on the SciFact mini corpus with the real embedder."""

from __future__ import annotations

import numpy as np
import pytest

from core.ingest.index import add_source, ensure_sentence_vectors, sentence_vectors_missing, text_sha256
from core.ingest.sources import load_documents
from core.retrieve.searcher import Searcher
from core.settings import Settings
from core.workbench import Workbench
from store import open_db
from store import sources as sq
from tests.conftest import FIXTURES


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.ref, self.dim, self.texts = inner, inner.ref, inner.dim, 0

    def encode(self, texts, **kw):
        self.texts += len(texts)
        return self.inner.encode(texts, **kw)


def _sentences(db, source: str) -> list[str]:
    info = sq.get_source(db, source)
    return [t for batch in sq.iter_passage_sentences(db, info.id) for t in batch]


def test_every_sentence_is_stored_as_the_search_cuts_it(mini_db, embedder):
    texts = _sentences(mini_db, "scifact-mini")
    stored = sq.stored_sentence_vectors(mini_db, embedder.ref.model_id, list({text_sha256(t) for t in texts}))
    assert len(stored) == len(set(texts)) > 77
    assert not sentence_vectors_missing(mini_db, "scifact-mini", embedder.ref.model_id)
    # the stored vector is the sentence's own: it matches a fresh embedding of exactly that text
    # (not bit for bit: another batch pads differently), and not its neighbour's
    sample = texts[:: max(1, len(texts) // 12)][:12]
    fresh = embedder.encode(sample)
    kept = np.stack([stored[text_sha256(t)] for t in sample])
    cos = np.sum(fresh * kept, axis=1)
    assert cos.min() > 0.999  # float16 storage and batching move a cosine by ~1e-4
    assert (fresh @ kept.T)[~np.eye(len(sample), dtype=bool)].max() < 0.99


def test_hybrid_sentence_embeds_only_the_query_when_sentences_are_stored(mini_db, mini_claims, embedder):
    counting = CountingEmbedder(embedder)
    searcher = Searcher(mini_db, lambda: counting)
    claims = [c for c in mini_claims if c.gold_docs][:5]
    for c in claims:
        hits = searcher.search(c.claim, k=5, mode="hybrid-sentence")
        assert "sentence" in hits[0].ranks or any("sentence" in h.ranks for h in hits)
    # one vector per claim (its query), none for the sentences of its top 20 passages or the
    # best-sentence marking of its hits
    assert counting.texts == len(claims)


def test_an_interrupted_pass_is_completed_and_a_run_completes_an_old_database(tmp_path, embedder, splitter):
    db = open_db(tmp_path / "old.db")
    docs = load_documents(FIXTURES / "scifact_mini_corpus.jsonl")[:10]
    report = add_source(db, "tiny", docs, fmt="scifact", path="fixture", embedder=embedder, splitter=splitter,
                        sentence_vectors=False)  # as a database indexed before sentence vectors were stored
    assert report.sentences_embedded == 0
    model = embedder.ref.model_id
    assert sentence_vectors_missing(db, "tiny", model)
    n = len(set(_sentences(db, "tiny")))
    # an interrupted pass: its first batch (the first two passages' sentences) committed, the rest not
    info = sq.get_source(db, "tiny")
    first = set(next(sq.iter_passage_sentences(db, info.id, batch=2)))
    with pytest.raises(KeyboardInterrupt):
        ensure_sentence_vectors(db, "tiny", _OnlyThese(embedder, first), batch=len(first))
    kept = sq.sentence_vector_hashes(db, model, [text_sha256(t) for t in _sentences(db, "tiny")])
    assert kept == {text_sha256(t) for t in first} and len(kept) < n
    assert sentence_vectors_missing(db, "tiny", model)
    # a run whose mode scores sentences completes the pass once; a mode that does not leaves it
    wb = Workbench(Settings(db_path=tmp_path / "old.db"))
    assert wb.embedder().ref.model_id == model
    assert wb.sources_without_sentence_vectors(db, ("tiny",), "hybrid") == []
    assert wb.sources_without_sentence_vectors(db, ("tiny",), "hybrid-sentence") == ["tiny"]
    wb.ensure_sources(db, ("tiny",), mode="hybrid-sentence")
    assert not sentence_vectors_missing(db, "tiny", model)
    assert ensure_sentence_vectors(db, "tiny", embedder) == 0
    stored = sq.stored_sentence_vectors(db, model, [text_sha256(t) for t in _sentences(db, "tiny")])
    assert len(stored) == n


class _OnlyThese:
    """An embedder that stops the pass (as Ctrl+C would) at the first batch holding a sentence
    outside ``allowed``: with batch = the first passages' sentences, exactly one batch commits."""

    def __init__(self, inner, allowed: set[str]) -> None:
        self.inner, self.ref, self.dim, self.allowed = inner, inner.ref, inner.dim, allowed

    def encode(self, texts, **kw):
        if not set(texts) <= self.allowed:
            raise KeyboardInterrupt
        return self.inner.encode(texts, **kw)
