"""One spaCy load per process (models.nlp.SpacyPipeline): every user gets the output of the
separate load it replaces, and a workbench run loads the model once."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, ROOT


@pytest.fixture(scope="module")
def shared():
    from models.nlp import SpacyPipeline

    return SpacyPipeline()


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Real answers and passages: the speed benchmark's answer, FActScore bios, wiki-vital summaries."""
    out = [(ROOT / "benchmarks" / "data" / "answer_150_words.txt").read_text(encoding="utf-8")]
    out += [json.loads(line)["output"] for line in (FIXTURES / "factscore_dev_4.jsonl").open(encoding="utf-8")]
    out += [json.loads(line)["text"] for line in list((FIXTURES / "wiki_vital_summaries_300.jsonl").open(encoding="utf-8"))[:12]]
    return out


@pytest.fixture(scope="module")
def claims(texts) -> list[str]:
    from core.decompose.rules import RulesDecomposer

    found = [c.text for t in texts[:3] for c in RulesDecomposer().decompose(t) if c.checkable]
    assert len(found) > 30
    return [*found, "The Eiffel Tower is in Berlin.", "Arctic icemelt is natural.", "", "42."]


def test_rules_decomposer_on_the_shared_pipeline_is_unchanged(shared, texts):
    from core.decompose.rules import RulesDecomposer

    alone, on_shared = RulesDecomposer(), RulesDecomposer(nlp=shared)
    for text in texts:
        assert on_shared.decompose(text) == alone.decompose(text)


def test_splitter_subject_terms_claim_subject_and_entities_are_unchanged(shared, texts, claims):
    from models.nlp import SpacyClaimSubject, SpacyEntities, SpacySentenceSplitter, SubjectTerms

    assert SpacySentenceSplitter(pipeline=shared).split(texts) == SpacySentenceSplitter().split(texts)
    # more texts than one batch of 64: the shared pipe forms the batches Language.pipe would
    many = [s for t in texts for s in t.split(". ")]
    assert len(many) > 64
    assert SpacySentenceSplitter(pipeline=shared).split(many) == SpacySentenceSplitter().split(many)
    for alone, on_shared in [
        (SubjectTerms(), SubjectTerms(pipeline=shared)),
        (SpacyClaimSubject(), SpacyClaimSubject(pipeline=shared)),
        (SpacyEntities(), SpacyEntities(pipeline=shared)),
    ]:
        assert [on_shared(c) for c in claims] == [alone(c) for c in claims]
    ner = SpacyEntities(pipeline=shared)
    assert ner("Barack Obama was born in Hawaii.") == ["Barack Obama", "Hawaii"]
    assert [ner(t) for t in texts[3:6]] == [SpacyEntities()(t) for t in texts[3:6]]


def test_a_workbench_run_loads_spacy_once(mini_db, monkeypatch, tmp_path):
    """Decomposition (rules), retrieval's claim subject (hybrid) and the grounding guard's
    subject terms all parse with the one pipeline; NER and the splitter reuse it too."""
    import spacy

    from core.settings import Settings
    from core.workbench import RunOptions, Workbench
    from store import open_db
    from store import runs as rq

    db = open_db(tmp_path / "run.db")  # a copy: the session's mini_db stays without runs
    mini_db.conn.backup(db.conn)

    loads = []
    real_load = spacy.load

    def counting_load(*args, **kwargs):
        loads.append((args, kwargs))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(spacy, "load", counting_load)
    wb = Workbench(Settings(sources=("scifact-mini",), top_k=3))
    options = RunOptions.from_settings(wb.settings).with_(decomposer="rules", mode="hybrid", grounding=True)
    pipeline = wb.pipeline(db, options)
    run_id = pipeline.start("Bariatric surgery leads to negative outcomes in mental health. "
                            "Cholesterol loading induces KLF4 expression in VSMCs.")
    pipeline.resume(run_id)
    assert [c.status for c in rq.run_claims(db, run_id)] == ["done", "done"]
    assert wb.splitter().split(["One. Two."]) == [[(0, 4), (5, 9)]]
    assert wb.entities().entities("Barack Obama was born in Hawaii.") == ["Barack Obama", "Hawaii"]
    assert len(loads) == 1
