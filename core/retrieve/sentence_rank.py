"""Evidence sentences ranked across passages: what the verifier judges is a sentence, so the
sentences of the top passages are ranked together, not one best sentence per passage.

Each candidate sentence gets three rankings, fused by :mod:`core.fusion` with weights fitted
on SciFact training claims' rationale sentences (``core/retrieve/data/fusion.json``, key
``sentences``):

- ``dense``: cosine of the L2-normalised embeddings of the claim and the sentence (the
  passage embedder; sentence vectors go through the embedding cache, so a sentence is
  embedded once per database);
- ``bm25``: Okapi BM25 (k1 = 1.2, b = 0.75; Robertson & Zaragoza 2009) of the claim's
  content words over the candidate sentences, with IDF over that candidate pool;
- ``passage``: the rank of the passage the sentence came from (the document-level evidence
  that the passage is about the claim).

A sentence repeated by overlapping passages is one candidate, kept with its best passage.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.retrieve.fusion import FusionParams, fuse
from core.text import content_words
from store.records import StoredPassage

SENTENCE_POOL = 10  # passages whose sentences are ranked (doc recall@10 ≈ .95 on SciFact dev)


@dataclass
class RankedSentence:
    passage: StoredPassage
    index: int  # into passage.sentences
    passage_rank: int  # 1-based rank of the passage in the passage ranking
    score: float = 0.0
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)

    @property
    def span(self) -> tuple[int, int]:
        return self.passage.sentences[self.index]

    @property
    def text(self) -> str:
        return self.passage.sentence_texts()[self.index]


def candidates(passages: Sequence[StoredPassage]) -> list[RankedSentence]:
    """The sentences of ``passages`` (in ranking order), each once."""
    seen: set[tuple[int, tuple[int, int]]] = set()
    out = []
    for rank, p in enumerate(passages, start=1):
        for i, span in enumerate(p.sentences):
            key = (p.document_id, tuple(span))
            if key in seen:
                continue
            seen.add(key)
            out.append(RankedSentence(p, i, rank))
    return out


def bm25_scores(query: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 of the query's distinct content words over ``texts``; IDF is
    log(1 + (N - n + 0.5) / (n + 0.5)) over the pool (the Lucene variant, never negative)."""
    docs = [Counter(content_words(t)) for t in texts]
    n_docs = len(docs)
    if not n_docs:
        return []
    avg = sum(sum(d.values()) for d in docs) / n_docs or 1.0
    terms = list(dict.fromkeys(content_words(query)))
    df = {t: sum(1 for d in docs if t in d) for t in terms}
    idf = {t: math.log(1 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    out = []
    for d in docs:
        length = sum(d.values())
        s = 0.0
        for t in terms:
            tf = d.get(t, 0)
            if tf:
                s += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        out.append(s)
    return out


def member_rankings(query_vec: np.ndarray, sentence_vecs: np.ndarray, query: str,
                    cands: Sequence[RankedSentence]) -> dict[str, list[tuple[int, float]]]:
    """The three member rankings over candidate positions (0-based ids into ``cands``)."""
    ids = range(len(cands))
    dense = (sentence_vecs @ query_vec).tolist() if len(cands) else []
    bm25 = bm25_scores(query, [c.text for c in cands])
    return {
        "dense": sorted(zip(ids, dense, strict=True), key=lambda x: -x[1]),
        "bm25": sorted(((i, s) for i, s in zip(ids, bm25, strict=True) if s > 0), key=lambda x: -x[1]),
        "passage": [(i, -float(c.passage_rank)) for i, c in enumerate(cands)],  # already in passage order
    }


def rank_sentences(
    query: str, passages: Sequence[StoredPassage], encode: Callable[[list[str]], np.ndarray],
    params: FusionParams, query_vec: np.ndarray | None = None,
) -> list[RankedSentence]:
    """Candidate sentences of ``passages`` ranked best first, each with its members' scores
    and ranks. ``encode`` maps texts to L2-normalised vectors (a cached encoder is best)."""
    cands = candidates(passages)
    if not cands:
        return []
    if query_vec is None:
        query_vec = encode([query])[0]
    rankings = member_rankings(query_vec, encode([c.text for c in cands]), query, cands)
    return apply(rankings, cands, params)


def apply(rankings: dict[str, list[tuple[int, float]]], cands: Sequence[RankedSentence],
          params: FusionParams) -> list[RankedSentence]:
    for name, ranked in rankings.items():
        for r, (i, s) in enumerate(ranked, start=1):
            cands[i].scores[name], cands[i].ranks[name] = s, r
    out = []
    for i, s in fuse(rankings, params):
        c = cands[i]
        c.score = s
        out.append(c)
    return out
