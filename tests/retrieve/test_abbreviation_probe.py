"""The corpus-defined abbreviations of benchmarks/abbreviation_probe.py (Schwartz & Hearst 2003),
on SciFact's real abstracts: what it mines, what it rewrites and what it leaves alone."""

from __future__ import annotations

import json

import pytest

from benchmarks.abbreviation_probe import Abbreviations, best_long_form, definitions, valid_short_form


@pytest.fixture(scope="module")
def scifact_abbreviations(data_dir) -> Abbreviations:
    docs = [json.loads(line) for line in (data_dir / "scifact" / "corpus.jsonl").open()]
    return Abbreviations.mine(d["title"] + ". " + " ".join(d["abstract"]) for d in docs)


def test_short_forms_follow_schwartz_hearst():
    assert valid_short_form("HIV") and valid_short_form("IL-6") and valid_short_form("5-HT")
    assert not valid_short_form("n")  # one character
    assert not valid_short_form("see below")  # no capital: a gloss, not an abbreviation
    assert not valid_short_form("ABCDEFGHIJK")  # over 10 characters
    assert not valid_short_form("-AB")  # must start with a letter or digit


def test_best_long_form_matches_letters_right_to_left_from_word_starts():
    assert best_long_form("BMI", "associations of body mass index") == "body mass index"
    assert best_long_form("CR", "mice fed under caloric restriction") == "caloric restriction"
    # the first letter of the short form must begin a word
    assert best_long_form("HT", "weight") is None
    assert best_long_form("XYZ", "body mass index") is None


def test_definitions_read_long_form_before_parenthesis():
    text = ("Reactive oxygen species (ROS) damage DNA. Patients on antiretroviral therapy (ART; n = 12) "
            "were followed (see below).")
    assert list(definitions(text)) == [("ROS", "Reactive oxygen species"), ("ART", "antiretroviral therapy")]


def test_mined_from_scifact(scifact_abbreviations):
    e = scifact_abbreviations.expansions
    assert len(e) > 1000
    assert e["HIV"] == "human immunodeficiency virus"
    assert e["BMI"] == "body mass index"
    assert e["ROS"] == "reactive oxygen species"
    # "HR": hazard ratio 12 times, homologous recombination 11, heart rate 4: no majority, no expansion
    assert "HR" not in e
    assert all(len(v) > len(k) for k, v in e.items())


def test_expand_rewrites_only_what_the_claim_leaves_undefined(scifact_abbreviations):
    a = scifact_abbreviations
    assert a.expand("High BMI raises the risk of gout.") == "High body mass index (BMI) raises the risk of gout."
    assert a.expand("ROSs damage neurons.") == "reactive oxygen species (ROSs) damage neurons."
    # spelled out already, or defined by the claim itself: unchanged
    assert a.expand("Body mass index (BMI) predicts gout.") == "Body mass index (BMI) predicts gout."
    assert a.expand("HIV (the virus) spreads.").startswith("human immunodeficiency virus (HIV)")
    assert a.expand("Smoking causes lung cancer.") == "Smoking causes lung cancer."
