"""SVG snapshots (120×40) of the workbench's three plots (tui/widgets/plots.py): a run's support
scores by verdict (scores screen, f4), the factual precision of the runs of one text over time
(history screen) and the per-answer precision of a batch (history screen, b). Same fixed
stand-in verifier and BM25-only retrieval as tests/test_tui_snapshots.py, so every bar is the
same on any machine; run creation times are pinned, as the history table shows them.
Update after a deliberate change with ``pytest tests/test_tui_plots.py --snapshot-update``."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise

import pytest

from core.workbench import RunOptions
from store import runs as rq
from tests.conftest import FIXTURES
from tests.test_tui import ANSWER, SIZE, make_app
from tests.test_tui import db_path as db_path
from tests.test_tui_snapshots import still
from tests.test_tui_snapshots import workbench as workbench

_CLAIMS = [json.loads(line) for line in (FIXTURES / "scifact_mini_claims.jsonl").read_text(encoding="utf-8").splitlines()]
# A batch of ten two-claim answers (SciFact claims i and i + 1, so precision takes 0, .5 and 1)
BATCH = [(f"{a['id']}+{b['id']}", f"{a['claim']} {b['claim']}") for a, b in pairwise(_CLAIMS[:11])]


@pytest.fixture()
def stored(workbench):
    """Three runs of ANSWER with k = 1, 3, 5 and no grounding guard (different evidence, so
    different learned verdicts: precision 1.0, 0.0, 0.0 with the fixed verifier and its judged units) and a
    batch of two-claim answers with input ids, as `check --jsonl` stores them."""
    db = workbench.open_db()
    base = RunOptions.from_settings(workbench.settings)
    for k in (1, 3, 5):
        pipe = workbench.pipeline(db, replace(base, k=k, grounding=False, verdict_rule="learned"))
        pipe.resume(pipe.start(ANSWER))
    pipe = workbench.pipeline(db, replace(base, grounding=False))
    for ext_id, text in BATCH:
        pipe.resume(pipe.start(text, ext_id))
    with db.conn:
        db.execute("UPDATE runs SET created_at = printf('2026-01-01T10:%02d:00Z', id)")
    return db


def fps(db, ids):
    return [(rq.run_scores(db, r).get("factual_precision") or {}).get("value") for r in ids]


def test_support_plot_on_the_scores_screen(snap_compare, workbench):
    app = make_app(workbench, preload=False)

    async def before(pilot):
        from textual.widgets import TextArea

        still(app)
        app.query_one("#answer", TextArea).load_text(ANSWER)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        still(app)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_precision_over_time_in_history(snap_compare, workbench, stored):
    first_three = fps(stored, [1, 2, 3])
    assert len(set(first_three)) >= 2  # precision moved across the runs: the plot has something to show
    app = make_app(workbench, preload=False)

    async def before(pilot):
        still(app)
        await pilot.press("f2")
        await pilot.pause()
        for _ in range(len(BATCH)):  # newest first: down to the newest run of ANSWER (run 3)
            await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_batch_precision_in_history(snap_compare, workbench, stored):
    values = [fp for _, _, fp in rq.batch_precisions(stored)]
    assert len(values) == len(BATCH) and len(set(values)) >= 3  # a distribution, not one bar
    app = make_app(workbench, preload=False)

    async def before(pilot):
        still(app)
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
