"""SVG snapshots of the workbench at a fixed terminal size (120×40): the empty workbench, a
finished run with the evidence of its first claim, the full-screen inspector, and the help
screen. Update after a deliberate UI change with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and review the SVGs.

A snapshot freezes every character on screen, so nothing on it may depend on the machine:
the verifier is a fixed stand-in (probabilities chosen per pair from the texts, exact
binary fractions) and retrieval is BM25 only (SQLite FTS5), so no neural network's
floating-point kernels reach the screen — another CPU or BLAS would change a digit of a
probability, a dense score or a rank. The real models are tested, with tolerances, in
tests/test_tui.py, tests/test_nli_verify.py and tests/test_index_retrieve.py.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from core.settings import Settings
from core.workbench import Workbench
from models.registry import ModelRef
from tests.test_tui import ANSWER, SIZE, make_app
from tests.test_tui import db_path as db_path

# Rows of P(entail, neutral, contradict): binary fractions, so every sum and difference the
# screen shows is exact on any machine.
ROWS = (
    (0.25, 0.0625, 0.6875),
    (0.75, 0.125, 0.125),
    (0.125, 0.8125, 0.0625),
    (0.0625, 0.25, 0.6875),
)


class FixedNLI:
    """The verifier's protocol with outputs fixed by the texts (crc32 of the pair picks a row)."""

    ref = ModelRef("nli", "fixed-test-nli", None)

    def predict(self, pairs, batch_size: int = 32) -> np.ndarray:
        return np.array([ROWS[zlib.crc32(f"{p}\x00{h}".encode()) % len(ROWS)] for p, h in pairs])

    def windows(self, premise: str, hypothesis: str = "") -> list[tuple[int, int]]:
        return [(0, len(premise))]

    def predict_long(self, pairs, batch_size: int = 32):
        from models.nli import WindowedPrediction

        return [WindowedPrediction(row, 0, 1, (0, len(p))) for row, (p, _) in zip(self.predict(pairs), pairs, strict=True)]


class NoEmbedder:
    """Retrieval is BM25 only here: the embedder is named in the manifest and never asked."""

    ref = ModelRef("embedder", "no-embedder (BM25-only snapshots)", None)

    def encode(self, texts, batch_size: int = 32, progress=None):
        raise AssertionError("the snapshot workbench retrieves with BM25 only")


@pytest.fixture()
def workbench(db_path: Path) -> Workbench:
    settings = Settings(db_path=db_path, sources=("scifact-mini",), top_k=3, mode="bm25")
    wb = Workbench(settings)
    wb._models[("nli", settings.verifier, settings.device)] = FixedNLI()
    wb._models[("embedder", settings.embedder)] = NoEmbedder()
    return wb


def still(app) -> None:
    """No blinking cursor in a snapshot."""
    from textual.widgets import TextArea

    for area in app.query(TextArea):
        area.cursor_blink = False


def test_empty_workbench(snap_compare, workbench):
    app = make_app(workbench, preload=False)

    async def before(pilot):
        still(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


@pytest.fixture()
def finished(workbench):
    """An app that has run ANSWER to the end and selected the first claim."""
    app = make_app(workbench, preload=False)

    async def before(pilot):
        from textual.widgets import TextArea

        still(app)
        app.query_one("#answer", TextArea).load_text(ANSWER)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.query_one("#claims").focus()
        await pilot.pause()

    return app, before


def test_finished_run(snap_compare, finished):
    app, before = finished
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_inspector_screen(snap_compare, finished):
    app, before = finished

    async def inspect(pilot):
        await before(pilot)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=inspect)


def test_help_screen(snap_compare, workbench):
    app = make_app(workbench, preload=False)

    async def before(pilot):
        still(app)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
