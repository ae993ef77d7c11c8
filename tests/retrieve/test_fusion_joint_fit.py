"""benchmarks/fusion_joint_fit.py scores thousands of fusion rules with a vectorised copy of the
default's two passage stages; its figures mean something only if the copy ranks as the product
does. Checked here against core.retrieve.fusion.fuse on random claims, for RRF and min-max rules."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.fusion_joint_fit import doc_metrics, stage1, stage2_docs, to_claim
from core.evaluate.metrics import dedupe, ndcg_at_k, recall_at_k
from core.retrieve.fusion import FusionParams, fuse
from core.retrieve.sentence_score import SENTENCE_SCORE_POOL

FIRST = [FusionParams("rrf", 5, {"bm25": 0.45, "dense": 0.55}), FusionParams("rrf", 1, {"bm25": 0.75, "dense": 0.25}),
         FusionParams("minmax", 0, {"bm25": 0.6, "dense": 0.4})]
SECOND = [FusionParams("minmax", 0, {"fused": 0.5, "sentence": 0.5}), FusionParams("rrf", 1, {"fused": 0.4, "sentence": 0.6}),
          FusionParams("minmax", 0, {"fused": 1.0, "sentence": 0.0})]


def random_claim(rng: np.random.Generator, n_passages: int = 90, depth: int = 50):
    """Members over overlapping top lists; passages two to a document; 2 gold documents."""
    bm25_ids = rng.choice(n_passages, depth, replace=False)
    dense_ids = rng.choice(n_passages, depth, replace=False)
    members = {"bm25": [(int(p), float(s)) for p, s in zip(bm25_ids, np.sort(rng.random(depth) * 20)[::-1], strict=True)],
               "dense": [(int(p), float(s)) for p, s in zip(dense_ids, np.sort(rng.random(depth))[::-1], strict=True)]}
    best_of = rng.random(n_passages)
    doc_of = np.arange(n_passages) // 2
    gold = rng.choice(doc_of[list(bm25_ids[:8]) + list(dense_ids[:8])], 2, replace=False)
    claim = to_claim(members, best_of, doc_of, np.unique(gold))
    return claim, members, best_of, doc_of


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_stages_rank_as_the_product(seed):
    rng = np.random.default_rng(seed)
    claim, members, best_of, doc_of = random_claim(rng)
    gold = {str(g) for g in claim.gold}
    for first_rule in FIRST:
        order, s1 = stage1(claim, first_rule)
        docs = stage2_docs(claim, order, s1, SECOND)
        recall, ndcg = doc_metrics(docs, claim.gold)
        first = fuse(members, first_rule)
        pool = [pid for pid, _ in first[:SENTENCE_SCORE_POOL]]
        sentence = sorted(((pid, float(best_of[pid])) for pid in pool), key=lambda x: -x[1])
        for i, second_rule in enumerate(SECOND):
            final = fuse({"fused": first, "sentence": sentence}, second_rule)
            want = dedupe([str(doc_of[pid]) for pid, _ in final])
            got = dedupe([str(d) for d in docs[i]])
            assert got[:10] == want[:10], (first_rule, second_rule)
            assert recall[i] == pytest.approx(recall_at_k(want, gold, 5))
            assert ndcg[i] == pytest.approx(ndcg_at_k(want, gold, 10))
