"""benchmarks/verdict_candidates.py score: a new verifier's judgements with candidate verdict weights
against the shipped pair, paired by claim (issue 16, shipping run9a)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.verdict_candidates import main

SHIPPED = Path(__file__).resolve().parents[2] / "core" / "verify" / "data" / "verdict_model.json"


def row(claim: str, gold: str, probs: list[float]) -> dict:
    """A Climate-FEVER-style claim with one grounded sentence of its subject's own article."""
    return {"bench": "climate-fever", "dataset": "climate-fever", "label": gold, "claim": claim,
            "terms": [claim.split()[0].lower()], "titles": {"1": claim.split()[0]}, "sources": {"1": ""},
            "judgements": [{"pid": 1, "kind": "sentence", "sents": [0], "text": claim, "rank": 1,
                            "probs": probs, "grounded": True}]}


CLAIMS = [f"{name} was a physicist." for name in ("Curie", "Bohr", "Planck", "Dirac", "Fermi", "Pauli")]
ENTAILS, CONTRADICTS = [0.97, 0.02, 0.01], [0.01, 0.02, 0.97]


def write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_the_baseline_decides_from_its_own_rows_and_the_candidate_from_the_new_ones(tmp_path):
    gold = ["supported", "refuted"] * 3
    right = [row(c, g, ENTAILS if g == "supported" else CONTRADICTS) for c, g in zip(CLAIMS, gold, strict=True)]
    wrong = [row(c, g, CONTRADICTS if g == "supported" else ENTAILS) for c, g in zip(CLAIMS, gold, strict=True)]
    new, old = write(tmp_path / "new.jsonl", right), write(tmp_path / "old.jsonl", wrong)
    cand = tmp_path / "candidate.json"  # the same weights on both sides: every difference comes from the judgements
    cand.write_text(SHIPPED.read_text())
    out = tmp_path / "report.json"
    main(["score", "--rows", new, "--baseline-rows", old, "--thresholds", "0.48,0.45,0.8",
          "--baseline-thresholds", "0.6,0.65,0.65", "--models", str(SHIPPED), str(cand), "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["thresholds"] == [0.48, 0.45, 0.8] and report["baseline_thresholds"] == [0.6, 0.65, 0.65]
    base, cf = report["models"][str(SHIPPED)]["climate-fever"], report["models"][str(cand)]["climate-fever"]
    assert base["accuracy"] == 0.0 and base["predicted"] == {"refuted": 3, "supported": 3}
    assert cf["accuracy"] == 1.0 and cf["predicted"] == {"refuted": 3, "supported": 3}
    assert cf["delta_accuracy"] == pytest.approx(1.0) and not cf["loss_accuracy"]
    # without --baseline-rows both sides decide from the same rows: no difference
    main(["score", "--rows", new, "--models", str(SHIPPED), str(cand), "--json", str(out)])
    same = json.loads(out.read_text())["models"][str(cand)]["climate-fever"]
    assert same["accuracy"] == 1.0 and same["delta_accuracy"] == 0.0


def test_baseline_rows_of_other_claims_are_refused(tmp_path):
    rows = [row(c, "supported", ENTAILS) for c in CLAIMS]
    new = write(tmp_path / "new.jsonl", rows)
    old = write(tmp_path / "old.jsonl", rows[::-1])
    with pytest.raises(SystemExit, match="same claims"):
        main(["score", "--rows", new, "--baseline-rows", old, "--models", str(SHIPPED)])
    with pytest.raises(SystemExit, match="three numbers"):
        main(["score", "--rows", new, "--thresholds", "0.5,0.5", "--models", str(SHIPPED)])


def test_a_verdict_fit_uses_the_thresholds_its_verifier_runs_under(tmp_path, monkeypatch):
    """benchmarks/fit_verdicts.py: which judgements count depends on the thresholds (a sentence set
    counts only when no single unit passes support), so a candidate verifier's verdict weights are
    fitted, and its rows scored, under that verifier's thresholds, read from the settings."""
    import sys

    from benchmarks.fit_verdicts import features_of
    from benchmarks.fit_verdicts import main as fit_main
    from core.verify.base import Thresholds
    from core.verify.verdict_model import FEATURES

    r = row("Curie was a physicist.", "supported", [0.55, 0.40, 0.05])
    r["judgements"].append({"pid": 1, "kind": "set", "sents": [0, 1], "text": "Curie … physicist.", "rank": 1,
                            "probs": [0.95, 0.04, 0.01], "grounded": True})
    e_set = FEATURES.index("e_set")
    assert features_of(r, t=Thresholds(support=0.60))[e_set] == 1.0  # no single unit decides: the set counts
    assert features_of(r, t=Thresholds(support=0.48))[e_set] == 0.0  # the sentence passes support: singles only
    gold = ["supported", "refuted", "not_enough_info"] * 8
    probs = {"supported": ENTAILS, "refuted": CONTRADICTS, "not_enough_info": [0.1, 0.8, 0.1]}
    rows = write(tmp_path / "rows.jsonl", [row(f"Person{i} was a physicist.", g, probs[g]) for i, g in enumerate(gold)])
    (tmp_path / "c.toml").write_text("[thresholds]\nsupport = 0.48\nrefute = 0.45\nconflict = 0.8\n")
    monkeypatch.setenv("CLAIMSCOPE_CONFIG", str(tmp_path / "c.toml"))
    out = tmp_path / "m.json"
    monkeypatch.setattr(sys, "argv", ["fit_verdicts.py", "--from-cache", rows, "--l2", "1.0", "--out", str(out)])
    fit_main()
    meta = json.loads(out.read_text())
    assert meta["verifier"] == "embedded (thresholds support 0.48, refute 0.45, conflict 0.8)"
    assert meta["trained_on"] == {"climate-fever": {"supported": 8, "refuted": 8, "not_enough_info": 8, "conflicting": 0}}


def test_the_sanity_cases_pass_the_shipped_file_and_catch_a_prior(tmp_path):
    """A verdict file that says "supported" whenever the subject's own document is judged passes
    the four measures on mostly-true benchmarks; the sanity cases catch it, per kind of source."""
    from dataclasses import replace

    import numpy as np

    from benchmarks.verdict_candidates import sanity, sanity_failures
    from core.verify.verdict_model import load_verdict_model

    shipped = load_verdict_model()
    checks = sanity(shipped)
    assert set(checks) == {"default", *shipped.by_kind} and sanity_failures(checks) == []
    prior = replace(shipped.for_kind("entity"), weights=np.zeros_like(shipped.weights),
                    bias=np.array([5.0 if lab == "supported" else 0.0 for lab in shipped.labels]))
    leaky = replace(shipped, by_kind={**shipped.by_kind, "entity": prior})
    assert sanity_failures(sanity(leaky)) == ["entity: not_enough_info -> supported", "entity: refuted -> supported"]
    rows = write(tmp_path / "rows.jsonl", [row(c, "supported", ENTAILS) for c in CLAIMS])
    bad = tmp_path / "leaky.json"
    bad.write_text(json.dumps(leaky.to_json()))
    out = tmp_path / "report.json"
    main(["score", "--rows", rows, "--models", str(SHIPPED), str(bad), "--json", str(out), "--resamples", "10"])
    report = json.loads(out.read_text())["models"]
    assert report[str(SHIPPED)]["sanity_failures"] == [] and len(report[str(bad)]["sanity_failures"]) == 2


def test_anchor_rows_keep_a_refit_off_the_subject_prior(tmp_path, monkeypatch):
    """benchmarks/fit_verdicts.py --anchors: training claims where the subject's own document is
    judged with nothing decisive, yet gold says supported (benchmarks of mostly-true claims), teach a
    refit "names the subject, so supported"; the anchor rows hold it to the evidence, and they are
    fitted but never scored in cross-validation."""
    import sys

    from benchmarks.fit_verdicts import anchor_rows, cross_validate, weights_for
    from benchmarks.fit_verdicts import main as fit_main
    from benchmarks.verdict_candidates import sanity, sanity_failures
    from core.verify.verdict_model import load_verdict_model

    weak = [[0.04 + 0.01 * (i % 5), 0.9, 0.06 - 0.01 * (i % 5)] for i in range(16)]
    rows = [row(f"Person{i} was a physicist.", "supported", p) for i, p in enumerate(weak)]  # the prior
    rows += [row(f"Person{i} was a chemist.", "supported", ENTAILS) for i in range(10)]
    rows += [row(f"Person{i} was a poet.", "refuted", CONTRADICTS) for i in range(10)]
    rows += [row(f"Person{i} was a painter.", "not_enough_info", [0.1, 0.8, 0.1]) for i in range(8)]
    for r in rows[-8:]:
        r["titles"] = {"1": "Someone Else"}  # not the subject's own document
    cache = write(tmp_path / "rows.jsonl", rows)
    verdicts = {}
    for share in (0.0, 3.0):
        out = tmp_path / f"m{share}.json"
        monkeypatch.setattr(sys, "argv", ["fit_verdicts.py", "--from-cache", cache, "--l2", "1.0", "--anchors",
                                          str(share), "--out", str(out)])
        fit_main()
        verdicts[share] = sanity(load_verdict_model(out))["default"]
    assert verdicts[0.0]["not_enough_info"] == "supported"  # the prior, learned
    assert sanity_failures({"default": verdicts[3.0]}) == []  # held to the evidence
    anchors = anchor_rows()
    assert {r["label"] for r in anchors} == {"supported", "refuted", "not_enough_info"}
    w = weights_for(rows + anchors, 0.5)
    assert w[len(rows):].sum() == pytest.approx(0.5 * len(rows))  # half of the one dataset's total weight
    assert w[:len(rows)].sum() == pytest.approx(len(rows))
    # anchors are never scored: the same real rows give the same folds and the same score
    assert cross_validate(rows, (1.0,)) == cross_validate(rows + anchors, (1.0,), anchors=0.0)
