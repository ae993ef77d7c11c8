"""A passage scored by its best sentence, fused with the passage-level fusion.

Why: a claim is usually about one sentence of a document, while the dense retriever embeds a
whole 128-word passage (title + text) into one vector, which dilutes that sentence among the
rest; on SciFact, whose abstracts are long, most of the hybrid's document misses at rank 5
were gold abstracts at ranks 6–20 (SciFact dev: R@5 .906, R@20 .981). The cosine between the
claim and the passage's *most similar sentence* (MaxP-style aggregation of sentence scores
into a passage score, Dai & Callan 2019, here at sentence rather than window granularity)
sees that sentence directly. Scoring every sentence of the corpus would need a sentence
index; scoring the sentences of the top ``SENTENCE_SCORE_POOL`` fused passages needs only
their embeddings (each distinct sentence embedded once per searcher, through the cache).

The second fusion is fitted like the first (core/retrieve/fusion.py, grid with each member
alone, SciFact training claims only; ``core/retrieve/data/fusion.json``, key
``passage_sentences``): member ``fused`` is the first fusion's whole ranking, member
``sentence`` the pool ranked by best-sentence cosine; a passage below the pool keeps only its
first-fusion score, so it never overtakes a pool passage under min-max or RRF fusion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from core.retrieve.fusion import PLAIN_RRF, FusionParams, fuse, load_fusion
from store.records import StoredPassage

Ranked = list[tuple[int, float]]  # (passage id, score), best first
SENTENCE_SCORE_POOL = 20  # fused passages whose sentences are scored (SciFact dev R@20 .981)
FUSION_KEY = "passage_sentences"  # the fitted rule's key in core/retrieve/data/fusion.json


def load_params() -> FusionParams | None:
    """The shipped fitted rule, or None when fusion.json has none (the stage is then skipped:
    an unfitted second fusion is never applied)."""
    params = load_fusion(key=FUSION_KEY)
    return None if params is PLAIN_RRF else params


def best_sentence_ranking(
    query_vec: np.ndarray, passages: Sequence[StoredPassage], encode: Callable[[list[str]], np.ndarray],
) -> Ranked:
    """``passages`` ranked by the cosine of their most similar sentence to the query (vectors
    L2-normalised by ``encode``); a passage without sentences is scored on its whole text."""
    texts = [p.sentence_texts() or [p.text] for p in passages]
    flat = [t for ts in texts for t in ts]
    if not flat:
        return []
    sims = encode(flat) @ query_vec
    out, pos = [], 0
    for p, ts in zip(passages, texts, strict=True):
        out.append((p.id, float(np.max(sims[pos : pos + len(ts)]))))
        pos += len(ts)
    return sorted(out, key=lambda x: -x[1])


def with_best_sentence(
    fused: Ranked, passages: Mapping[int, StoredPassage], query_vec: np.ndarray,
    encode: Callable[[list[str]], np.ndarray], params: FusionParams, pool: int = SENTENCE_SCORE_POOL,
) -> tuple[Ranked, Ranked]:
    """(the re-fused ranking, the pool's best-sentence ranking). ``passages`` must hold the top
    ``pool`` of ``fused``."""
    top = [passages[pid] for pid, _ in fused[:pool] if pid in passages]
    sentence = best_sentence_ranking(query_vec, top, encode)
    if not sentence:
        return fused, []
    return fuse({"fused": fused, "sentence": sentence}, params), sentence
