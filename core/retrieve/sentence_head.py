"""A learned evidence-sentence head for corpora of abstracts (issue 21, session 38).

The default mode ranks the sentences of its top passages by a fitted fusion of three members
(:mod:`core.retrieve.sentence_rank`). In a scientific abstract the sentence that settles a claim
is usually a late, long one of the single best-matching abstract (its results and conclusion),
which the members do not see. This head is a logistic regression over twelve features of each
candidate sentence (the members' scores, the fused score, where the sentence sits in its
document, its length, the claim's content words it holds, and how it compares with its
document's best-cosine sentence), fitted on SciFact training claims' rationale sentences
(``benchmarks/sentence_head_probe.py fit --short-docs``; docs/benchmarks.md, "The
evidence-sentence head for abstract-length documents").

It acts only where what it learned holds (:meth:`SentenceHead.admits`): the candidates come from a
corpus of abstracts (source kind ``abstract``, :func:`core.text.source_kind`) and every
candidate document is abstract-length (≤ ``max_doc_words`` words). Long web pages (WiCE) and
encyclopedia articles (Climate-FEVER, wiki-vital) keep the shipped fusion: measured, the head
lost there (sessions 21 and 37).

Only the order matters, so the weights are kept unscaled and without an intercept.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from core.retrieve.sentence_rank import RankedSentence
from core.text import content_words, source_kind
from store.records import DocumentLayout

FEATURES = ("dense", "dense_gap", "bm25", "inv_prank", "fused", "relpos", "first", "last", "loglen", "cover",
            "doc_best", "doc_gap")


@dataclass(frozen=True)
class SentenceHead:
    """Unscaled logistic-regression weights over :data:`FEATURES` (a subset, by name), and the gate."""

    weights: dict[str, float]
    max_doc_words: int
    kind: str = "abstract"
    fitted_on: str = ""

    def admits(self, kind: str, doc_words: Sequence[int]) -> bool:
        """Whether the head ranks a claim's candidates: their source kind is the head's and no
        candidate document is longer than ``max_doc_words`` words."""
        return kind == self.kind and bool(doc_words) and max(doc_words) <= self.max_doc_words

    def scores(self, feats: Sequence[dict[str, float]]) -> np.ndarray:
        names = list(self.weights)
        w = np.array([self.weights[n] for n in names])
        if not feats:
            return np.zeros(0)
        return np.array([[f[n] for n in names] for f in feats], dtype=float) @ w


def candidate_features(
    claim: str, texts: Sequence[str], docs: Sequence[object], positions: Sequence[tuple[int, int]],
    passage_ranks: Sequence[int], members: dict[str, list[tuple[int, float]]], fused: dict[int, float],
) -> list[dict[str, float]]:
    """The features of every candidate sentence. ``docs[i]`` names candidate ``i``'s document,
    ``positions[i]`` is (its sentence index in that document, the document's sentence count),
    ``members`` are the member rankings of :func:`core.retrieve.sentence_rank.member_rankings`
    (candidate position, score) and ``fused`` the shipped fusion's score by candidate position."""
    n = len(texts)
    dense, bm25 = np.zeros(n), np.zeros(n)
    for i, s in members.get("dense", []):
        dense[i] = s
    for i, s in members.get("bm25", []):
        bm25[i] = s
    doc_best: dict[object, float] = {}
    for i, doc in enumerate(docs):
        doc_best[doc] = max(doc_best.get(doc, -1.0), dense[i])
    claim_words = set(content_words(claim))
    dense_max = dense.max() if n else 0.0
    bm25_max = bm25.max() if n else 0.0
    out = []
    for i in range(n):
        idx, n_sent = positions[i]
        doc = docs[i]
        out.append({
            "dense": float(dense[i]), "dense_gap": float(dense[i] - dense_max),
            "bm25": float(bm25[i] / bm25_max) if bm25_max > 0 else 0.0,
            "inv_prank": 1.0 / passage_ranks[i], "fused": float(fused.get(i, 0.0)),
            "relpos": idx / max(1, n_sent - 1), "first": float(idx == 0), "last": float(idx == n_sent - 1),
            "loglen": float(np.log1p(len(texts[i].split()))),
            "cover": len(claim_words & set(content_words(texts[i]))) / max(1, len(claim_words)),
            "doc_best": float(dense[i] == doc_best[doc]), "doc_gap": float(doc_best[doc] - dense[i]),
        })
    return out


def rerank(
    head: SentenceHead, claim: str, cands: Sequence[RankedSentence], rankings: dict[str, list[tuple[int, float]]],
    fused: Sequence[RankedSentence], layouts: Callable[[list[int]], Mapping[int, DocumentLayout]],
) -> list[RankedSentence]:
    """``fused`` (the shipped fusion's order of ``cands``) re-ordered by the head where it
    :meth:`~SentenceHead.admits` the claim, else ``fused`` itself. ``rankings`` are the member
    rankings over ``cands``; ``layouts`` reads the candidate documents' layouts, and is called only
    once the source kind has admitted the claim. Each re-ordered sentence keeps its fused score
    and gains ``scores`` / ``ranks`` ``"fused"`` and ``"head"`` (``search --sentences`` shows both)."""
    kind = source_kind([c.passage for c in cands]) if cands else "given"
    if kind != head.kind:
        return list(fused)
    docs = [c.passage.document_id for c in cands]
    layout = layouts(list(dict.fromkeys(docs)))
    if any(d not in layout for d in docs) or not head.admits(kind, [layout[d].words for d in set(docs)]):
        return list(fused)
    pos = {id(c): i for i, c in enumerate(cands)}
    positions = []
    for c in cands:
        starts = layout[c.passage.document_id].sentence_starts or (0,)
        positions.append((max(0, bisect_right(starts, c.span[0]) - 1), len(starts)))
    feats = candidate_features(claim, [c.text for c in cands], docs, positions, [c.passage_rank for c in cands],
                               rankings, {pos[id(c)]: c.score for c in fused})
    scores = head.scores(feats)
    for rank, c in enumerate(fused, start=1):
        c.scores["fused"], c.ranks["fused"] = c.score, rank
    out = []
    for rank, i in enumerate(np.argsort(-scores, kind="stable").tolist(), start=1):  # ties keep the fused order
        c = cands[i]
        c.scores["head"], c.ranks["head"] = float(scores[i]), rank
        out.append(c)
    return out


def load_sentence_head(mode: str = "hybrid-sentence") -> SentenceHead | None:
    """The shipped head for ``mode`` (``core/retrieve/data/sentence_head.json``), or None."""
    raw = json.loads(resources.files("core.retrieve").joinpath("data/sentence_head.json").read_text())
    spec = raw.get("modes", {}).get(mode)
    if spec is None:
        return None
    unknown = set(spec["weights"]) - set(FEATURES)
    if unknown:
        raise ValueError(f"sentence_head.json names unknown features: {sorted(unknown)}")
    return SentenceHead({k: float(v) for k, v in spec["weights"].items()}, int(spec["max_doc_words"]),
                        spec.get("kind", "abstract"), raw.get("fitted_on", ""))
