"""The workbench checking an answer against pasted sources (ctrl+g): a Pilot run on the
real models, and a snapshot at a fixed size with a FAKE NLI (word-overlap probabilities),
so the picture does not depend on the machine's floating point."""

from __future__ import annotations

import numpy as np
import pytest

from core.settings import Settings
from core.workbench import Workbench
from store import open_db
from store import runs as rq
from tests.test_tui import SIZE, make_app, plain, wait_for_screen, wait_until

ANSWER = "The Eiffel Tower is in Paris. It was completed in 1889. It was designed by Le Corbusier."
SOURCES = (
    "# Eiffel Tower\n"
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. "
    "The Eiffel Tower was completed in 1889 for the World's Fair.\n"
    "---\n"
    "# Designers\n"
    "Gustave Eiffel's company designed and built the Eiffel Tower."
)


class FakeNLI:
    """Entailment when the evidence holds every content word of the claim, neutral else."""

    def __init__(self) -> None:
        from models.registry import ModelRef

        self.ref = ModelRef("nli", "fake-overlap-nli", None)

    def predict_long(self, pairs, batch_size: int = 32):
        from core.text import content_words
        from models.nli import WindowedPrediction

        out = []
        for premise, claim in pairs:
            c, p = set(content_words(claim)), set(content_words(premise))
            probs = [0.9, 0.08, 0.02] if c and c <= p else [0.1, 0.85, 0.05]
            out.append(WindowedPrediction(np.array(probs, dtype=np.float32), 0, 1, (0, len(premise))))
        return out


@pytest.fixture(scope="module")
def real_models(tmp_path_factory) -> Workbench:
    return Workbench(Settings(db_path=tmp_path_factory.mktemp("unused") / "unused.db"))


async def run_against(app, pilot, sources: str = SOURCES) -> int:
    from textual.widgets import TextArea

    from tui.screens.against import AgainstScreen

    app.query_one("#answer", TextArea).load_text(ANSWER)
    await pilot.press("ctrl+g")
    screen = await wait_for_screen(app, pilot, AgainstScreen)
    screen.query_one("#against-text", TextArea).load_text(sources)
    await pilot.click("#against-use")
    await pilot.pause()
    assert app.against and len(app.against) == 2
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.run_id is not None
    return app.run_id


async def test_pasted_sources_are_the_only_evidence_and_stay_with_the_run(real_models, tmp_path):
    wb = real_models.with_settings(Settings(db_path=tmp_path / "a.db"))
    app = make_app(wb, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        run_id = await run_against(app, pilot)
        db = open_db(tmp_path / "a.db")
        run = rq.get_run(db, run_id)
        assert [d["title"] for d in run.config["against"]] == ["Eiffel Tower", "Designers"]
        results = rq.run_results(db, run_id)
        assert all(r["status"] == "done" for r in results if r["checkable"])
        assert {r["evidence"]["source"] for r in results if r["evidence"]} == {"_given"}
        assert "against 2 given source(s)" in str(app.query_one("#run-header").render())
        # No knowledge source was indexed for this run.
        assert db.execute("SELECT count(*) FROM sources WHERE name NOT LIKE '\\_%' ESCAPE '\\'").fetchone()[0] == 0


async def test_bad_source_file_is_shown_in_the_dialog(real_models, tmp_path):
    from textual.widgets import Input, Static

    from tui.screens.against import AgainstScreen

    app = make_app(real_models.with_settings(Settings(db_path=tmp_path / "b.db")), preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        screen = await wait_for_screen(app, pilot, AgainstScreen)
        screen.query_one("#against-files", Input).value = str(tmp_path / "missing.md")
        await pilot.click("#against-use")
        await pilot.pause()
        assert "no such file" in str(screen.query_one("#against-error", Static).render())
        assert isinstance(app.screen, AgainstScreen) and app.against is None


def test_run_against_pasted_sources_snapshot(snap_compare, real_models, tmp_path):
    wb = real_models.with_settings(Settings(db_path=tmp_path / "s.db"))
    wb._models[("nli", "embedded", wb.settings.device)] = FakeNLI()  # fixed probabilities on any CPU
    app = make_app(wb, preload=False)

    async def before(pilot):
        from textual.widgets import TextArea

        for area in app.query(TextArea):
            area.cursor_blink = False
        await run_against(app, pilot)
        app.query_one("#claims").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


async def test_structured_run_reopens_in_its_own_view(real_models, tmp_path, data_dir):
    import json

    from typer.testing import CliRunner

    from tests.pipeline.test_given import PROFILE
    from tui.cli import app as cli
    from tui.screens.structured import StructuredScreen

    contexts = json.loads((data_dir / "fixtures" / "factscore_flaherty_wikipedia_contexts.json").read_text())["contexts"]
    (tmp_path / "flaherty.txt").write_text(contexts[0]["text"])
    (tmp_path / "profile.md").write_text(PROFILE)
    db = tmp_path / "st.db"
    res = CliRunner().invoke(cli, ["--db", str(db), "structured", str(tmp_path / "profile.md"), "--json"])
    assert res.exit_code == 0, res.output
    run_id = json.loads(res.stdout)["run_id"]
    app = make_app(real_models.with_settings(Settings(db_path=db)), preload=False)
    async with app.run_test(size=SIZE) as pilot:
        app._show_run(run_id)
        screen = await wait_for_screen(app, pilot, StructuredScreen)
        await wait_until(pilot, lambda: bool(screen.query("#structured-report")))
        shown = " ".join(plain(screen.query_one("#structured-report").content).split())
        assert "Lanny Flaherty was born in Pensacola, Florida." in shown and "propagated" in shown
