"""Runs: claims stream in as stored events; a cancelled run resumes without recomputing."""

from __future__ import annotations

import platform
import threading

import pytest

from core.decompose.base import SentenceDecomposer
from core.errors import InputError
from core.pipeline.runner import Cancelled, Pipeline, verify_claim
from core.retrieve.searcher import Searcher
from core.score.precision import factual_precision
from core.verify.verifier import Verifier
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



def test_claims_are_verified_in_growing_windows_and_announced_one_by_one(mini_db, embedder, splitter, tiny_nli_dir):
    """Issue 18: a run's claims share batched NLI passes in windows of 1, 2, 4, … (capped at
    ``batch_claims``), the first verdict after one claim; each claim still gets its own
    stored verdict event, in claim order. A cancel during a window's retrieval stops after
    the claims retrieved so far (they are verified and stored)."""
    windows: list[int] = []

    class Recording(Verifier):
        def verify_many(self, items, always_sets=False):
            windows.append(len(items))
            return super().verify_many(items, always_sets)

    text = TEXT + " Vitamin D deficiency is common. Aspirin reduces fever."
    pipe = Pipeline(mini_db, SentenceDecomposer(splitter), Searcher(mini_db, lambda: embedder),
                    Recording(load_nli(str(tiny_nli_dir))), k=3, use_cache=False, batch_claims=2)
    seen = []
    run_id = pipe.start(text, listener=seen.append)
    pipe.resume(run_id, seen.append)
    assert windows == [1, 2, 2]
    assert [e.payload["idx"] for e in seen if e.kind == "verdict_ready"] == [0, 1, 2, 3, 4]
    assert all(c.status == "done" for c in rq.run_claims(mini_db, run_id))

    windows.clear()
    cancel = threading.Event()

    def cancel_at_second_claim(event):
        if event.kind == "progress" and event.payload.get("stage") == "retrieving" and event.payload["idx"] == 1:
            cancel.set()

    run_id = pipe.start(text)
    with pytest.raises(Cancelled):
        pipe.resume(run_id, cancel_at_second_claim, cancel)
    assert windows == [1, 1]  # the second window stopped after its first claim
    assert [c.status for c in rq.run_claims(mini_db, run_id)] == ["done", "done", "pending", "pending", "pending"]

def test_single_claim_run_stores_manifest_and_verdict(mini_db, embedder, tiny_nli_dir):
    res = verify_claim(mini_db, Searcher(mini_db, lambda: embedder), Verifier(load_nli(str(tiny_nli_dir))),
                       "Bariatric surgery affects mental health.", k=2)
    rows = mini_db.execute("SELECT role, sha256, model_id, revision FROM model_manifest WHERE run_id = ?", [res.run_id])
    roles = {r[0]: r[1:] for r in rows}
    assert set(roles) == {"embedder", "nli", "machine"} and all(len(roles[m][0]) == 64 for m in ("embedder", "nli"))
    assert roles["machine"][1] and platform.machine() in roles["machine"][2]  # the CPU the run was computed on
    assert res.verdict.label in ("supported", "refuted", "not_enough_info", "conflicting")
    assert mini_db.execute("SELECT count(*) FROM evidence WHERE claim_id = ?", [res.claim_id]).fetchone()[0] == 2


def test_factual_precision():
    assert factual_precision(["supported", "refuted", "supported", "not_enough_info"]) == 0.5
    assert factual_precision([]) == 0.0


def test_verdict_threshold_fit_never_fits_worse_than_the_defaults(data_dir, tiny_nli_dir):
    from core.evaluate.verdicts import evaluate_verdicts, load_climate_fever_claims
    from core.verify.verifier import VERDICTS

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
    # support held at a grid value: only refute and conflict are fitted, so the free fit (whose grid
    # holds every such point) is at least as good on the fitting half
    held = evaluate_verdicts(path=path, verifier=Verifier(load_nli(str(tiny_nli_dir))), seed=0, fix_support=0.5)
    t_held = held["systems"]["fitted"]["thresholds"]
    assert held["fixed_support"] == 0.5 and t_held["support"] == 0.5 and t_held["conflict"] >= max(0.5, t_held["refute"])
    assert fitted["fit_macro_f1"] >= held["systems"]["fitted"]["fit_macro_f1"]
    with pytest.raises(ValueError, match="fix_support"):
        evaluate_verdicts(path=path, verifier=Verifier(load_nli(str(tiny_nli_dir))), fix_support=1.5)


class CountingVerifier(Verifier):
    """The real verifier, counting the claims it verifies (to prove a cache hit makes none).
    Runs verify claims in batches (``verify_many``); ``verify`` is one claim's batch."""

    calls = 0

    def verify_many(self, items, always_sets=False):
        self.calls += len(items)
        return super().verify_many(items, always_sets)


def test_stage_cache_reuses_verified_claims_across_runs(mini_db, embedder, splitter, tiny_nli_dir):
    verifier = CountingVerifier(load_nli(str(tiny_nli_dir)))
    pipe = Pipeline(mini_db, SentenceDecomposer(splitter), Searcher(mini_db, lambda: embedder), verifier, k=4)
    first = pipe.start(TEXT + " Vitamin D deficiency is common.")
    pipe.resume(first)
    calls = verifier.calls
    assert calls == 4
    seen = []
    second = pipe.start(TEXT)
    pipe.resume(second, seen.append)
    assert verifier.calls == calls  # every claim came from the cache
    ready = [e for e in seen if e.kind == "verdict_ready"]
    assert len(ready) == 3 and all(e.payload["cached"] for e in ready)
    a = rq.run_results(mini_db, first)[:3]
    b = rq.run_results(mini_db, second)
    assert [(x["verdict"], x["support"], x["evidence"]) for x in a] == [(x["verdict"], x["support"], x["evidence"]) for x in b]
    # a different top-k is a different manifest key: computed afresh
    other = Pipeline(mini_db, SentenceDecomposer(splitter), Searcher(mini_db, lambda: embedder), verifier, k=2)
    other.resume(other.start(TEXT))
    assert verifier.calls == calls + 3


def test_edited_claim_is_reverified_alone(mini_db, embedder, splitter, tiny_nli_dir):
    verifier = CountingVerifier(load_nli(str(tiny_nli_dir)))
    pipe = Pipeline(mini_db, SentenceDecomposer(splitter), Searcher(mini_db, lambda: embedder), verifier, k=3,
                    use_cache=False)
    run_id = pipe.start(TEXT)
    pipe.resume(run_id)
    before = {c.idx: c for c in rq.run_claims(mini_db, run_id)}
    verdict_ids = {idx: mini_db.execute("SELECT id FROM verdicts WHERE claim_id = ?", [c.id]).fetchall()
                   for idx, c in before.items()}
    calls = verifier.calls
    seen = []
    pipe.reverify_claim(before[1].id, "  KLF4 is expressed in vascular smooth muscle cells. ", seen.append)
    assert verifier.calls == calls + 1
    after = {c.idx: c for c in rq.run_claims(mini_db, run_id)}
    assert after[1].text == "KLF4 is expressed in vascular smooth muscle cells." and after[1].status == "done"
    row = mini_db.execute("SELECT original_text FROM claims WHERE id = ?", [before[1].id]).fetchone()
    assert row[0] == before[1].text
    for idx in (0, 2):  # the other claims' verdicts are untouched
        assert mini_db.execute("SELECT id FROM verdicts WHERE claim_id = ?", [before[idx].id]).fetchall() == verdict_ids[idx]
    assert len(mini_db.execute("SELECT id FROM verdicts WHERE claim_id = ?", [before[1].id]).fetchall()) == 1
    edited = next(e for e in seen if e.kind == "claim_edited")
    assert edited.payload["old_text"] == before[1].text and edited.payload["old_label"] == before[1].verdict
    assert [e.kind for e in seen][-2:] == ["score_updated", "run_finished"]
    with pytest.raises(InputError):
        pipe.reverify_claim(before[1].id, "   ")


def test_failing_stage_is_stored_as_error_and_resumes(mini_db, embedder, splitter, tiny_nli_dir):
    class Failing(Verifier):
        def verify_many(self, items, always_sets=False):
            raise RuntimeError("model exploded")

    searcher = Searcher(mini_db, lambda: embedder)
    bad = Pipeline(mini_db, SentenceDecomposer(splitter), searcher, Failing(load_nli(str(tiny_nli_dir))), use_cache=False)
    run_id = bad.start(TEXT)
    with pytest.raises(RuntimeError):
        bad.resume(run_id)
    err = mini_db.execute("SELECT payload FROM events WHERE run_id = ? AND kind = 'error'", [run_id]).fetchone()
    assert "model exploded" in err[0]
    assert [c.status for c in rq.run_claims(mini_db, run_id)] == ["error", "pending", "pending"]
    good = Pipeline(mini_db, SentenceDecomposer(splitter), searcher, Verifier(load_nli(str(tiny_nli_dir))), use_cache=False)
    good.resume(run_id)
    assert all(c.status == "done" for c in rq.run_claims(mini_db, run_id))


def test_decomposition_is_cached_per_decomposer_and_text(mini_db, embedder, splitter, tiny_nli_dir):
    class Counting(SentenceDecomposer):
        calls = 0

        def decompose(self, text):
            self.calls += 1
            return super().decompose(text)

    decomposer = Counting(splitter)
    pipe = Pipeline(mini_db, decomposer, Searcher(mini_db, lambda: embedder), Verifier(load_nli(str(tiny_nli_dir))))
    text = "Aspirin reduces fever. It was first sold in 1899 [2]."
    a, b = pipe.start(text), pipe.start(text)
    assert decomposer.calls == 1
    assert [(c.text, c.span) for c in rq.run_claims(mini_db, a)] == [(c.text, c.span) for c in rq.run_claims(mini_db, b)]
    cited = mini_db.execute("SELECT citations FROM claims WHERE run_id = ? ORDER BY idx", [b]).fetchall()
    assert [row[0] for row in cited] == [None, "[2]"]
    pipe.start(text + " ")
    assert decomposer.calls == 2  # another text
    # the same decomposer name with other code or settings (an upgraded claimscope, the other
    # pronoun mode) never reads what the old one cached
    decomposer.identity = {"code": "another version"}
    pipe.start(text)
    assert decomposer.calls == 3
    pipe.start(text)
    assert decomposer.calls == 3


def test_the_rules_decomposers_cache_identity_follows_its_code_and_mode():
    from core.decompose import fields, rules
    from core.decompose.base import code_hash
    from models import nlp

    as_written = rules.RulesDecomposer(nlp=lambda text: None, resolve_pronouns=False)
    standalone = rules.RulesDecomposer(nlp=lambda text: None)
    # its rules, how it reads field lines and the sentence boundaries models/nlp.py sets
    assert (as_written.identity["code"] == code_hash(rules.__file__, fields.__file__, nlp.__file__)
            == standalone.identity["code"])
    assert as_written.identity != standalone.identity
    assert code_hash(rules.__file__) != code_hash(rules.__file__, __file__)


def test_run_keeps_the_claim_date_for_the_published_after_flag(pipeline, mini_db):
    """The date of the checked text reaches the inspector's read model (seed 001 §4.1:
    evidence published after the claim is flagged); a non-date is refused before any write."""
    from store.inspect import claim_view, run_claim_views

    runs_before = mini_db.execute("SELECT count(*) FROM runs").fetchone()[0]
    with pytest.raises(InputError, match="not a date"):
        pipeline.start(TEXT, claim_date="last spring")
    assert mini_db.execute("SELECT count(*) FROM runs").fetchone()[0] == runs_before
    run_id = pipeline.start(TEXT, claim_date="2016-05")
    views = run_claim_views(mini_db, run_id)
    assert {v.claim_date for v in views} == {"2016-05"}
    assert claim_view(mini_db, views[0].id).claim_date == "2016-05"
