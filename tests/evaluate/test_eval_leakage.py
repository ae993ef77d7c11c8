"""`eval retrieval` with expansion modes and `eval leakage` (seed 000 Table 4) on the SciFact
mini fixtures, with a generator whose pseudo-documents are known: the gold rationale copied
(a leaked expansion) for some claims, an unrelated text for the others."""

from __future__ import annotations

import json

import pytest

from core.evaluate.datasets import load_scifact_claims, load_scifact_pairs
from core.evaluate.leakage import _split_metrics, evaluate_leakage, mean_se
from core.evaluate.retrieval import evaluate_retrieval
from core.retrieve.expand import ExpansionParams
from models.nli import load_nli


class _Oracle:
    """Writes the claim's gold rationale for claims in ``leak`` (ids), a recipe otherwise."""

    def __init__(self, rationale_by_claim: dict[str, str], leak: set[str]) -> None:
        self.by_claim, self.leak, self.calls = rationale_by_claim, leak, 0

    class ref:  # mimics a ModelRef
        @staticmethod
        def manifest():
            return {"role": "llm", "model_id": "oracle-test-llm", "sha256": "1" * 64}

    def generate(self, messages, **kw):
        self.calls += 1
        prompt = messages[-1][1]
        for claim, rationale in self.by_claim.items():
            if claim in prompt:
                return rationale if claim in self.leak else "Mix flour, sugar and eggs, then bake the cake for an hour."
        return "Nothing."


@pytest.fixture(scope="module")
def setup(data_dir):
    claims_path = data_dir / "fixtures" / "scifact_mini_claims.jsonl"
    corpus_path = data_dir / "fixtures" / "scifact_mini_corpus.jsonl"
    claims = [c for c in load_scifact_claims(claims_path) if c.gold_docs][:4]
    rationale = {}
    for ex in load_scifact_pairs(claims_path, corpus_path):
        if ex.label != "neutral":
            rationale.setdefault(ex.hypothesis, ex.premise)
    by_claim = {c.claim: rationale[c.claim] for c in claims}
    leak = {c.claim for c in claims[:2]}
    return claims_path, corpus_path, claims, _Oracle(by_claim, leak)


def test_mean_and_standard_error():
    assert mean_se([2.0]) == {"mean": 2.0, "se": None}
    # values 1, 2, 3: mean 2, sample sd 1, SE = 1/√3
    out = mean_se([1.0, 2.0, 3.0])
    assert out["mean"] == 2.0 and out["se"] == pytest.approx(3 ** -0.5)


def test_split_metrics_partitions_claims_into_matched_and_unmatched(setup):
    _, _, claims, _ = setup
    gold = [sorted(c.gold_docs) for c in claims]
    ranked = [gold[0], ["x"], gold[2], ["y"]]  # the expansion finds claims 0 and 2
    baseline = [["z"]] * 4
    out = _split_metrics(claims, [True, True, False, False], ranked, baseline, [5])
    assert out["matched_share"] == 0.5
    assert out["subsets"]["M"]["n"] == 2 and out["subsets"]["¬M"]["n"] == 2 and out["subsets"]["ALL"]["n"] == 4
    assert out["subsets"]["M"]["expanded"]["recall@5"] == 0.5  # claim 0 found, claim 1 not
    assert out["subsets"]["ALL"]["expanded"]["recall@5"] == 0.5 and out["subsets"]["ALL"]["baseline"]["recall@5"] == 0.0


def test_leakage_eval_finds_the_leaked_expansions_and_reuses_cached_generations(setup, embedder, splitter,
                                                                             tmp_path):
    claims_path, corpus_path, claims, oracle = setup
    nli = load_nli("embedded")
    db = tmp_path / "eval.db"
    params = ExpansionParams(max_tokens=16)
    retrieval = evaluate_retrieval(
        claims_path=claims_path, corpus_path=corpus_path, modes=["bm25", "hyde", "query2doc"], ks=[5],
        index_kinds=["flat"], embedder_factory=lambda: embedder, splitter_factory=lambda: splitter, db_path=db,
        limit=4, llm_factory=lambda: oracle, params=params,
    )
    assert {"bm25", "hyde", "query2doc"} <= set(retrieval["systems"])
    assert "expansion_s_median" in retrieval["systems"]["hyde"] and "expansion_s_median" not in retrieval["systems"]["bm25"]
    calls = oracle.calls
    assert calls == 8  # 4 claims × 2 methods
    report = evaluate_leakage(
        claims_path=claims_path, corpus_path=corpus_path, embedder_factory=lambda: embedder,
        splitter_factory=lambda: splitter, nli=nli, llm_factory=lambda: oracle, ks=[5], params=params,
        db_path=db, limit=4,
    )
    assert oracle.calls == calls  # every expansion came from the stage cache of eval retrieval
    for method in ("query2doc", "hyde"):
        res = report["methods"][method]
        # the two claims given their own gold rationale are matched, the recipe never is
        matched = {d["id"] for d in report["claims"] if d["method"] == method and d["matched"]}
        assert matched == {c.id for c in claims[:2]}
        assert res["matched_share"]["mean"] == 0.5
        assert res["subsets"]["M"]["n"]["mean"] == 2 and res["subsets"]["¬M"]["n"]["mean"] == 2
        assert res["baseline"] == {"query2doc": "bm25", "hyde": "dense"}[method]
        # a pseudo-document that IS the gold rationale retrieves its abstract first
        assert res["subsets"]["M"]["expanded"]["recall@5"]["mean"] == 1.0
    json.dumps(report)  # the report is JSON
