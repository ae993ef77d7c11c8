"""Runs: claims stream in as stored events; a cancelled run resumes without recomputing."""

from __future__ import annotations

import threading

import pytest

from core.decompose import SentenceDecomposer
from core.pipeline import Cancelled, Pipeline, factual_precision, verify_claim
from core.retrieve import Searcher
from core.verify import Verifier
from models.nli import load_nli
from store import runs as rq

TEXT = (
    "Bariatric surgery leads to negative outcomes in mental health. "
    "Cholesterol loading induces KLF4 expression in VSMCs. "
    "Active H. pylori urease has a polymeric structure."
)


@pytest.fixture()
def pipeline(mini_db, embedder, splitter, tiny_nli_dir):
    searcher = Searcher(mini_db, lambda: embedder)
    return Pipeline(mini_db, SentenceDecomposer(splitter), searcher, Verifier(load_nli(str(tiny_nli_dir))), k=3)


def test_run_streams_stored_events_and_scores(pipeline, mini_db):
    seen = []
    run_id = pipeline.start(TEXT, "answer-1", seen.append)
    scores = pipeline.resume(run_id, seen.append)
    kinds = [e.kind for e in seen]
    assert kinds[:4] == ["run_started", "claim_found", "claim_found", "claim_found"]
    assert kinds.count("verdict_ready") == 3 and kinds[-1] == "run_finished"
    stored = [r[0] for r in mini_db.execute("SELECT kind FROM events WHERE run_id = ? ORDER BY id", [run_id])]
    assert stored == kinds  # everything announced was stored first, in the same order
    claims = rq.run_claims(mini_db, run_id)
    assert [c.text for c in claims] == [
        "Bariatric surgery leads to negative outcomes in mental health.",
        "Cholesterol loading induces KLF4 expression in VSMCs.",
        "Active H. pylori urease has a polymeric structure.",
    ]
    assert all(TEXT[c.span[0] : c.span[1]] == c.text for c in claims)
    assert all(c.status == "done" and c.verdict for c in claims)
    assert rq.get_run(mini_db, run_id).status == "done"
    assert scores["claims"] == 3 and sum(scores["verdicts"].values()) == 3
    results = rq.run_results(mini_db, run_id)
    assert all(r["evidence"] is None or r["evidence"]["text"] for r in results)
    n_judgements = mini_db.execute(
        "SELECT count(*) FROM judgements j JOIN claims c ON c.id = j.claim_id WHERE c.run_id = ?", [run_id]
    ).fetchone()[0]
    assert n_judgements >= 3 * 3  # every claim × sentence/passage pair is stored


def test_cancelled_run_resumes_without_recomputing(pipeline, mini_db):
    cancel = threading.Event()

    def stop_after_first(event):
        if event.kind == "verdict_ready":
            cancel.set()

    run_id = pipeline.start(TEXT)
    with pytest.raises(Cancelled):
        pipeline.resume(run_id, stop_after_first, cancel)
    assert rq.get_run(mini_db, run_id).status == "cancelled"
    done = [c for c in rq.run_claims(mini_db, run_id) if c.status == "done"]
    assert len(done) == 1
    first_verdict = mini_db.execute("SELECT id FROM verdicts WHERE claim_id = ?", [done[0].id]).fetchall()

    pipeline.resume(run_id)
    assert all(c.status == "done" for c in rq.run_claims(mini_db, run_id))
    assert mini_db.execute("SELECT id FROM verdicts WHERE claim_id = ?", [done[0].id]).fetchall() == first_verdict
    assert rq.get_run(mini_db, run_id).status == "done"


def test_single_claim_run_stores_manifest_and_verdict(mini_db, embedder, tiny_nli_dir):
    res = verify_claim(mini_db, Searcher(mini_db, lambda: embedder), Verifier(load_nli(str(tiny_nli_dir))),
                       "Bariatric surgery affects mental health.", k=2)
    roles = {r[0]: r[1] for r in mini_db.execute("SELECT role, sha256 FROM model_manifest WHERE run_id = ?", [res.run_id])}
    assert set(roles) == {"embedder", "nli"} and all(len(h) == 64 for h in roles.values())
    assert res.verdict.label in ("supported", "refuted", "not_enough_info", "conflicting")
    assert mini_db.execute("SELECT count(*) FROM evidence WHERE claim_id = ?", [res.claim_id]).fetchone()[0] == 2


def test_factual_precision():
    assert factual_precision(["supported", "refuted", "supported", "not_enough_info"]) == 0.5
    assert factual_precision([]) == 0.0


def test_verdict_threshold_fit_never_fits_worse_than_the_defaults(data_dir, tiny_nli_dir):
    from core.evaluate.verdicts import evaluate_verdicts, load_climate_fever_claims
    from core.verify import VERDICTS

    path = data_dir / "fixtures" / "climate_fever_dev_10.jsonl"
    claims = load_climate_fever_claims(path)
    assert len(claims) == 10 and all(len(s) == 5 for _, _, s in claims)
    report = evaluate_verdicts(path=path, verifier=Verifier(load_nli(str(tiny_nli_dir))), seed=0)
    default, fitted = report["systems"]["default"], report["systems"]["fitted"]
    assert report["split"] == {"seed": 0, "n_fit": 5, "n_eval": 5}
    # the grid holds the default thresholds: the fit is at least as good on the fitting half
    assert fitted["fit_macro_f1"] >= default["fit_macro_f1"]
    t = fitted["thresholds"]
    assert t["conflict"] >= max(t["support"], t["refute"])
    assert set(default["confusion"]) == set(VERDICTS)
    assert sum(sum(row.values()) for row in default["confusion"].values()) == 5
