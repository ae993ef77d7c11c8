"""Evidence retrieval: BM25 (SQLite FTS5 or Tantivy), dense (FAISS), and hybrid by reciprocal-rank fusion.

- BM25: FTS5's ``bm25()`` over passage title and text, queried with the claim's content
  words OR-ed (seed 000 §1.2 uses BM25 as the sparse baseline; seed 003 §4.5 too); sources
  above ``TANTIVY_MIN_PASSAGES`` passages are searched with Tantivy instead, the same query
  terms and BM25 (models/bm25_index.py), because FTS5 costs about a second a query there.
- Dense: cosine similarity of L2-normalised sentence embeddings (all-MiniLM-L6-v2 by
  default) in a FAISS index; the query is the claim text without any prefix (seed 004 §5.4).
- Hybrid: BM25 and dense fused by the rule fitted on training claims (core/retrieve/fusion.py,
  ``core/retrieve/data/fusion.json``: weighted RRF or min-max score fusion), over the top
  ``depth`` of each retriever; then the subject's own document first (core/retrieve/subject.py)
  when the claim names an entity that has its own document and the restricted rule acts.
- Hybrid-sentence (the default): the hybrid, whose top 20 passages are fused again with the
  cosine of their best sentence before the subject step (core/retrieve/sentence_score.py,
  ``passage_sentences`` in fusion.json), read from the sentence vectors stored at index time.
- RRF: plain reciprocal-rank fusion, score(d) = Σ_r 1 / (k + rank_r(d)) with k = 60 and 1-based
  ranks (Cormack, Clarke & Büttcher 2009), equal weights (the hybrid before fitting).
- HyDE / Query2doc (seed 000, core/retrieve/expand.py): dense retrieval with the mean of the claim's
  and the pseudo-documents' embeddings / BM25 with the claim × 5 plus the pseudo-document.
  The expansion only shapes the query: the best sentence of each hit is still chosen
  against the claim, and the verifier only ever sees retrieved passages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import sqlite_utils

from core.errors import InputError
from core.ingest.index import bm25_index, require_source, sentence_vectors, vector_index
from core.retrieve.expand import Expansion, hyde_vector, query2doc_query
from core.retrieve.fusion import FusionParams, fuse, load_fusion, load_sentence_fusion
from core.retrieve.modes import (  # noqa: F401  (re-exported: callers name them from here)
    DEFAULT_MODE,
    EMBEDDING_MODES,
    EXPANSION_MODES,
    HYBRID_MODES,
    MODES,
    SENTENCE_VECTOR_MODES,
    VECTOR_MODES,
)
from core.retrieve.sentence_head import SentenceHead, load_sentence_head
from core.retrieve.sentence_head import rerank as rerank_by_head
from core.retrieve.sentence_rank import RankedSentence, member_rankings
from core.retrieve.sentence_rank import apply as apply_sentence_fusion
from core.retrieve.sentence_rank import candidates as sentence_candidates
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL, with_best_sentence
from core.retrieve.sentence_score import load_params as load_sentence_score
from core.retrieve.subject import EntityFn, Subject, TitleIndex, acts, subject_first
from core.text import content_words, fts_match_query, query_terms
from models.bm25_index import TANTIVY_MIN_PASSAGES, BM25Index
from models.embed import Embedder
from store import sources as sq
from store.records import SourceInfo, StoredPassage

Ranked = list[tuple[int, float]]  # (passage id, score), best first


class Retriever(Protocol):
    """One retrieval method: a query → passage ids with scores, best first."""

    name: str

    def retrieve(self, query: str, k: int) -> Ranked: ...


class BM25Retriever:
    name = "bm25"

    def __init__(
        self, db: sqlite_utils.Database, sources: Sequence[SourceInfo], tantivy_min: int = TANTIVY_MIN_PASSAGES
    ) -> None:
        self._db = db
        self._tantivy: list[BM25Index] = []
        self._source_ids: list[int] = []
        for s in sources:  # large sources on Tantivy (built or refreshed here if stale), the rest on FTS5
            index = bm25_index(db, s, tantivy_min)
            if index is None:
                self._source_ids.append(s.id)
            else:
                self._tantivy.append(index)
        self.engines = {s.name: ("fts5" if s.id in self._source_ids else "tantivy") for s in sources}

    def retrieve(self, query: str, k: int, distinct: bool = True) -> Ranked:
        """Top ``k`` over every source. With several indexes, hits are merged by BM25 score
        (each index has its own document statistics, as FAISS indexes are merged per source)."""
        hits: Ranked = []
        if self._source_ids:
            match = fts_match_query(query, distinct=distinct)
            if match is None:
                return []
            hits = sq.fts_search(self._db, match, self._source_ids, k)
        if self._tantivy:
            terms = query_terms(query, distinct)
            for index in self._tantivy:
                hits.extend(index.search(terms, k))
            if len(self._tantivy) + bool(self._source_ids) > 1:
                hits.sort(key=lambda h: -h[1])
        return hits[:k]


class DenseRetriever:
    name = "dense"

    def __init__(
        self,
        db: sqlite_utils.Database,
        sources: Sequence[SourceInfo],
        embedder: Embedder,
        index_kind: str = "auto",
    ) -> None:
        """A source with passages but no vector from ``embedder`` (indexed under another model id)
        is refused, not skipped: dense search over it would silently return nothing. Runs embed
        such sources first (core.workbench.Workbench.unembedded_sources)."""
        self._embedder = embedder
        self._indexes = []
        for s in sources:
            idx = vector_index(db, s, embedder.ref.model_id, index_kind)
            if idx is None and s.n_passages:
                raise InputError(
                    f"source {s.name!r} has no vectors from the embedder {embedder.ref.model_id} (it was indexed "
                    "under another one); a run embeds them first, or re-add the source with `claimscope source add`"
                )
            if idx is not None:
                self._indexes.append(idx)

    def encode_query(self, query: str) -> np.ndarray:
        return self._embedder.encode([query])[0]

    def retrieve(self, query: str, k: int) -> Ranked:
        return self.retrieve_vector(self.encode_query(query), k)

    def retrieve_vector(self, vector: np.ndarray, k: int) -> Ranked:
        hits: Ranked = []
        for index in self._indexes:
            hits.extend(index.search(vector, k))
        hits.sort(key=lambda h: -h[1])
        return hits[:k]


def reciprocal_rank_fusion(rankings: dict[str, Ranked], k: int = 60) -> Ranked:
    """RRF: Σ over retrievers of 1 / (k + rank), rank starting at 1; ties keep first-seen order."""
    fused: dict[int, float] = {}
    for ranked in rankings.values():
        for rank, (pid, _score) in enumerate(ranked, start=1):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def rank_expanded(
    query: str, expansion: Expansion, k: int, bm25: BM25Retriever, dense: DenseRetriever | None,
    encode: Callable[[list[str]], np.ndarray], *, depth: int = 100, rrf_k: int = 60,
) -> Ranked:
    """The ranking of an expanded query (seed 000 §3.2). HyDE: dense search with
    :func:`~core.retrieve.expand.hyde_vector` of the claim and its documents. Query2doc: BM25 over
    :func:`~core.retrieve.expand.query2doc_query`, keeping every word occurrence (query-term
    frequency). The paper uses one document; with several, each document's Query2doc
    ranking is fused by RRF (a [derived] choice; HyDE's mean already covers N > 1)."""
    if expansion.method == "hyde":
        if dense is None:
            raise InputError("HyDE needs a dense index of the sources")
        vecs = encode([query, *expansion.documents])
        return dense.retrieve_vector(hyde_vector(vecs[0], vecs[1:]), k)
    docs = expansion.documents or ("",)
    rankings = {str(i): bm25.retrieve(query2doc_query(query, d), k if len(docs) == 1 else max(k, depth), distinct=False)
                for i, d in enumerate(docs)}
    return rankings["0"] if len(rankings) == 1 else reciprocal_rank_fusion(rankings, rrf_k)[:k]


def check_query(query: str, mode: str) -> None:
    """Refuse a search that cannot run: an unknown mode or an empty query. Callers check before
    they open sources, so a typo is reported at once, not after a built-in source's first
    indexing (minutes on a fresh database)."""
    if mode not in MODES:
        raise InputError(f"unknown retrieval mode {mode!r} (use {', '.join(MODES)})")
    if not query.strip():
        raise InputError("the query is empty")


@dataclass
class Hit:
    """One retrieved passage with every retriever's score and rank (1-based)."""

    passage: StoredPassage
    rank: int
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    best_sentence: int | None = None  # index into passage.sentences
    # 1-based rank of each of the passage's sentences in the evidence-sentence ranking across
    # all hits (:meth:`Searcher.rank_evidence_sentences`); None when not ranked. A sentence that
    # an overlapping, better-ranked hit already holds ranks after every ranked one.
    sentence_ranks: tuple[int, ...] | None = None

    @property
    def sentence_text(self) -> str | None:
        if self.best_sentence is None:
            return None
        return self.passage.sentence_texts()[self.best_sentence]


class Searcher:
    """Retrieval over one database: builds retrievers per source set, loads the embedder
    once (lazily, only when a dense mode needs it), and returns hydrated :class:`Hit` s."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        embedder_factory: Callable[[], Embedder],
        rrf_k: int = 60,
        depth: int = 100,
        index_kind: str = "auto",
        fusion: FusionParams | None = None,
        entities_factory: Callable[[], EntityFn] | None = None,
        subject: bool = True,
        tantivy_min: int = TANTIVY_MIN_PASSAGES,
        title_maps: dict | None = None,
        sentence_score: FusionParams | bool | None = True,
    ) -> None:
        """``title_maps``: a dict shared between searchers (the workbench's) that keeps each
        source state's title map (:class:`TitleIndex`) from one searcher — one run — to the next."""
        self.db = db
        self.tantivy_min = tantivy_min  # sources above this many passages: BM25 with Tantivy
        self._bm25: dict[tuple[str, ...], BM25Retriever] = {}
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.rrf_k = rrf_k
        self.depth = depth
        self.index_kind = index_kind
        self._dense: dict[tuple[str, ...], DenseRetriever] = {}
        self.fusion = fusion or load_fusion()
        # the passage's best sentence as a second fusion (core/retrieve/sentence_score.py):
        # True = the shipped fitted rule, False/None = off, or explicit params
        self.sentence_score = load_sentence_score() if sentence_score is True else (sentence_score or None)
        self.subject = subject  # the subject's own document first (hybrid mode)
        self._entities_factory = entities_factory or _spacy_entities
        self._entities: EntityFn | None = None
        self._titles: dict[tuple[str, ...], TitleIndex] = {}
        self._title_maps = title_maps
        self.last_subject: Subject | None = None  # of the latest hybrid ranking when the rule acted, for display
        # Sentence vectors for best-sentence marking, by text: the claims of one answer retrieve
        # mostly the same passages, so each distinct sentence is embedded once per searcher
        # (once per run), not once per claim. Bounded; cleared when full.
        self._sentence_vecs: dict[str, np.ndarray] = {}
        self._query_vec: tuple[str, np.ndarray] | None = None  # (query, vector) of the latest ranking
        self._sentence_fusion: dict[str, FusionParams] = {}  # evidence-sentence weights by mode
        self._sentence_head: dict[str, SentenceHead | None] = {}  # the abstracts' sentence head by mode

    def find_subject(self, query: str, sources: list[SourceInfo]) -> Subject | None:
        """The claim's subject with its own document (core/retrieve/subject.py), or None."""
        titles = self.title_index(sources)
        if self._entities is None:
            self._entities = self._entities_factory()
        entities, phrase = self._entities(query)
        return titles.find(query, entities, phrase)

    def title_index(self, sources: list[SourceInfo]) -> TitleIndex:
        """The subject rule's titles of ``sources`` (built once per source state; with
        ``title_maps``, once per workbench — the TUI's warm-up builds it before the first run)."""
        key = tuple(f"{s.name}:{s.updated_at}" for s in sources)
        if key not in self._titles:
            shared_key = (self._db_file(), *key)
            known = self._title_maps.get(shared_key) if self._title_maps is not None else None
            self._titles[key] = TitleIndex(self.db, sources, by_title=known)
            if self._title_maps is not None and known is None and shared_key[0]:
                if len(self._title_maps) >= 4:  # a few source states at most
                    self._title_maps.clear()
                self._title_maps[shared_key] = self._titles[key].by_title
        return self._titles[key]

    def _db_file(self) -> str:
        """The database's file ("" in memory: never shared)."""
        row = self.db.execute("PRAGMA database_list").fetchone()
        return row[2] if row else ""

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def sources(self, names: Sequence[str] | None) -> list[SourceInfo]:
        if names:
            return [require_source(self.db, n) for n in names]
        found = sq.list_sources(self.db)
        if not found:
            raise InputError("no knowledge source indexed yet; add one with `claimscope source add`")
        return found

    def dense(self, sources: list[SourceInfo]) -> DenseRetriever:
        key = tuple(f"{s.name}:{s.updated_at}" for s in sources)
        if key not in self._dense:
            self._dense[key] = DenseRetriever(self.db, sources, self.embedder, self.index_kind)
        return self._dense[key]

    def bm25(self, sources: list[SourceInfo]) -> BM25Retriever:
        key = tuple(f"{s.name}:{s.updated_at}" for s in sources)
        if key not in self._bm25:
            self._bm25[key] = BM25Retriever(self.db, sources, self.tantivy_min)
        return self._bm25[key]

    def rank(
        self, query: str, mode: str, k: int, sources: Sequence[str] | None = None, expansion: Expansion | None = None,
    ) -> dict[str, Ranked]:
        """Raw rankings: ``{"bm25": …, "dense": …, "hybrid": …}`` as the mode needs; the
        expansion modes need the claim's :class:`~core.retrieve.expand.Expansion`."""
        check_query(query, mode)
        srcs = self.sources(sources)
        if mode in EXPANSION_MODES:
            if expansion is None or expansion.method != mode:
                raise InputError(f"retrieval mode {mode} needs the claim's {mode} expansion (an LLM writes it)")
            return {mode: self.expanded(query, expansion, k, srcs)}
        fused = mode in (*HYBRID_MODES, "rrf")
        depth = max(k, self.depth) if fused else k
        out: dict[str, Ranked] = {}
        if mode in ("bm25", *HYBRID_MODES, "rrf"):
            out["bm25"] = self.bm25(srcs).retrieve(query, depth)
        query_vec = None
        if mode in ("dense", *HYBRID_MODES, "rrf"):
            query_vec = self.dense(srcs).encode_query(query)
            self._query_vec = (query, query_vec)
            out["dense"] = self.dense(srcs).retrieve_vector(query_vec, depth)
        if mode == "rrf":
            out["rrf"] = reciprocal_rank_fusion({"bm25": out["bm25"], "dense": out["dense"]}, self.rrf_k)
        if mode in HYBRID_MODES:
            out["fusion"] = fuse({"bm25": out["bm25"], "dense": out["dense"]}, self.fusion)
            if mode == "hybrid-sentence" and self.sentence_score is not None and query_vec is not None:
                top = sq.get_passages(self.db, [pid for pid, _ in out["fusion"][:SENTENCE_SCORE_POOL]])
                out["fusion"], out["sentence"] = with_best_sentence(
                    out["fusion"], top, query_vec, self._sentence_vectors, self.sentence_score)
            subject = self.find_subject(query, srcs) if self.subject else None
            self.last_subject = subject if acts(out["fusion"], subject) else None
            out[mode] = subject_first(out["fusion"], self.last_subject)
            if self.last_subject is not None:
                own = set(self.last_subject.passage_ids)
                out["subject"] = [(pid, 1.0) for pid, _ in out[mode] if pid in own]
        return out

    def expanded(self, query: str, expansion: Expansion, k: int, sources: list[SourceInfo]) -> Ranked:
        dense = self.dense(sources) if expansion.method == "hyde" else None
        return rank_expanded(query, expansion, k, self.bm25(sources), dense, self.embedder.encode,
                             depth=self.depth, rrf_k=self.rrf_k)

    def search(
        self, query: str, k: int = 10, mode: str = DEFAULT_MODE, sources: Sequence[str] | None = None,
        expansion: Expansion | None = None, mark_sentences: bool = True, rank_sentences: bool = False,
    ) -> list[Hit]:
        """The top ``k`` passages as :class:`Hit` s. ``mark_sentences=False`` leaves
        ``Hit.best_sentence`` unset: a run never stores or shows it (the verifier ranks and
        judges sentences itself), and marking embeds every sentence of the top k — measured,
        10 of the 25 s of ``check --no-cache`` on the 150-word answer. Mark later with
        :meth:`mark_best_sentences` where a caller needs it (an expansion's leakage audit).
        ``rank_sentences`` sets ``Hit.sentence_ranks`` (:meth:`rank_evidence_sentences`), for a
        verifier that chooses its sentences by them."""
        rankings = self.rank(query, mode, k, sources, expansion)
        top = rankings[mode][:k]
        passages = sq.get_passages(self.db, [pid for pid, _ in top])
        component = {name: {pid: (r, s) for r, (pid, s) in enumerate(lst, 1)} for name, lst in rankings.items() if name != mode}
        hits = []
        for rank, (pid, score) in enumerate(top, start=1):
            hit = Hit(passages[pid], rank, score, {mode: score}, {mode: rank})
            for name, table in component.items():
                if pid in table:
                    hit.ranks[name], hit.scores[name] = table[pid]
            hits.append(hit)
        if mark_sentences:
            self.mark_best_sentences(query, hits, mode)
        if rank_sentences:
            self.rank_evidence_sentences(query, hits, mode)
        return hits

    def rank_evidence_sentences(self, query: str, hits: list[Hit], mode: str = DEFAULT_MODE) -> list[RankedSentence]:
        """Rank the sentences of ``hits`` together, across passages, and set each hit's
        ``sentence_ranks``: the evidence-sentence fusion that ``eval retrieval`` scores
        (core/retrieve/sentence_rank.py: cosine of the stored sentence vectors, BM25 over the
        pool, passage rank; weights fitted for ``mode`` on training claims' rationale
        sentences, core/retrieve/data/fusion.json). Why: what the verifier judges is a
        sentence, and it judges only a few of them per claim (``Thresholds.judge_sentences``).
        Only for :data:`EMBEDDING_MODES` (the others never load the embedder); returns the
        ranked sentences, best first, with each member's score and rank (empty when none were
        ranked). Over a corpus of abstract-length abstracts the learned evidence-sentence head
        re-orders the fused ranking (core/retrieve/sentence_head.py)."""
        if not hits or mode not in EMBEDDING_MODES:
            return []
        cands = sentence_candidates([h.passage for h in hits])
        if not cands:
            return []
        if mode not in self._sentence_fusion:
            self._sentence_fusion[mode] = load_sentence_fusion(mode)
        rankings = member_rankings(self._query_vector(query), self._sentence_vectors([c.text for c in cands]), query, cands)
        ranked = apply_sentence_fusion(rankings, cands, self._sentence_fusion[mode])
        if mode not in self._sentence_head:
            self._sentence_head[mode] = load_sentence_head(mode)
        head = self._sentence_head[mode]
        if head is not None:
            ranked = rerank_by_head(head, query, cands, rankings, ranked,
                                    lambda ids: sq.document_layouts(self.db, ids))
        position = {(c.passage.id, c.index): r for r, c in enumerate(ranked, start=1)}
        unranked = len(ranked) + 1
        for h in hits:
            h.sentence_ranks = tuple(position.get((h.passage.id, i), unranked) for i in range(len(h.passage.sentences)))
        return ranked

    def mark_best_sentences(self, query: str, hits: list[Hit], mode: str = "hybrid") -> None:
        """The sentence of each passage that best matches the query: cosine of embeddings
        when the mode loads the embedder anyway, else content-word overlap."""
        if not hits:
            return
        if mode not in ("bm25", "query2doc"):
            sents = [h.passage.sentence_texts() for h in hits]
            flat = [s for ss in sents for s in ss]
            sims = self._sentence_vectors(flat) @ self._query_vector(query)
            pos = 0
            for hit, ss in zip(hits, sents, strict=True):
                if ss:
                    hit.best_sentence = int(np.argmax(sims[pos : pos + len(ss)]))
                pos += len(ss)
            return
        q = set(content_words(query))
        for hit in hits:
            overlaps = [len(q & set(content_words(s))) for s in hit.passage.sentence_texts()]
            if overlaps:
                hit.best_sentence = int(np.argmax(overlaps))

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's vector: the one its ranking just computed, else embedded now."""
        last = self._query_vec
        return last[1] if last is not None and last[0] == query else self.embedder.encode([query])[0]

    def _sentence_vectors(self, texts: list[str], limit: int = 50_000) -> np.ndarray:
        """Vectors of ``texts``: from the memo, else as stored at index time
        (core.ingest.index.ensure_sentence_vectors), else embedded here — only the
        distinct ones, in one batched call. ``limit`` bounds the memo (50,000 × 384 floats ≈ 77 MB)."""
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        memo = self._sentence_vecs
        new = list(dict.fromkeys(t for t in texts if t not in memo))
        if new:
            if len(memo) + len(new) > limit:
                memo.clear()
                new = list(dict.fromkeys(texts))
            memo.update(zip(new, sentence_vectors(self.db, self.embedder, new), strict=True))
        return np.stack([memo[t] for t in texts])


def _spacy_entities() -> EntityFn:
    """The embedded spaCy pipeline (entities and the grammatical subject), loaded on the
    first hybrid search (not at import)."""
    from models.nlp import SpacyClaimSubject

    return SpacyClaimSubject()
