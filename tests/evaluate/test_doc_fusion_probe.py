"""benchmarks/doc_fusion_probe.py and benchmarks/soup_head_refit.py: the pure steps the two
session-35 measurements rest on (a passage ranking read as a document ranking, the document order
of passages, a standardised linear model folded into one layer)."""

from __future__ import annotations

import numpy as np

from benchmarks.doc_fusion_probe import doc_ranking, passages_in_doc_order
from benchmarks.soup_head_refit import fold_standardisation


def test_a_document_takes_its_best_passage_and_keeps_the_member_order():
    doc_of = {10: "a", 11: "b", 12: "a", 13: "c", 14: "b"}
    doc_id = {"a": 0, "b": 1, "c": 2}
    ranked = [(11, 0.9), (10, 0.8), (12, 0.7), (14, 0.6), (13, 0.5)]
    assert doc_ranking(ranked, doc_of, doc_id) == [(1, 0.9), (0, 0.8), (2, 0.5)]


def test_passages_follow_their_documents_then_the_first_stage_order():
    pids_of = {0: [3, 1, 2], 1: [5, 4]}
    first_stage = [(4, 1.0), (2, 0.9), (3, 0.5)]  # passage 1 and 5 are not in it
    got = passages_in_doc_order([(1, 0.8), (0, 0.4)], first_stage, pids_of)
    assert got == [(4, 0.8), (5, 0.8), (2, 0.4), (3, 0.4), (1, 0.4)]


def test_folded_layer_gives_the_logits_of_the_standardised_model():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 5.0, (50, 4))
    mean, scale = X.mean(0), X.std(0)
    coef, intercept = rng.normal(size=(3, 4)), rng.normal(size=3)
    W, b = fold_standardisation(coef, intercept, mean, scale)
    np.testing.assert_allclose(X @ W.T + b, ((X - mean) / scale) @ coef.T + intercept, rtol=1e-10, atol=1e-10)
