"""Ranking metrics with trec_eval semantics and binary relevance (seed 000 §1.3, App. B)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def recall_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Share of the gold items found in the top k (0 when there is no gold item)."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & gold) / len(gold)


def ndcg_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{i≤k} rel_i / log2(i + 1), binary rel_i."""
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / idcg


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]), as numpy's default."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def dedupe(items: Sequence[str]) -> list[str]:
    """First occurrence order: passage rankings → document rankings."""
    return list(dict.fromkeys(items))
