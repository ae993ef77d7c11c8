"""SVG snapshots of the workbench at a fixed terminal size (120×40), on the real models:
the empty workbench, a finished run with the evidence of its first claim, the full-screen
inspector, and the help screen. Update after a deliberate UI change with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and review the SVGs."""

from __future__ import annotations

import pytest

from tests.test_tui import ANSWER, SIZE, make_app
from tests.test_tui import db_path as db_path
from tests.test_tui import shared_models as shared_models
from tests.test_tui import workbench as workbench


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
