"""benchmarks/factcheck_gpt_oracle.py: the Factcheck-GPT verdict measure scored for a reader that
judges the evidence exactly as the annotators did (the ceiling of criterion (5)'s measure)."""

from __future__ import annotations

import pytest

from benchmarks.factcheck_gpt_oracle import oracle, stance_verdict


def test_complete_support_wins_then_refutation_then_nothing():
    assert stance_verdict(["irrelevant", "completely-support", "refute"]) == "supported"
    assert stance_verdict(["partially-support", "refute"]) == "refuted"
    assert stance_verdict(["partially-support", "irrelevant"]) == "not_enough_info"
    assert stance_verdict([]) == "not_enough_info"


def test_the_oracle_on_the_fixture_answers(data_dir):
    """Three real answers: 13 claims, 11 true. 4 of the true claims have no passage that fully
    states them, so even this reader calls them not enough info."""
    got = oracle(data_dir / "fixtures" / "factcheck_gpt_dev_3.jsonl")
    assert got["claims"] == 13
    assert got["pairs"] == {"refuted / refuted": 2, "supported / not_enough_info": 4, "supported / supported": 7}
    assert got["accuracy"] == pytest.approx(9 / 13)


def test_verdicts_are_read_against_the_evidence_and_against_the_truth():
    """A verdict that follows its snippet (not enough info for a true claim the snippet does not
    state) is right about the evidence and wrong about the truth; a generous one is the reverse."""
    from benchmarks.factcheck_gpt_oracle import stance_agreement

    rows = [{"claim": "A", "label": "supported"}, {"claim": "B", "label": "supported"},
            {"claim": "C", "label": "refuted"}]
    stances = {"A": ["completely-support"], "B": ["partially-support"], "C": ["refute"]}
    faithful = stance_agreement(rows, ["supported", "not_enough_info", "refuted"], stances)
    generous = stance_agreement(rows, ["supported", "supported", "refuted"], stances)
    assert faithful["evidence"]["accuracy"] == 1.0 and faithful["truth"]["accuracy"] == pytest.approx(2 / 3)
    assert generous["evidence"]["accuracy"] == pytest.approx(2 / 3) and generous["truth"]["accuracy"] == 1.0
