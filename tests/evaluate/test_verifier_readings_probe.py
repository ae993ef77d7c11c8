"""benchmarks/verifier_readings_probe.py and benchmarks/grounding_coverage.py's length gate: the
pure steps session 42's three measurements rest on (the symmetric reading's combination, the number
clash, which rows the long-page gate sends to the combination)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.grounding_coverage import doc_words, gated
from benchmarks.verifier_readings_probe import Reading, number_clash, symmetric
from models.nli import CONTRADICT, ENTAIL, NEUTRAL, WindowedPrediction


def test_symmetric_keeps_the_smaller_contradiction_and_moves_the_rest_to_neutral():
    fwd = np.array([[0.05, 0.05, 0.90], [0.10, 0.20, 0.70]])
    rev = np.array([[0.10, 0.70, 0.20], [0.00, 0.10, 0.90]])
    out = symmetric(fwd, rev)
    np.testing.assert_allclose(out[:, CONTRADICT], [0.20, 0.70])
    np.testing.assert_allclose(out[:, ENTAIL], fwd[:, ENTAIL])  # entailment is the forward reading's
    np.testing.assert_allclose(out[:, NEUTRAL], [0.75, 0.20])
    np.testing.assert_allclose(out.sum(axis=1), 1.0)


@pytest.mark.parametrize(("claim", "evidence", "clash"), [
    ("Einstein received the Nobel Prize in 1935.", "He received the 1921 Nobel Prize in Physics.", True),
    ("Einstein received the Nobel Prize in 1921.", "He received the 1921 Nobel Prize in Physics.", False),
    ("Einstein received the Nobel Prize in 1921.", "He received the Nobel Prize in Physics.", False),  # silent
    ("Einstein was a physicist.", "He received the 1921 Nobel Prize in Physics.", False),  # no number claimed
    ("The town had 1,200 residents in May.", "In 1990 the town had 1200 residents.", False),  # "1,200" = "1200"
])
def test_a_number_clash_needs_numbers_on_both_sides_and_one_missing(claim, evidence, clash):
    assert number_clash(claim, evidence) is clash


class _Fixed:
    """A stand-in verifier: every pair reads the same forward probabilities; reversed pairs
    (claim as premise) read ``reverse``."""

    ref = None

    def __init__(self, forward, reverse):
        self.forward, self.reverse, self.seen = np.array(forward), np.array(reverse), []

    def predict(self, pairs, batch_size=32):
        self.seen.extend(pairs)
        return np.array([self.reverse if p.startswith("CLAIM") else self.forward for p, _ in pairs])

    def predict_long(self, pairs, batch_size=32):
        return [WindowedPrediction(self.forward, 1, 2, (4, 9)) for _ in pairs]


def test_the_symmetric_reading_reverses_only_contradicted_pairs_over_their_deciding_window():
    nli = _Fixed([0.1, 0.1, 0.8], [0.2, 0.7, 0.1])
    out = Reading(nli, "symmetric", floor=0.25).predict_long([("abcdWINDOWxyz", "CLAIM one")])
    assert nli.seen == [("CLAIM one", "WINDO")]  # the forward pass's deciding span, as the hypothesis
    np.testing.assert_allclose(out[0].probs, [0.1, 0.8, 0.1])
    quiet = _Fixed([0.8, 0.1, 0.1], [0.0, 0.0, 1.0])
    assert Reading(quiet, "symmetric", floor=0.25).predict([("e", "CLAIM")]).tolist() == [[0.8, 0.1, 0.1]]
    assert quiet.seen == [("e", "CLAIM")]  # below the floor: no reverse pass


def test_the_number_reading_moves_entailment_to_contradiction_only_where_numbers_clash():
    nli = _Fixed([0.7, 0.2, 0.1], [0.0, 0.0, 1.0])
    reading = Reading(nli, "numbers")
    out = reading.predict([("He won the prize in 1921.", "He won the prize in 1935."),
                           ("He won the prize in 1921.", "He won the prize in 1921."),
                           ("He won the prize.", "He won the prize in 1935.")])
    np.testing.assert_allclose(out, [[0.0, 0.2, 0.8], [0.7, 0.2, 0.1], [0.7, 0.2, 0.1]])
    assert reading.changed == 1 and reading.reverse_pairs == 0


def test_the_length_gate_sends_only_long_documents_and_names_a_missing_one(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"id": i, "doc": " ".join(["w"] * n)}) for i, n in (("a", 250), ("b", 40))))
    words = doc_words([rows])
    assert words == {"a": 250, "b": 40}
    report = {"rows": [{"id": "a"}, {"id": "b"}]}
    assert gated(report, words, 200).tolist() == [True, False]
    assert gated(report, None, None).tolist() == [True, True]
    with pytest.raises(SystemExit, match="no document for 1 rows"):
        gated({"rows": [{"id": "c"}]}, words, 200)
