"""Agreement statistics on textbook tables, and model-vs-human agreement from stored annotations."""

from __future__ import annotations

import pytest

from core.errors import NotFoundError
from core.pipeline.stored import import_labels, runs_agreement
from core.score.agreement import agreement, cohen_kappa, confusion, krippendorff_alpha_nominal


def test_cohen_kappa_textbook():
    # 50 items: yes/yes 20, no/no 15, A yes–B no 5, A no–B yes 10 → p_o .7, p_e .5, κ = .4
    a = ["y"] * 20 + ["n"] * 15 + ["y"] * 5 + ["n"] * 10
    b = ["y"] * 20 + ["n"] * 15 + ["n"] * 5 + ["y"] * 10
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None  # p_e = 1: undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa(["x"], [])


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": two observers, binary
# data, 10 units → α = 0.095; four observers with missing values, 12 units → α = 0.743.
A2 = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
B2 = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
FOUR = [  # rows = units, columns = observers A–D; None = missing
    [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, 3, None, None],
]


def test_krippendorff_alpha_textbook():
    assert krippendorff_alpha_nominal(list(zip(A2, B2, strict=True))) == pytest.approx(0.095, abs=5e-4)
    assert krippendorff_alpha_nominal(FOUR) == pytest.approx(0.743, abs=5e-4)
    assert cohen_kappa(A2, B2) == pytest.approx(0.04 / 0.44)  # p_o .6, p_e .56
    assert krippendorff_alpha_nominal([[1, 1], [1, 1]]) is None  # one value only: D_e = 0
    assert krippendorff_alpha_nominal([[1], [None, 2]]) is None  # nothing pairable


def test_confusion_and_binary_view():
    pairs = [("supported", "supported"), ("refuted", "not_enough_info"), ("not_enough_info", "supported"),
             ("refuted", "refuted")]
    ag = agreement(pairs)
    assert ag.n == 4 and ag.observed == 0.5
    assert ag.confusion["refuted"]["not_enough_info"] == 1 and ag.confusion["supported"]["supported"] == 1
    b = agreement(pairs, binary=True)
    assert b.labels == ("supported", "not_supported") and b.observed == 0.75
    assert b.confusion["not_supported"]["supported"] == 1
    with pytest.raises(ValueError, match="not in"):
        confusion(["x"], ["supported"], ("supported",))
    empty = agreement([])
    assert empty.n == 0 and empty.kappa is None and empty.observed is None


def test_agreement_from_stored_annotations(tmp_path):
    from store import open_db
    from store import runs as rq
    from store.db import write_tx

    db = open_db(tmp_path / "a.db")
    model = ["supported", "refuted", "not_enough_info", "supported"]
    human = {0: "supported", 1: "refuted", 2: "refuted", 3: "not_enough_info"}
    with write_tx(db):
        run_id = rq.create_run(db, "text", {})
        other = rq.create_run(db, "unlabelled", {})
        for i, label in enumerate(model):
            cid = rq.add_claim(db, run_id, i, f"claim {i}")
            rq.add_verdict(db, cid, label, 0.0, "m", None, None, None, {})
        assert import_labels(db, run_id, human, origin="factscore") == 4
    result = runs_agreement(db, [run_id, other])
    ag = result["runs"][run_id]
    assert ag.n == 4 and ag.observed == 0.5 and ag.origins == {"factscore": 4}
    assert ag.kappa == pytest.approx(cohen_kappa(list(human.values()), model))
    assert result["runs"][other].n == 0 and result["all"].n == 4
    with pytest.raises(NotFoundError):
        runs_agreement(db, [999])


def test_cli_agreement(tmp_path):
    """`claimscope agreement`: exit 3 for an unknown run, a clear message without annotations, JSON."""
    import json

    from typer.testing import CliRunner

    from core.pipeline.stored import import_labels as imp
    from store import open_db
    from store import runs as rq
    from store.db import write_tx
    from tui.cli import app

    path = tmp_path / "c.db"
    db = open_db(path)
    with write_tx(db):
        run_id = rq.create_run(db, "t", {})
        bare = rq.create_run(db, "u", {})
        for i, label in enumerate(["supported", "refuted"]):
            cid = rq.add_claim(db, run_id, i, f"c{i}")
            rq.add_verdict(db, cid, label, 0.0, "m", None, None, None, {})
        imp(db, run_id, {0: "supported", 1: "supported"}, origin="test")
    runner = CliRunner()
    res = runner.invoke(app, ["--db", str(path), "agreement", "999"])
    assert res.exit_code == 3 and "no run 999" in res.stderr
    res = runner.invoke(app, ["--db", str(path), "agreement", str(bare)])
    assert res.exit_code == 0 and "no human labels" in res.stderr
    res = runner.invoke(app, ["--db", str(path), "agreement", str(run_id), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["all"]["n"] == 2 and data["all"]["observed"] == 0.5


def test_eval_factuality_imports_human_labels_as_annotations(tmp_path, splitter):
    """`eval factuality --store` on the Factcheck-GPT fixture: one run per answer, the human
    labels imported (origin = dataset), agreement computed from them."""
    from core.evaluate.factuality import evaluate_factuality, load_factuality
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from store import open_db
    from tests.conftest import FIXTURES

    path = FIXTURES / "factcheck_gpt_dev_3.jsonl"
    answers, dropped = load_factuality("factcheck-gpt", path)
    assert len(answers) == 3 and dropped == 4  # "unknown" labels are left out
    assert all(c.label in ("supported", "refuted") and c.evidence for a in answers for c in a.claims)
    db = open_db(tmp_path / "f.db")
    report = evaluate_factuality(dataset="factcheck-gpt", paths=[path], verifier=Verifier(load_nli("embedded")),
                                 splitter=splitter, limit=1, db=db, store=True)
    run_id = report["answers"][0]["run_id"]
    n = len(answers[0].claims)
    assert report["claims"] == n and report["n"] == 1
    result = runs_agreement(db, [run_id], binary=True)["runs"][run_id]
    assert result.n == n and result.origins == {"factcheck-gpt": n}
    assert result.observed == pytest.approx(report["claim_agreement"]["accuracy"])
    human = report["answers"][0]["human_precision"]
    assert human == pytest.approx(sum(c.label == "supported" for c in answers[0].claims) / n)
