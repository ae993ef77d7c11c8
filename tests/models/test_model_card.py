"""The verifier's model card says whether a run filtered its training premises (evidence leaks
too: an earlier copy of nli/fever_nli_rte held evidence FEVER-Symmetric reuses), from the
shipped run's own summary and config."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from models.train_nli import write_card

ROOT = Path(__file__).resolve().parents[2]


def card(tmp_path: Path, premise_decontamination: bool) -> str:
    summary = json.loads((ROOT / "models/verifier/training_summary.json").read_text(encoding="utf-8"))
    cfg = tomllib.loads((ROOT / "models/train_nli.toml").read_text(encoding="utf-8"))
    cfg["data"]["premise_decontamination"] = premise_decontamination
    write_card(tmp_path, summary, cfg)
    return (tmp_path / "README.md").read_text(encoding="utf-8")


def test_a_run_without_premise_filtering_says_its_fever_figures_are_upper_bounds(tmp_path):
    text = card(tmp_path, premise_decontamination=False)
    assert "Evidence was not decontaminated in this run" in text and "read them as upper bounds" in text
    assert "| 0 / not filtered |" in text  # fever_nli_rte's row: no claim dropped, premises never looked at
    assert "**Premise decontamination:**" not in text


def test_a_run_with_premise_filtering_reports_what_it_dropped(tmp_path):
    text = card(tmp_path, premise_decontamination=True)
    assert "**Premise decontamination:**" in text and "not decontaminated" not in text
    assert "not filtered" not in text


def test_the_card_says_how_the_run_was_niced(tmp_path):
    # the card once said `nice -n 10` for every run; runs 7 and 8 ran under `nice -n 5`
    summary = json.loads((ROOT / "models/verifier/training_summary.json").read_text(encoding="utf-8"))
    cfg = tomllib.loads((ROOT / "models/train_nli.toml").read_text(encoding="utf-8"))
    assert "nice" not in summary["hardware"]  # v1's summary predates the field: its run was under nice 10
    write_card(tmp_path, summary, cfg)
    assert "run under `nice -n 10` |" in (tmp_path / "README.md").read_text(encoding="utf-8")
    for nice, said in ((5, "run under `nice -n 5` |"), (0, "not niced |")):
        summary["hardware"]["nice"] = nice
        write_card(tmp_path, summary, cfg)
        assert said in (tmp_path / "README.md").read_text(encoding="utf-8")
