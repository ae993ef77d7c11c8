"""Sentence vectors stored at index time (core.ingest.index.ensure_sentence_vectors) and read back
by the searcher's best-sentence stage, on the SciFact mini corpus with the real embedder."""

from __future__ import annotations

import numpy as np
import pytest

from core.ingest.index import (
    add_source,
    ensure_sentence_vectors,
    sentence_vectors,
    sentence_vectors_missing,
    text_sha256,
)
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


def test_evidence_sentences_ranked_across_hits_are_what_the_verifier_judges(mini_db, mini_claims, embedder):
    """Thresholds.sentence_choice = "retrieval": the searcher ranks the hits' sentences together
    by the mode's fitted evidence-sentence fusion (stored vectors, no sentence embedded) and, over
    abstract-length abstracts, its learned head; the verifier judges the best-ranked ones; a BM25
    search ranks nothing and the verifier falls back to its lexical choice."""
    from core.pipeline.runner import passage_evidence
    from core.retrieve.fusion import load_sentence_fusion
    from core.retrieve.sentence_head import load_sentence_head, rerank
    from core.retrieve.sentence_rank import apply, candidates, member_rankings
    from core.verify.base import Thresholds
    from core.verify.verifier import Verifier

    counting = CountingEmbedder(embedder)
    searcher = Searcher(mini_db, lambda: counting)
    by_retrieval = Verifier(None, Thresholds(sentence_choice="retrieval", early_stop=1.0))
    lexical = Verifier(None, Thresholds(sentence_choice="lexical", early_stop=1.0))
    assert by_retrieval.wants_sentence_ranks and not lexical.wants_sentence_ranks
    claims = [c for c in mini_claims if c.gold_docs][:6]
    head = load_sentence_head("hybrid-sentence")
    differ = reordered = 0
    for c in claims:
        hits = searcher.search(c.claim, k=10, mode="hybrid-sentence", rank_sentences=True)
        ranks = [r for h in hits for r in h.sentence_ranks]
        assert all(len(h.sentence_ranks) == len(h.passage.sentences) for h in hits)
        # the same order as eval retrieval's sentence ranking of these passages, from the same
        # vectors (the stored ones, and the query's as the search embeds it): exact on any CPU.
        # SciFact abstracts are abstract-length, so the learned head re-orders the fused ranking.
        cands = candidates([h.passage for h in hits])
        rankings = member_rankings(embedder.encode([c.claim])[0],
                                   sentence_vectors(mini_db, embedder, [x.text for x in cands]), c.claim, cands)
        ordered = apply(rankings, cands, load_sentence_fusion("hybrid-sentence"))
        fused = [(x.passage.id, x.index) for x in ordered]
        expected = rerank(head, c.claim, cands, rankings, ordered, lambda ids: sq.document_layouts(mini_db, ids))
        assert all("head" in x.ranks for x in expected)
        reordered += [(x.passage.id, x.index) for x in expected[:5]] != fused[:5]
        assert sorted(r for r in ranks if r <= len(expected)) == list(range(1, len(expected) + 1))
        by_rank = {r: (h.passage.id, i) for h in hits for i, r in enumerate(h.sentence_ranks) if r <= len(expected)}
        assert [by_rank[r] for r in range(1, 6)] == [(s.passage.id, s.index) for s in expected[:5]]
        units, _ = by_retrieval.candidate_units(c.claim, passage_evidence(hits))
        chosen = [(u.passage_id, u.sentences[0]) for u in units if u.kind == "sentence"]
        assert chosen == [by_rank[r] for r in range(1, 9)]
        plain, _ = lexical.candidate_units(c.claim, passage_evidence(hits))
        differ += chosen != [(u.passage_id, u.sentences[0]) for u in plain if u.kind == "sentence"]
    assert differ >= 1  # the two choices are not the same rule
    assert reordered >= 1  # the head changes what the verifier judges first
    assert counting.texts == len(claims)  # only the queries were embedded: the sentences' vectors are stored
    bm25 = searcher.search(claims[0].claim, k=10, mode="bm25", rank_sentences=True)
    assert all(h.sentence_ranks is None for h in bm25)
    units, _ = by_retrieval.candidate_units(claims[0].claim, passage_evidence(bm25))
    same, _ = lexical.candidate_units(claims[0].claim, passage_evidence(bm25))
    assert units == same
