"""benchmarks/given_support_probe.py: the verdict rules it compares, read from judgements by hand
(no model call): V lets the grounding score alone decide "supported", V2 is the rules without
their conflict step."""

from __future__ import annotations

import numpy as np

from benchmarks.given_support_probe import by_score, readings, rules_without_conflict, three_way_f1
from core.verify.verifier import ClaimVerdict, EvidenceUnit, Judgement, Verifier


def _j(i: int, e: float, c: float, kind: str = "sentence", grounded: bool = True) -> Judgement:
    return Judgement(EvidenceUnit(i, kind, (0,), f"unit {i}", i), np.array([e, 1 - e - c, c], dtype=np.float32),
                     grounded=grounded)


def test_the_score_alone_decides_supported_under_v():
    v = Verifier(None)  # the rules' thresholds: support .60, refute and conflict .65
    strong = [_j(1, 0.80, 0.05), _j(2, 0.02, 0.90)]
    # the learned layer may call it refuted: V supports it, by the unit of P(E) .80
    assert by_score(v, ClaimVerdict("refuted", -0.88, strong[1], strong)) == "supported"
    weak = [_j(1, 0.55, 0.05), _j(2, 0.05, 0.70)]
    assert by_score(v, ClaimVerdict("supported", 0.5, weak[0], weak)) == "not_enough_info"
    assert by_score(v, ClaimVerdict("refuted", -0.65, weak[1], weak)) == "refuted"  # kept from the learned verdict
    # a unit that does not name the subject never decides
    assert by_score(v, ClaimVerdict("supported", 0.9, None, [_j(1, 0.95, 0.0, grounded=False)])) == "not_enough_info"
    # V2: the rules say conflicting where strong units disagree; without the conflict step, support wins
    both = [_j(1, 0.70, 0.05), _j(2, 0.05, 0.70)]
    verdict = ClaimVerdict("conflicting", 0.0, None, both)
    assert v.decide_staged(list(both)).label == "conflicting"
    assert rules_without_conflict(v, verdict) == "supported"
    assert readings(v, ClaimVerdict("not_enough_info", 0.0, None, weak))["V2"] == "refuted"


def test_three_way_f1_counts_conflicting_as_an_error():
    gold = ["supported", "refuted", "not_enough_info"]
    assert three_way_f1(gold, gold) == 1.0
    assert three_way_f1(gold, ["supported", "conflicting", "not_enough_info"]) == 2 / 3
