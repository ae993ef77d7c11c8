"""Exporting a verified run (JSONL lossless, CSV a row per claim, Markdown report), from the
core and through `claimscope runs export|delete`, plus the bad inputs of those commands."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from core.decompose.base import SentenceDecomposer
from core.errors import InputError, NotFoundError
from core.pipeline.export import to_csv, to_jsonl, to_markdown
from core.pipeline.runner import Pipeline
from core.retrieve.searcher import Searcher
from core.verify.verifier import Verifier
from models.nli import load_nli
from store import open_db
from tests.test_cli import dump
from tui.cli import app

TEXT = "Bariatric surgery leads to negative outcomes in mental health. What about diet?"


@pytest.fixture()
def verified(mini_db, embedder, splitter, tmp_path):
    """A copy of the mini corpus with one finished run: (db path, run id)."""
    path = tmp_path / "export.db"
    db = open_db(path)
    mini_db.conn.backup(db.conn)

    pipe = Pipeline(db, SentenceDecomposer(splitter), Searcher(db, lambda: embedder), Verifier(load_nli()), k=2)
    run_id = pipe.start(TEXT)
    pipe.resume(run_id)
    return path, run_id


def test_exports_carry_claims_verdicts_and_evidence(verified):
    path, run_id = verified
    db = open_db(path)
    lines = [json.loads(x) for x in to_jsonl(db, run_id).splitlines()]
    assert [x["text"] for x in lines] == ["Bariatric surgery leads to negative outcomes in mental health.",
                                          "What about diet?"]
    first = lines[0]
    assert first["verdict"] in ("supported", "refuted", "not_enough_info", "conflicting")
    assert len(first["evidence"]) == 2 and all(e["judgements"] for e in first["evidence"])
    assert {e["rank"] for e in first["evidence"]} == {1, 2}
    rows = list(csv.DictReader(io.StringIO(to_csv(db, run_id))))
    assert [r["claim"] for r in rows] == [x["text"] for x in lines]
    assert rows[0]["verdict"] == first["verdict"] and float(rows[0]["support"]) == pytest.approx(first["support"])
    # The shipped verifier decides this claim (refuted, P(contradict) ≈ .75 on the meta-analysis
    # passage), so there is a deciding judgement for the CSV to carry
    assert first["verdict"] != "not_enough_info" and first["deciding_judgement_id"] is not None
    (deciding,) = [j for e in first["evidence"] for j in e["judgements"] if j["id"] == first["deciding_judgement_id"]]
    assert rows[0]["evidence_text"] == deciding["text"] and deciding["text"]  # the CSV carries what decided
    assert rows[0]["evidence_source"] == "scifact-mini"
    report = to_markdown(db, run_id)
    assert report.startswith(f"# claimscope run {run_id}")
    assert "| 1 | Bariatric surgery leads to negative outcomes in mental health. |" in report
    assert "factual_precision" in report
    with pytest.raises(NotFoundError):
        to_jsonl(db, 999)


def test_cli_export_and_delete(verified, tmp_path):
    path, run_id = verified
    runner = CliRunner()
    out = tmp_path / "report.md"
    res = runner.invoke(app, ["--db", str(path), "runs", "export", str(run_id), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith(f"# claimscope run {run_id}")
    before = dump(path)
    for args, code in (
        (["runs", "export", "999", "--out", str(out)], 3),
        (["runs", "export", str(run_id), "--out", str(tmp_path)], 2),  # a directory
        (["runs", "export", str(run_id), "--out", str(tmp_path / "no" / "x.md")], 2),
        (["runs", "export", str(run_id), "--out", str(out), "--format", "xml"], 2),
        (["runs", "delete", "999"], 3),
    ):
        res = runner.invoke(app, ["--db", str(path), *args])
        assert res.exit_code == code, (args, res.output)
        assert "Traceback" not in res.output
    assert dump(path) == before
    res = runner.invoke(app, ["--db", str(path), "runs", "delete", str(run_id)])
    assert res.exit_code == 0
    db = open_db(path)
    assert db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM passages").fetchone()[0] > 0  # the source stays


def test_export_refuses_unknown_format(verified, tmp_path):
    from core.pipeline.export import export_run

    path, run_id = verified
    with pytest.raises(InputError):
        export_run(open_db(path), run_id, "xml", tmp_path / "x.xml")
