"""Attribution of cited answers (seed 002) with the real embedded verifier and ExpertQA fixtures."""

from __future__ import annotations

import pytest

from core.score.attribution import Attributor, clean
from tests.conftest import FIXTURES

FILLER = " ".join(f"The committee met on day {i} to discuss the budget of the town library." for i in range(30))


@pytest.fixture(scope="module")
def attributor(splitter):
    from core.decompose.rules import RulesDecomposer
    from models.nli import load_nli

    return Attributor(load_nli("embedded"), splitter, decomposer=RulesDecomposer())


def test_clean_strips_markers_and_urls():
    assert clean("Radium glows [1][2]. See https://x.org/a [3]") == "Radium glows. See"


def test_labels_missing_na_complete_incomplete(attributor):
    sources = {1: "Marie Curie discovered polonium and radium in 1898 together with Pierre Curie.",
               2: None, 3: "The Nile is a river in Africa."}
    assert attributor.attribute_claim(0, "Curie was a physicist.", [], sources).label == "Missing"
    na = attributor.attribute_claim(1, "Curie discovered radium [2].", [2], sources)
    assert na.label == "N/A" and na.check is None  # cited, but the source is unavailable
    assert attributor.attribute_claim(2, "Curie discovered radium [9].", [9], sources).label == "N/A"
    ok = attributor.attribute_claim(3, "Marie Curie discovered radium [1].", [1], sources)
    assert ok.label == "Complete" and ok.check.autoais == 1 and not ok.check.stretched
    bad = attributor.attribute_claim(4, "Marie Curie discovered radium [3].", [3], sources)
    assert bad.label == "Incomplete" and bad.check.autoais == 0
    both = attributor.attribute_claim(5, "Marie Curie discovered radium [2][1].", [2, 1], sources)
    assert both.label == "Complete"  # judged on the available part of the union


def test_long_evidence_is_stretched_to_the_top_two_sentences(attributor):
    evidence = FILLER + " Marie Curie discovered radium in 1898. " + FILLER
    chk = attributor.check("Marie Curie discovered radium.", [evidence])
    assert chk.stretched and len(chk.sentences) == 2
    kept = [s for _, s, _ in chk.sentences]
    assert "Marie Curie discovered radium in 1898." in kept
    assert [i for i, _, _ in chk.sentences] == sorted(i for i, _, _ in chk.sentences)  # document order
    assert chk.autoais == 1


def test_partial_when_some_atomic_facts_are_attributable(attributor):
    sources = {1: "Marie Curie discovered radium in 1898."}
    ca = attributor.attribute_claim(0, "Marie Curie discovered radium and won the Fields Medal [1].", [1], sources)
    assert ca.check.autoais == 0
    assert ca.label == "Partial" and len(ca.atoms) == 2
    assert [ok for _, ok in ca.atoms] == [True, False]


def test_posthoc_retrieval_for_uncited_claims(splitter):
    from models.nli import load_nli

    asked = []

    def retriever(claim):
        asked.append(claim)
        return ["Marie Curie discovered radium in 1898."]

    att = Attributor(load_nli("embedded"), splitter, retriever=retriever)
    ca = att.attribute_claim(0, "Marie Curie discovered radium.", [], {})
    assert ca.label == "Missing" and ca.posthoc is not None and ca.posthoc.autoais == 1
    assert asked == ["Marie Curie discovered radium."]


def test_answer_with_citations_and_its_score(attributor):
    text = ("Marie Curie discovered radium [1]. The Nile flows through Egypt [2]. "
            "Curie won two Nobel Prizes.")
    res = attributor.attribute_answer(text, {1: "Marie Curie discovered polonium and radium.", 2: None})
    assert [c.label for c in res.claims][1:] == ["N/A", "Missing"]
    assert res.claims[0].citations == (1,) and res.claims[0].label == "Complete"
    assert res.score == 1.0  # only the claim with available evidence carries an AutoAIS label
    assert res.labels["Missing"] == 1 and res.detail()["claims"][2]["autoais"] is None


def test_answer_without_citations_has_no_score(attributor):
    res = attributor.attribute_answer("Curie was born in Warsaw. She moved to Paris.", {})
    assert {c.label for c in res.claims} == {"Missing"} and res.score is None


def test_expertqa_fixture_loader_and_eval(attributor):
    from core.evaluate.attribution import evaluate_attribution, load_expertqa, parse_evidence

    assert parse_evidence("[3] https://a.org/x\n\nSome passage.") == (3, "Some passage.")
    assert parse_evidence("[1] https://a.org/x") == (1, None)
    answers = load_expertqa(FIXTURES / "expertqa_dev_5.jsonl")
    assert len(answers) == 5 and answers[0].system == "gpt4"
    assert all(v is None for v in answers[0].sources.values())  # gpt4 cites URLs only: N/A here
    report = evaluate_attribution(path=FIXTURES / "expertqa_dev_5.jsonl", attributor=Attributor(
        attributor.nli, attributor.splitter), limit=2)
    judged = report["systems"]["all"]["claims"]
    assert judged + sum(report["protocol"]["skipped"].values()) == report["claims"]
    assert "gpt4" not in report["systems"]  # none of its claims has evidence we can read
    # F1 is AutoAIS against the experts' "Complete", claim by claim: recount it from the attributor
    att, counts = Attributor(attributor.nli, attributor.splitter), {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for ans in answers[:2]:
        for i, c in enumerate(ans.claims):
            check = att.attribute_claim(i, c.text, c.citations, ans.sources).check if c.worthy else None
            if check is not None:
                gold, pred = c.support == "Complete", bool(check.autoais)
                counts["tp" if gold and pred else "fp" if pred else "fn" if gold else "tn"] += 1
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    everything = report["systems"]["all"]
    assert tp + fp + fn > 0 and sum(counts.values()) == judged  # a score over real judgements
    assert (everything["tp"], everything["fp"], everything["fn"]) == (tp, fp, fn)
    assert everything["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn)) and everything["paper_zero_shot_prf"]


def test_expertqa_loader_names_the_bad_line(tmp_path):
    from core.errors import InputError
    from core.evaluate.attribution import load_expertqa

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answers": {"s": {"claims": [{"x": 1}]}}}\n')
    with pytest.raises(InputError, match="line 1"):
        load_expertqa(bad)


def test_cli_attribute_stores_a_run_that_runs_show_displays(tmp_path):
    import json

    from typer.testing import CliRunner

    from tui.cli import app

    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    fixture = str(FIXTURES / "expertqa_dev_5.jsonl")
    res = runner.invoke(app, ["--db", db, "attribute", "--expertqa", fixture, "--index", "1", "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert set(data["labels"]) == {"Complete", "Partial", "Incomplete", "Missing", "N/A"}
    assert data["labels"]["N/A"] + data["labels"]["Missing"] == 5  # gpt4 cites URLs only: nothing to judge
    assert data["score"] is None
    res = runner.invoke(app, ["--db", db, "runs", "show", str(data["run_id"])])
    assert res.exit_code == 0 and "attribution" in res.stdout
    res = runner.invoke(app, ["--db", db, "attribute", "--expertqa", fixture, "--index", "9"])
    assert res.exit_code == 2 and "5 questions" in res.stderr
