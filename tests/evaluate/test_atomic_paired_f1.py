"""benchmarks/atomic_paired_f1.py's comparison of two adapters' reports: one held-out fold, and
several folds pooled over their answers (the pooled F1 is the F1 of the summed counts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.atomic_paired_f1 import compare, compare_pooled, f1


def report(tmp_path: Path, name: str, fold: str, counts: list[tuple[int, int, int]]) -> Path:
    """A one-runtime report of the script: per answer (matched, produced, gold)."""
    rep = {"paths": ["x.jsonl"], "fold": fold, "limit": None, "runtimes": {"merged": {
        "model": {"lora_sha256": name * 12},
        "per_answer": [{"matched": [m, m // 2], "produced": p, "gold": g} for m, p, g in counts]}}}
    path = tmp_path / f"{name}_{fold.replace('/', '')}.json"
    path.write_text(json.dumps(rep))
    return path


def test_folds_are_compared_alone_and_pooled(tmp_path):
    a1 = report(tmp_path, "a", "1/3", [(3, 5, 6), (2, 4, 5)])
    b1 = report(tmp_path, "b", "1/3", [(4, 5, 6), (3, 4, 5)])
    a2 = report(tmp_path, "a", "2/3", [(1, 4, 4), (5, 8, 7), (2, 2, 3)])
    b2 = report(tmp_path, "b", "2/3", [(1, 5, 4), (6, 8, 7), (2, 3, 3)])
    one = compare(a1, b1, 200, 0)
    assert one["delta_f1@0.6"]["observed"] == pytest.approx(f1(7, 9, 11) - f1(5, 9, 11))
    out = compare_pooled([[a1, b1], [a2, b2]], 200, 0)
    assert [p["fold"] for p in out["pairs"]] == ["1/3", "2/3"]
    pooled = out["pooled"]
    assert pooled["answers"] == 5 and pooled["folds"] == "1/3, 2/3"
    assert pooled["delta_f1@0.6"]["observed"] == pytest.approx(f1(16, 25, 25) - f1(13, 23, 25))
    lo, hi = pooled["delta_f1@0.6"]["ci95"]
    assert lo <= pooled["delta_f1@0.6"]["observed"] <= hi
    with pytest.raises(SystemExit, match="differ in 'fold'"):
        compare(a1, b2, 10, 0)


def test_recomplement_scores_dumped_facts_with_this_trees_rules(tmp_path):
    """--recomplement: the model's facts of a --dump-claims file, the rules complement recomputed
    (a change to rules measured on the same facts, no decoding)."""
    import argparse

    from benchmarks.atomic_paired_f1 import recomplement
    from core.decompose.atomic import COMPLEMENT_NOTE

    text = "Gonzalo Fonseca (1922-1997) was a sculptor."
    gold = ["Gonzalo Fonseca was a sculptor.", "Gonzalo Fonseca was born in 1922.", "Gonzalo Fonseca died in 1997."]
    data = tmp_path / "answers.jsonl"
    data.write_text(json.dumps({"topic": "Gonzalo Fonseca", "output": text, "annotations": [
        {"text": text, "human-atomic-facts": [{"text": g} for g in gold]}]}) + "\n")
    fact = {"text": "Fonseca was a sculptor.", "span": [0, len(text)], "checkable": True, "note": None}
    stale = {"text": "Gonzalo Fonseca (1922-1997) was a sculptor.", "span": [0, len(text)], "checkable": True,
             "note": COMPLEMENT_NOTE}  # what an older rules complement added: dropped and recomputed
    dump = tmp_path / "claims.json"
    dump.write_text(json.dumps({"merged": {text: [fact, stale]}}))
    out = tmp_path / "report.json"
    recomplement(argparse.Namespace(path=[data], fold=None, limit=None, recomplement=dump, standalone=False, json=out))
    rep = json.loads(out.read_text())["runtimes"]["merged"]
    assert rep["pooled"]["matched"] == 3 and rep["pooled"]["produced"] == 3 and rep["complement"] == 2
    assert rep["per_answer"] == [{"matched": [3, 3], "produced": 3, "gold": 3}]
