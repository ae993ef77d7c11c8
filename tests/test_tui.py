"""The workbench driven by Pilot on the real embedded models over the SciFact mini corpus:
type an answer, run, wait for the workers, inspect, edit and re-verify, label, export,
history and compare, settings; plus resume of an interrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import Settings, load_settings
from core.workbench import Workbench
from store import open_db
from store import runs as rq

ANSWER = (
    "Bariatric surgery leads to negative outcomes in mental health. "
    "Cholesterol loading induces KLF4 expression in VSMCs. "
    "You should ask your doctor before any surgery."
)
SIZE = (120, 40)


@pytest.fixture()
def db_path(mini_db, tmp_path) -> Path:
    """A private copy of the indexed mini corpus (the app and its workers open their own connections)."""
    path = tmp_path / "tui.db"
    dest = open_db(path)
    mini_db.conn.backup(dest.conn)
    dest.conn.close()
    return path


@pytest.fixture()
def workbench(db_path) -> Workbench:
    return Workbench(Settings(db_path=db_path, sources=("scifact-mini",), top_k=3))


def make_app(workbench, tmp_path=None):
    from tui.app import ClaimscopeApp

    ticks = iter(range(1000))
    return ClaimscopeApp(workbench, settings_path=tmp_path / "settings.toml" if tmp_path else None,
                         persist_settings=tmp_path is not None, clock=lambda: float(next(ticks)))


async def run_answer(app, pilot, text: str = ANSWER) -> int:
    from textual.widgets import TextArea

    app.query_one("#answer", TextArea).load_text(text)
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.run_id is not None
    return app.run_id


async def test_run_streams_claims_and_verdicts(workbench):
    from tui.messages import RunEvent

    app = make_app(workbench)
    seen: list = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        run_id = await run_answer(app, pilot)
        events = [m.event.kind for m in seen if isinstance(m, RunEvent)]
        assert events[0] == "run_started" and events[-1] == "run_finished"
        assert events.count("verdict_ready") == 2  # the advice is kept but not checked
        assert events.index("verdict_ready") < len(events) - 1
        table = app.query_one("#claims")
        assert table.row_count == 3
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(3)]
        assert rows[0][4].startswith("Bariatric surgery")
        verdict_cells = [r[1] for r in rows]
        assert sum(any(v.endswith(x) for x in ("supported", "refuted", "not enough info", "conflicting"))
                   for v in verdict_cells) == 2
        assert verdict_cells[2].startswith("– not checkable")
        header = str(app.query_one("#run-header").render())
        assert f"run {run_id}" in header and "2/2 verified" in header and "first verdict" in header
        # selecting a claim highlights its span in the answer
        await pilot.click("#claims")
        await pilot.press("down")
        await pilot.pause()
        answer = app.query_one("#answer")
        second = rq.run_claims(app.db, run_id)[1]
        assert answer.selected_text == ANSWER[second.span[0]:second.span[1]]
        assert answer.selected_text.startswith("Cholesterol loading induces KLF4")
