"""The English-only guard (core/language.py, models/langid.py) on real sentences: English from
wiki-vital, other languages from spaCy's own example sentences; and `check --english-only`."""

from __future__ import annotations

import importlib
import json

import pytest
from typer.testing import CliRunner

from core.decompose.base import Claim
from core.language import LanguageGuard, common_words, mark_other_languages, note_for
from store import open_db
from store import runs as rq
from tui.cli import app


@pytest.fixture(scope="module")
def guard() -> LanguageGuard:
    return LanguageGuard()


def examples(lang: str) -> list[str]:
    return list(importlib.import_module(f"spacy.lang.{lang}.examples").sentences)


def test_three_hundred_wiki_vital_summaries_hold_no_sentence_in_another_language(guard, data_dir, splitter):
    """Articles full of foreign names and titles ("Diego María de la Concepción …", "Les Demoiselles
    d'Avignon") are English: none of their sentences is called another language."""
    texts = [json.loads(line)["text"] for line in (data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl").open()]
    flagged = []
    n = 0
    for text, spans in zip(texts, splitter.split(texts), strict=True):
        sentences = [text[a:b] for a, b in spans]
        n += len(sentences)
        flagged += [(s, r.lang) for s, r in zip(sentences, guard.read_text(sentences), strict=True) if r.lang]
    assert n > 1000
    assert flagged == []


def test_a_list_of_names_is_not_read_as_their_language(guard):
    """langid.py reads Roman or Slovenian names as Latin or Slovenian; the guard reads only the
    words that are no names."""
    assert common_words("Augustus, Tiberius, Caligula, Claudius, and Nero.") == ["augustus", "and"]
    for s in ("Augustus, Tiberius, Caligula, Claudius, and Nero.",
              "Other larger urban centers include Maribor, Ptuj, Kranj, Celje, Koper, Novo Mesto, and Jesenice.",
              "Les Demoiselles d'Avignon is a large oil painting created in 1907 by Pablo Picasso."):
        assert guard.read(s).lang is None, s


@pytest.mark.parametrize(("lang", "least"), [("de", 7), ("es", 11), ("fr", 11), ("pl", 5), ("ro", 6), ("ca", 7), ("cs", 27)])
def test_spacy_example_texts_in_european_languages_are_not_english(guard, lang, least):
    """Each language's examples read as one text (an answer pasted in that language): nearly
    every sentence is noted, in that language, and nothing is called English's neighbour."""
    sentences = examples(lang)
    readings = guard.read_text(sentences)
    caught = [r.lang for r in readings if r.lang is not None]
    assert len(caught) >= least, [(s, r) for s, r in zip(sentences, readings, strict=True)]
    assert caught.count(lang) >= len(caught) - 1


def test_other_scripts_are_caught_by_their_letters(guard):
    for lang in ("ja", "zh", "ru", "ar", "he", "hi", "ko", "el", "uk"):
        for s in examples(lang):
            r = guard.read(s)
            assert r.lang is not None and r.how == "script", (lang, s, r)


def test_sentences_too_short_to_tell_are_left_alone_and_the_identifier_loads_only_when_needed():
    guard = LanguageGuard()
    assert guard.read("Paris.").how == "too short" and guard.read("U.S.").lang is None
    assert guard.read("The Eiffel Tower is in Paris, the capital of France.").how == "stop words"
    assert not guard.identifier.loaded  # an English answer's plain sentences never load langid.py
    assert guard.read("Der Hund ist braun und sehr groß.").lang == "de"
    assert guard.identifier.loaded


def test_marked_claims_are_not_checkable_and_keep_an_earlier_note(guard):
    claims = [
        Claim(0, "Madrid es la capital de España y su ciudad más poblada.", (0, 55)),
        Claim(1, "Madrid is the capital of Spain.", (56, 87)),
        Claim(2, "Is Madrid the capital of Spain?", (88, 119), checkable=False, note="question"),
        Claim(3, "Madrid is a capital.", (0, 55), context="Madrid es la capital de España y su ciudad más poblada."),
    ]
    out = mark_other_languages(claims, guard)
    assert [(c.checkable, c.note) for c in out] == [
        (False, note_for("es")), (True, None), (False, "question"), (False, note_for("es"))]
    assert note_for("es") == "not English (reads as Spanish)"


def test_check_english_only_leaves_the_other_languages_unverified(tmp_path):
    """`check --english-only` against a given document: the German and Spanish sentences are
    shown, noted, never judged; the English one is verified. Without it all three are judged."""
    runner = CliRunner()
    doc = tmp_path / "doc.txt"
    doc.write_text("Madrid is the capital and most populous city of Spain. Germany is a country in Central Europe.")
    text = ("Madrid es la capital de España y su ciudad más poblada. Der Hund ist braun und sehr groß. "
            "Madrid is the capital of Spain.")

    cfg = tmp_path / "claimscope.toml"
    cfg.write_text("[run]\nenglish_only = true\n")

    stderr: list[str] = []

    def run(options: tuple[str, ...] = (), flags: tuple[str, ...] = ()) -> tuple[list[dict], dict]:
        res = runner.invoke(app, ["--db", str(tmp_path / "x.db"), *options, "check", text, "--against", str(doc),
                                  "--format", "json", *flags])
        assert res.exit_code == 0, res.output
        stderr.append(res.stderr)
        out = json.loads(res.stdout)[0]
        return out["claims"], rq.get_run(open_db(tmp_path / "x.db"), out["run_id"]).config

    for options, flags in (((), ("--english-only",)), (("--config", str(cfg)), ())):  # the option, or run.english_only
        guarded, config = run(options, flags)
        notes = [c["note"] for c in guarded]
        assert notes[0] == "not English (reads as Spanish)" and notes[1] == "not English (reads as German)"
        assert [c["checkable"] for c in guarded] == [False, False, True]
        assert guarded[0]["verdict"] is None and guarded[2]["verdict"] is not None
        assert config["english_only"] is True
        run_id = open_db(tmp_path / "x.db").execute("SELECT max(id) FROM runs").fetchone()[0]
        roles = dict(open_db(tmp_path / "x.db").execute(
            "SELECT role, sha256 FROM model_manifest WHERE run_id = ?", [run_id]).fetchall())
        assert roles.get("langid")  # the run records the identifier and its hash
    every, config = run(("--config", str(cfg)), ("--all-languages",))  # the option wins over the settings
    assert all(c["checkable"] and c["verdict"] is not None for c in every)
    assert "english_only" not in config  # runs made before the setting existed keep their settings' key
    assert "read as another language" not in "".join(stderr)  # the user chose: no warning
    # nobody chose: every claim is checked, and stderr says which read as another language
    default, _ = run()
    assert all(c["checkable"] and c["verdict"] is not None for c in default)
    last = " ".join(stderr[-1].split())  # the console wraps its lines
    assert "2 of 3 checked claims read as another language (Spanish, German)" in last and "--english-only" in last


def test_a_document_reads_as_its_language_and_an_english_one_as_english(guard, data_dir):
    first = json.loads((data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl").open().readline())["text"]
    assert guard.document_language(first) is None
    assert guard.document_language(" ".join(examples("es"))) == "es"
    assert guard.document_language("\n".join(examples("he"))) == "he"
    assert guard.document_language("Paris.") is None  # too little to tell


def test_check_against_a_document_in_another_language_warns_once_and_checks_anyway(tmp_path):
    """The verifier reads English: a given page in Spanish is still used, and stderr says why its
    claims may end 'not enough info'."""
    spanish = tmp_path / "madrid.txt"
    spanish.write_text(" ".join(examples("es")))
    english = tmp_path / "spain.txt"
    english.write_text("Madrid is the capital and most populous city of Spain.")
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "check", "Madrid is the capital of Spain.",
                                   "--against", str(spanish), "--against", str(english), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "1 of 2 given documents read as another language: 'madrid' (Spanish)" in " ".join(res.stderr.split())
    assert json.loads(res.stdout)[0]["claims"][0]["verdict"] is not None


def test_a_batch_in_every_language_says_once_which_runs_hold_other_languages(tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("Madrid is the capital of Spain. Paris is the capital of France.")
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps(x) + "\n" for x in (
        {"id": "a", "text": "Der Hund ist braun und sehr groß. Madrid is in Spain."},
        {"id": "b", "text": "Madrid es la capital de España y su ciudad más poblada."},
        {"id": "c", "text": "Paris is in France."})))
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "check", "--jsonl", str(batch), "--against", str(doc),
                                   "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    runs = {r["id"]: r["run_id"] for r in map(json.loads, res.stdout.splitlines())}
    stderr = " ".join(res.stderr.split())  # the console wraps its lines
    assert stderr.count("read as another language") == 1
    assert f"2 of 3 runs have claims that read as another language (German, Spanish; runs {runs['a']}, {runs['b']})" in stderr
