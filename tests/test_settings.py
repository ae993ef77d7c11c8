"""The one settings model (core/settings.py): sections, the flat keys of earlier files, one
validation for file, CLI and TUI, and the file's run defaults reaching ``claimscope check``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from core.errors import InputError
from core.settings import Settings, load_settings, save_settings, validate
from core.verify.base import Thresholds
from store import open_db
from store import runs as rq
from tui.cli import app


def test_sections_and_flat_keys_read_the_same(tmp_path):
    nested = tmp_path / "nested.toml"
    nested.write_text('[run]\nmode = "bm25"\ntop_k = 3\n\n[thresholds]\nsupport = 0.7\n\n[ui.keymap]\nrun = "ctrl+r"\n')
    flat = tmp_path / "flat.toml"
    flat.write_text('mode = "bm25"\ntop_k = 3\nsupport_threshold = 0.7\n\n[keymap]\nrun = "ctrl+r"\n')
    a, b = load_settings(nested), load_settings(flat)
    assert a == b and a.mode == "bm25" and a.top_k == 3 and a.support_threshold == 0.7
    assert a.keymap == {"run": "ctrl+r"}
    # saving migrates a flat file to sections, and it reads back the same
    save_settings(b, flat)
    text = flat.read_text()
    assert "[run]" in text and "[thresholds]" in text and "support_threshold" not in text
    assert load_settings(flat) == b


def test_thresholds_have_one_default():
    s, t = Settings(), Thresholds()
    assert (s.support_threshold, s.refute_threshold, s.conflict_threshold) == (t.support, t.refute, t.conflict)
    assert s.thresholds() == t
    from core.workbench import RunOptions

    assert RunOptions.from_settings(Settings(sentence_choice="lexical")).sentence_choice == "lexical"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[run]\ntop_k = 500\n', "'run.top_k' must be between 1 and 100"),
        ('[run]\ndecomposer = "magic"\n', "'run.decomposer' must be one of rules, sentence, llm, atomic"),
        ('[thresholds]\nsupport = 1.5\n', "'thresholds.support' must be between 0 and 1"),
        ('[run]\nmoed = "bm25"\n', "unknown setting 'run.moed'"),
        ('top_k = 3\n[run]\ntop_k = 4\n', "given twice"),
        ('[index]\nchunk_words = 32\nchunk_overlap = 32\n', "must be below"),
        ('[retrieval]\nsentence_choice = "random"\n', "'retrieval.sentence_choice' must be one of lexical, retrieval"),
    ],
)
def test_bad_values_are_refused_naming_the_file(tmp_path, toml, message):
    path = tmp_path / "claimscope.toml"
    path.write_text(toml)
    with pytest.raises(InputError, match=message) as exc:
        load_settings(path)
    assert str(path) in str(exc.value)


def test_validate_is_the_one_check():
    with pytest.raises(InputError, match=r"'run\.mode' must be one of"):
        validate(Settings(mode="telepathy"))
    assert validate(Settings()) == Settings()


@pytest.mark.slow
def test_toml_run_settings_reach_check(tmp_path, data_dir):
    """mode, top_k and decomposer from the file are what the run is made with; verifier too
    (a missing model named only in the file is what check fails on); an option still wins.
    Both the sectioned file and a flat one of an earlier version."""
    runner = CliRunner()
    lines = (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").read_text().splitlines()[:6]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    db = tmp_path / "s.db"
    assert runner.invoke(app, ["--db", str(db), "source", "add", "mini", str(corpus)]).exit_code == 0
    text = "Vitamin D deficiency is common in adults. Exercise improves sleep quality."
    for toml in ('[run]\nmode = "bm25"\ntop_k = 2\ndecomposer = "sentence"\n',
                 'mode = "bm25"\ntop_k = 2\ndecomposer = "sentence"\n'):
        cfg = tmp_path / "claimscope.toml"
        cfg.write_text(toml)
        res = runner.invoke(app, ["--db", str(db), "--config", str(cfg), "check", text, "--format", "json"])
        assert res.exit_code == 0, res.output
        run_id = json.loads(res.stdout)[0]["run_id"]
        config = rq.get_run(open_db(db), run_id).config
        assert (config["mode"], config["k"], config["decomposer"]) == ("bm25", 2, "sentence")
        n_evidence = open_db(db).execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE c.run_id = ? GROUP BY c.id)", [run_id]).fetchone()[0]
        assert n_evidence <= 2

    missing = tmp_path / "no-such-verifier"
    cfg.write_text(f'[run]\nverifier = "{missing}"\n')
    res = runner.invoke(app, ["--db", str(db), "--config", str(cfg), "check", text])
    assert res.exit_code == 5 and "no-such-verifier" in res.output
    res = runner.invoke(app, ["--db", str(db), "--config", str(cfg), "check", text, "--verifier", "embedded",
                              "-k", "1", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert rq.get_run(open_db(db), json.loads(res.stdout)[0]["run_id"]).config["k"] == 1
