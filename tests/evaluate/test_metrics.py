"""Ranking metrics against hand-computed values."""

import math

import pytest

from core.evaluate.metrics import dedupe, ndcg_at_k, percentile, recall_at_k
from core.retrieve.searcher import reciprocal_rank_fusion


def test_recall_and_ndcg_by_hand():
    ranked = ["a", "x", "b", "y", "z"]
    gold = {"a", "b", "c"}
    assert recall_at_k(ranked, gold, 1) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, gold, 5) == pytest.approx(2 / 3)
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(ranked, gold, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["a"], {"a"}, 10) == 1.0
    assert recall_at_k(ranked, set(), 5) == 0.0


def test_rrf_by_hand():
    fused = reciprocal_rank_fusion({"bm25": [(1, 9.0), (2, 5.0)], "dense": [(2, 0.9), (3, 0.8)]}, k=60)
    scores = dict(fused)
    assert scores[2] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[3] == pytest.approx(1 / 62)
    assert [pid for pid, _ in fused] == [2, 1, 3]


def test_percentile_and_dedupe():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert dedupe(["d1", "d2", "d1", "d3"]) == ["d1", "d2", "d3"]
