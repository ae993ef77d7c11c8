"""A second retrieval stage: the project's NLI cross-encoder re-ranks the top candidates by
its *decisiveness*, P(entailment) + P(contradiction) = 1 - P(neutral).

Why that signal: a sentence that entails or contradicts the claim is exactly the evidence
the verifier needs, while a merely on-topic sentence is judged neutral. The cross-encoder
reads claim and evidence together, which neither BM25 nor the bi-encoder does, at a cost of
one forward pass per pair, so it runs on the top ``top_n`` candidates only. Its order is
fused with the first stage's by weighted RRF (core/retrieve/fusion.py), weights fitted on SciFact
training claims (``core/retrieve/data/fusion.json``, key ``rerank``); the rest keep their order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.retrieve.fusion import FusionParams, fuse
from models.nli import LABELS, NLIModel

Ranked = list[tuple[int, float]]
RERANK_TOP = 10
_NEUTRAL = LABELS.index("neutral")


def decisiveness(nli: NLIModel, claim: str, texts: Sequence[str]) -> np.ndarray:
    """P(entailment) + P(contradiction) of each (text as premise, claim as hypothesis)."""
    if not texts:
        return np.zeros(0, dtype=np.float32)
    probs = nli.predict([(t, claim) for t in texts])
    return 1.0 - probs[:, _NEUTRAL]


def rerank(ranked: Ranked, scores: Sequence[float], params: FusionParams) -> Ranked:
    """``ranked``'s first ``len(scores)`` items re-ordered by fusing their first-stage order
    (member ``first``) with the order of ``scores`` (member ``nli``); the rest follow as
    they were, below every re-ranked item."""
    n = len(scores)
    head, tail = ranked[:n], ranked[n:]
    by_nli = sorted(((pid, float(s)) for (pid, _), s in zip(head, scores, strict=True)), key=lambda x: -x[1])
    fused = fuse({"first": head, "nli": by_nli}, params)
    floor = min((s for _, s in fused), default=0.0)
    return fused + [(pid, floor - 1e-9 * (i + 1)) for i, (pid, _) in enumerate(tail)]
