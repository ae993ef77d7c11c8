"""benchmarks/grounding_paired.py: two verifiers' grounding reports, each scored at its own support
threshold (refitted on Climate-FEVER, never on the grounding rows), paired by claim."""

from __future__ import annotations

import json

import pytest

from benchmarks.grounding_paired import compare, fitted_support, main


def rows(scores: list[float], labels: list[int]) -> dict:
    return {"rows": [{"id": f"c{i}", "domain": "d", "label": y, "score": s, "lexical": 0.0}
                     for i, (s, y) in enumerate(zip(scores, labels, strict=True))]}


LABELS = [1, 1, 1, 0, 0, 0]


def test_each_model_is_scored_at_its_own_threshold():
    ref = rows([0.9, 0.7, 0.5, 0.65, 0.2, 0.1], LABELS)   # at .60: TP 2/3, TN 2/3
    cand = rows([0.58, 0.56, 0.3, 0.52, 0.1, 0.1], LABELS)  # ranks like ref, scores lower
    out = compare(ref, cand, 0.60, 0.55)
    assert out["ref"]["bacc"] == pytest.approx(2 / 3)
    assert out["cand"]["bacc_at_0.60"] == pytest.approx(0.5)  # nothing passes .60
    assert out["cand"]["bacc"] == pytest.approx((2 / 3 + 1) / 2)  # at .55: TP 2/3, TN 3/3
    assert out["diff"]["bacc"] == pytest.approx(out["cand"]["bacc"] - out["ref"]["bacc"])
    lo, hi = out["diff"]["ci95"]
    assert lo <= out["diff"]["bacc"] <= hi


def test_reports_on_different_claims_are_refused():
    with pytest.raises(SystemExit, match="different rows"):
        compare(rows([0.9, 0.1], [1, 0]), rows([0.9, 0.1, 0.5], [1, 0, 1]), 0.6, 0.6)


def test_thresholds_come_from_the_climate_fever_reports(tmp_path, capsys):
    paths = {}
    for name, report, support in (("ref", rows([0.9, 0.1, 0.7, 0.3], [1, 0, 1, 0]), 0.6),
                                  ("cand", rows([0.5, 0.1, 0.45, 0.3], [1, 0, 1, 0]), 0.4)):
        (tmp_path / f"{name}.json").write_text(json.dumps(report))
        (tmp_path / f"{name}_cf.json").write_text(json.dumps({"systems": {"fitted": {"thresholds": {"support": support}}}}))
        paths[name] = tmp_path / f"{name}.json"
    assert fitted_support(tmp_path / "cand_cf.json") == 0.4
    out = tmp_path / "out.json"
    assert main(["--pair", "s", str(paths["ref"]), str(paths["cand"]), "--ref-verdicts", str(tmp_path / "ref_cf.json"),
                 "--cand-verdicts", str(tmp_path / "cand_cf.json"), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["thresholds"] == {"ref": 0.6, "cand": 0.4}
    assert result["sets"]["s"]["cand"]["bacc"] == 1.0 and result["sets"]["s"]["cand"]["bacc_at_0.60"] == 0.5
    assert "| s | 4 |" in capsys.readouterr().out


def test_thresholds_fitted_on_spare_rows_and_overlap_refused(tmp_path):
    """--ref-fit / --cand-fit: each model's threshold is the cut with the best mean over domains of
    balanced accuracy on its report of rows that no compared set scores."""
    from benchmarks.grounding_paired import fitted_on_rows

    pool = {"path": "pool.jsonl", "rows": [
        {"id": f"p{i}", "domain": d, "label": y, "score": s}
        for i, (d, y, s) in enumerate([("a", 1, 0.9), ("a", 1, 0.8), ("a", 0, 0.7), ("a", 0, 0.1),
                                       ("b", 1, 0.75), ("b", 0, 0.3), ("b", 0, 0.2)])]}
    # a cut in (.30, .70) scores a .75 and b 1.0; only a cut in (.70, .75) separates both domains
    assert fitted_on_rows(pool) == pytest.approx((0.7 + 0.75) / 2)
    (tmp_path / "pool.json").write_text(json.dumps(pool))
    ref = rows([0.9, 0.1, 0.74, 0.72], [1, 0, 1, 0])
    (tmp_path / "r.json").write_text(json.dumps(ref))
    out = tmp_path / "out.json"
    assert main(["--pair", "s", str(tmp_path / "r.json"), str(tmp_path / "r.json"), "--ref-fit", str(tmp_path / "pool.json"),
                 "--cand-threshold", "0.6", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["thresholds"]["ref"] == pytest.approx(0.725) and result["sets"]["s"]["ref"]["bacc"] == 1.0
    assert result["threshold_source"] == {"ref": "fitted on pool.jsonl", "cand": "given"}
    (tmp_path / "bad.json").write_text(json.dumps({"rows": ref["rows"]}))
    with pytest.raises(SystemExit):
        main(["--pair", "s", str(tmp_path / "r.json"), str(tmp_path / "r.json"), "--ref-fit", str(tmp_path / "bad.json"),
              "--cand-threshold", "0.6"])


def test_the_fit_pool_holds_only_rows_no_grounding_figure_scores(data_dir, tmp_path):
    """benchmarks/grounding_fit_pool.py on the real WiCE and ExpertQA dev files: the rows after the
    ones `eval grounding --limit` scores, none sharing a claim or a document with them."""
    from benchmarks.grounding_fit_pool import SETS
    from benchmarks.grounding_fit_pool import main as write_pool
    from core.evaluate.grounding import load_dataset, load_rows

    out = tmp_path / "pool.jsonl"
    assert write_pool(["--data", str(data_dir), "--out", str(out)]) == 0
    pool = load_rows(out)
    for name, rel, scored in SETS:
        rows = load_dataset(name, data_dir / rel)
        mine = [r for r in pool if r.domain == name]
        assert mine and len(mine) <= len(rows) - scored
        head = rows[:scored]
        assert not {r.id for r in mine} & {r.id for r in head}
        assert not {r.claim for r in mine} & {r.claim for r in head}
        assert not {r.doc for r in mine} & {r.doc for r in head}
    assert {r.domain for r in pool} == {"wice", "expertqa"} and len(pool) == 249 + 463
