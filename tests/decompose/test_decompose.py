"""Decomposers: sentence and rules (coordination, apposition, relative clauses, pronouns,
numbers), check-worthiness, spans."""

from __future__ import annotations

import json

import pytest

from core.decompose import SentenceDecomposer, make_decomposer
from core.decompose.rules import RulesDecomposer, check_worthiness
from core.errors import InputError


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


def texts(claims):
    return [c.text for c in claims]


def test_coordinated_predicates_and_objects_share_the_subject(rules):
    out = texts(rules.decompose("Marie Curie was a Polish-born physicist. She discovered radium and polonium and won two Nobel Prizes."))
    assert out == [
        "Marie Curie was a Polish-born physicist.",
        "Marie Curie discovered radium.",
        "Marie Curie discovered polonium.",
        "Marie Curie won two Nobel Prizes.",
    ]


def test_auxiliary_is_shared_only_where_needed_and_dates_stay(rules):
    out = texts(rules.decompose("Marie Curie was a physicist. She was born in Warsaw in 1867 and moved to Paris in 1891."))
    assert out[1:] == ["Marie Curie was born in Warsaw in 1867.", "Marie Curie moved to Paris in 1891."]


def test_appositive_becomes_its_own_claim(rules):
    out = texts(rules.decompose("Albert Einstein, a theoretical physicist, developed the theory of relativity."))
    assert out == ["Albert Einstein developed the theory of relativity.", "Albert Einstein was a theoretical physicist."]


def test_nonrestrictive_relative_clause_and_possessive_pronoun(rules):
    text = (
        "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida. "
        "He has appeared in many films throughout his career, which began in the late 1970s."
    )
    out = texts(rules.decompose(text))
    assert out[0] == "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida."
    assert "Lanny Flaherty has appeared in many films throughout Lanny Flaherty's career." in out
    assert "Lanny Flaherty's career began in the late 1970s." in out


def test_coordinated_subjects_are_not_split(rules):
    assert texts(rules.decompose("Tom and Jerry met in 1940.")) == ["Tom and Jerry met in 1940."]


def test_not_checkable_sentences_are_kept_with_the_reason(rules):
    claims = rules.decompose(
        "Paris is in France. What is the capital of Peru? I'm sorry, but I cannot find information about "
        "that person. You should drink more water. I think Paris is beautiful."
    )
    assert [(c.checkable, c.note) for c in claims] == [
        (True, None), (False, "question"), (False, "abstention"), (False, "advice"), (False, "opinion"),
    ]
    assert check_worthiness("As an AI language model, I cannot browse the web.") == "abstention"
    assert check_worthiness("The Eiffel Tower is 330 metres tall.") is None


def test_spans_point_into_the_input(rules):
    text = "Marie Curie was a physicist. She discovered radium and polonium."
    for c in rules.decompose(text):
        piece = text[c.span[0] : c.span[1]]
        assert piece and piece.split()[-1].rstrip(".") in c.text


def test_factscore_answer_yields_more_atomic_claims_than_sentences(rules, data_dir):
    row = json.loads((data_dir / "fixtures" / "factscore_dev_4.jsonl").read_text().splitlines()[0])
    claims = rules.decompose(row["output"])
    n_sentences = len(row["annotations"])
    assert len(claims) > n_sentences
    assert all(c.text.endswith(".") and c.text[0].isupper() for c in claims if c.checkable)
    assert not any(c.text.startswith(("He ", "She ")) for c in claims)  # pronouns resolved


def test_sentence_decomposer_and_factory(splitter):
    claims = SentenceDecomposer(splitter).decompose("One sentence here. And another one.")
    assert [(c.text, c.span) for c in claims] == [("One sentence here.", (0, 18)), ("And another one.", (19, 35))]
    with pytest.raises(InputError, match="unknown decomposer"):
        make_decomposer("llm-9000", lambda: splitter)


def test_later_conjuncts_keep_the_shared_modifiers(rules):
    out = texts(rules.decompose("Chuck Berry was an American guitarist and singer."))
    assert out == ["Chuck Berry was an American guitarist.", "Chuck Berry was an American singer."]
