"""The llm decomposer: the invented-claim guard, duplicates, check-worthiness, the rules
fallback (with fake LLMs), and the embedded SmolLM2 GGUF on the shared fixtures."""

from __future__ import annotations

import json

import pytest

from core.decompose.llm import FACT_SCHEMA, LLMDecomposer, invented_words
from core.decompose.rules import RulesDecomposer
from models.llm import LLMOutputError
from models.registry import ModelRef

SOURCE = "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida."


def test_invented_words_keeps_faithful_claims_and_catches_swaps():
    assert invented_words("Lanny Flaherty was born on December 18, 1949.", SOURCE) == []
    assert invented_words("Lanny Flaherty is an actor.", SOURCE) == []
    assert invented_words("Lanny Flaherty is American.", SOURCE) == []
    # a swapped entity, a changed number, an added predicate: each is named
    assert invented_words("Lanny Flaherty was born in Tampa.", SOURCE) == ["tampa"]
    assert invented_words("Lanny Flaherty was born in 1950.", SOURCE) == ["1950"]
    assert invented_words("Lanny Flaherty won an Oscar.", SOURCE) == ["won", "oscar"]
    # light stemming: inflections of source words are not invented
    assert invented_words("He appeared in films.", "He has appeared in numerous films.") == []
    assert invented_words("She appears in a film.", "She appeared in films.") == []
    # a number must match as a whole, not as a part of another number
    assert invented_words("It has 18 rooms.", "It has 180 rooms.") == ["18"]


class FakeLLM:
    """Stands in for models.llm.LLM: returns canned answers (or raises) per call."""

    ref = ModelRef("llm", "fake", None)

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts = []

    def generate_json(self, messages, schema, max_tokens=256, on_token=None):
        assert schema == FACT_SCHEMA
        self.prompts.append(messages)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


def _decomposer(answers, rules):
    return LLMDecomposer(FakeLLM(answers), fallback_factory=lambda: rules)


TEXT = "Marie Curie was a physicist. She discovered radium and polonium in 1898. Was she French?"


def test_faithful_facts_kept_with_spans_and_both_forms_invented_and_duplicates_dropped(rules):
    dec = _decomposer([
        {"facts": [{"fact": "Marie Curie was a physicist.", "standalone": "Marie Curie was a physicist."}]},
        {"facts": [
            {"fact": "She discovered radium.", "standalone": "Marie Curie discovered radium"},
            {"fact": "She discovered polonium in 1898.", "standalone": "Marie Curie discovered polonium in 1898."},
            {"fact": "She discovered uranium.", "standalone": "Marie Curie discovered uranium."},  # invented
            {"fact": "She discovered radium.", "standalone": "marie curie discovered RADIUM."},  # duplicate
            {"fact": "Curie was a physicist.", "standalone": "Curie was a physicist."},  # restates the context
            {"fact": "Radium.", "standalone": "Radium."},  # a bare name
        ]},
    ], rules)
    claims = dec.decompose(TEXT)
    assert [c.text for c in claims] == [
        "Marie Curie was a physicist.", "Marie Curie discovered radium.",
        "Marie Curie discovered polonium in 1898.", "Was she French?",
    ]
    second = TEXT.index("She discovered")
    assert claims[1].span == (second, second + len("She discovered radium and polonium in 1898."))
    assert claims[1].context == "She discovered radium."  # the contextualised (DnD) form
    assert [c.idx for c in claims] == [0, 1, 2, 3]
    assert claims[3].checkable is False and claims[3].note == "question"
    assert len(dec.llm.prompts) == 2  # the question was never sent to the LLM
    assert dec.warnings == []
    # the sentence before is shown as context, fenced as data
    user = dec.llm.prompts[1][-1][1]
    assert any(getattr(p, "label", None) == "CONTEXT" and "physicist" in p.text for p in user)


def test_unusable_output_falls_back_to_rules_and_says_so(rules):
    dec = _decomposer([LLMOutputError("cut off"), {"facts": [{"fact": "x", "standalone": "Bees invented jazz."}]}], rules)
    claims = dec.decompose(TEXT)
    expected = [c for c in rules.decompose(TEXT)]
    assert [c.text for c in claims] == [c.text for c in expected]
    assert [c.span for c in claims] == [c.span for c in expected]
    assert claims[0].note == "llm output unusable: cut off; rules decomposer used"
    assert claims[1].note.startswith("llm wrote no claim faithful to the sentence")
    assert len(dec.warnings) == 2 and dec.warnings[0].startswith("sentence 1: llm output unusable")


def test_a_cut_off_answer_keeps_its_completed_facts(rules):
    raw = '{"facts": [{"fact": "Curie won two Nobel Prizes.", "standalone": "Curie won two Nobel Prizes."}, {"fact": "Cur'
    dec = _decomposer([LLMOutputError("cut off", raw)], rules)
    (claim,) = dec.decompose("Curie won two Nobel Prizes.")
    assert claim.text == "Curie won two Nobel Prizes." and claim.note is None and dec.warnings == []


def test_a_malformed_answer_is_a_failure_not_a_crash(rules):
    dec = _decomposer([{"facts": [{"wrong": 1}]}, {"nothing": []}], rules)
    claims = dec.decompose("Curie won two Nobel Prizes. Curie was born in Warsaw.")
    assert [c.text for c in claims] == ["Curie won two Nobel Prizes.", "Curie was born in Warsaw."]
    assert all("rules decomposer used" in c.note for c in claims)


# ------------------------------------------------------------------ the embedded GGUF


@pytest.fixture(scope="module")
def llm_decomposer(rules):
    from models.llm import load_llm

    # a short token budget keeps the test fast; a cut-off answer keeps its completed facts
    return LLMDecomposer(load_llm("embedded"), fallback_factory=lambda: rules, max_tokens=120)


def _fixture_answers(data_dir):
    fs = [json.loads(line)["output"] for line in (data_dir / "fixtures" / "factscore_dev_4.jsonl").open()]
    fc = [json.loads(line)["response"] for line in (data_dir / "fixtures" / "factcheck_gpt_dev_3.jsonl").open()]
    return fs[:1] + fc[:1]


def test_fixture_answers_through_the_embedded_llm(llm_decomposer, data_dir):
    for text in _fixture_answers(data_dir):
        text = text.split(". ")[0] + "."  # keep the test short: the first sentence
        claims = llm_decomposer.decompose(text)
        assert claims, text
        for c in claims:
            s, e = c.span
            assert 0 <= s < e <= len(text) and text[s:e].strip() == text[s:e]
            assert c.checkable or c.note  # not checkable always says why
            if c.checkable and not (c.note and "rules decomposer used" in c.note):
                # an LLM claim passed the guard: nothing in it is absent from its sentence + context
                assert invented_words(c.text, text[: e]) == []
                assert c.context
        assert len({c.text.lower() for c in claims}) == len(claims)  # duplicates merged


def test_cli_decompose_jsonl_batch_and_bad_input(tmp_path):
    from typer.testing import CliRunner

    from tui.cli import app

    batch = tmp_path / "answers.jsonl"
    batch.write_text(json.dumps({"id": "a", "text": "Curie won two Nobel Prizes. Was she French?"}) + "\n"
                     + json.dumps({"text": "Paris is in France."}) + "\n")
    res = CliRunner().invoke(app, ["decompose", "--jsonl", str(batch), "--decomposer", "sentence"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(r["id"], r["text"], r["checkable"]) for r in rows] == [
        ("a", "Curie won two Nobel Prizes.", True), ("a", "Was she French?", True), ("2", "Paris is in France.", True)]
    batch.write_text('{"id": "x"}\n')
    res = CliRunner().invoke(app, ["decompose", "--jsonl", str(batch)])
    assert res.exit_code == 2 and "line 1" in res.stderr and "'text'" in res.stderr
    res = CliRunner().invoke(app, ["decompose", "some text", "--decomposer", "llm", "--llm", str(tmp_path / "no.gguf")])
    assert res.exit_code == 5 and "does not exist" in res.stderr
