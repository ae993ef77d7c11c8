"""Structured support (seed 003): propagation by mean and product on hand-computed sets, the
document format, and a small document verified with the real embedded verifier."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.score.structured import (
    all_propagations,
    parse_document,
    propagate,
    sentence_score,
    share_unsupported,
    verify_document,
)


def test_sentence_scores_mean_and_clipped_product():
    assert sentence_score([1.0, 0.5], "mean") == pytest.approx(0.75)
    assert sentence_score([1.0, -0.4], "mean") == pytest.approx(0.3)  # mean keeps negatives
    assert sentence_score([0.8, 0.6], "product") == pytest.approx(0.48)
    assert sentence_score([0.9, -0.4], "product") == 0.0  # product clips negatives to 0
    assert sentence_score([], "mean") is None
    with pytest.raises(InputError, match="unknown propagation rule"):
        sentence_score([1.0], "median")


def test_four_propagations_hand_computed():
    B = [[1.0, 0.5], [-0.4]]  # b1: two body claims; b2: one refuted body claim
    got = all_propagations(B)
    assert got["mean-mean"] == pytest.approx((0.75 - 0.4) / 2)  # 0.175
    assert got["mean-product"] == pytest.approx(0.0)  # 0.75 × max(−0.4, 0)
    assert got["product-mean"] == pytest.approx((0.5 + 0.0) / 2)  # 0.25
    assert got["product-product"] == pytest.approx(0.0)
    one = all_propagations([[0.8, 0.6]])
    assert one == pytest.approx({"mean-mean": 0.7, "mean-product": 0.7, "product-mean": 0.48, "product-product": 0.48})
    assert propagate([[0.9], [0.5]], "mean", "product") == pytest.approx(0.45)


def test_not_grounded_is_null_not_zero():
    assert propagate([[], []]) is None and propagate([]) is None
    assert all(v is None for v in all_propagations([[]]).values())
    assert propagate([[], [0.5]]) == pytest.approx(0.5)  # unscored sentences are left out


def test_share_unsupported_counts_score_at_or_below_zero():
    assert share_unsupported([1.0, 0.0, -0.5, None, 0.3]) == pytest.approx(2 / 4)
    assert share_unsupported([None]) is None
    assert share_unsupported([0.2, 0.4], at=0.3) == pytest.approx(0.5)


def test_parse_document_and_its_errors():
    doc = parse_document({
        "lead": ["Curie was a physicist.", "She discovered radium."],
        "body": [{"title": "Career", "sentences": ["She discovered radium [1][2].", "She taught in Paris."]},
                 {"title": "Life", "sentences": "Born in Warsaw [3]."}],
        "sources": {"1": "Radium was discovered by Curie.", "[2]": {"url": "http://x"}, "3": {"text": "Warsaw."}},
    })
    assert doc.lead == "Curie was a physicist. She discovered radium."
    assert [(b.id, b.section, b.text, b.citations) for b in doc.body] == [
        (0, 0, "She discovered radium.", (1, 2)), (1, 0, "She taught in Paris.", ()), (2, 1, "Born in Warsaw.", (3,))]
    assert doc.sources == {1: "Radium was discovered by Curie.", 2: None, 3: "Warsaw."}
    assert parse_document({"lead": "x", "body": ["a [1].", "b."]}).body[0].citations == (1,)
    for bad, msg in [([], "JSON object"), ({"lead": "x"}, "'lead' and 'body'"), ({"lead": 3, "body": ["a"]}, "'lead'"),
                     ({"lead": "x", "body": []}, "non-empty"), ({"lead": "x", "body": [{"title": "t"}]}, "section 1"),
                     ({"lead": "x", "body": ["a"], "sources": {"one": "t"}}, "not a number")]:
        with pytest.raises(InputError, match=msg):
            parse_document(bad)


DOC = {
    "lead": ["Marie Curie discovered radium.", "Marie Curie was born in Madrid."],
    "body": [
        {"title": "Life", "sentences": ["Marie Curie was born in Warsaw in 1867.",
                                        "She moved to Paris to study physics."]},
        {"title": "Research", "sentences": ["In 1898 Marie Curie discovered radium [1].",
                                            "She later led a laboratory in Paris [2]."]},
    ],
    "sources": {"1": "Marie and Pierre Curie announced the discovery of radium in 1898. The element glows.",
                "2": None},
}


def test_verify_document_with_the_embedded_verifier(splitter):
    from core.verify.verifier import Verifier
    from models.nli import load_nli

    report = verify_document(parse_document(DOC), Verifier(load_nli("embedded")), splitter)
    radium, madrid = report.lead
    assert radium.score > 0 and radium.label == "supported"
    assert 2 in radium.evidence_sentences  # "In 1898 Marie Curie discovered radium [1]."
    assert radium.grounds_out and radium.propagated["mean-mean"] > 0
    assert madrid.score <= 0  # the body says Warsaw
    body = {c.sentence: c for c in report.body}
    assert body[2].score > 0 and body[2].citations == (1,)
    assert body[0].score is None and body[3].score is None  # uncited; cited source unavailable
    assert report.unsupported_lead == pytest.approx(0.5)
    assert report.unsupported_body == pytest.approx(0.0)  # one scored body claim, supported
    assert report.mean_propagated["mean-mean"] == pytest.approx(radium.propagated["mean-mean"])
