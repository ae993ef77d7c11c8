"""The workbench driven by Pilot on the real embedded models over the SciFact mini corpus:
type an answer, run, wait for the workers, inspect, edit and re-verify, label, export,
history and compare, settings; plus resume of an interrupted run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from core.settings import Settings, load_settings
from core.workbench import Workbench
from store import open_db
from store import runs as rq
from tui.screens.history import HistoryScreen

ANSWER = (
    "Bariatric surgery leads to negative outcomes in mental health. "
    "Cholesterol loading induces KLF4 expression in VSMCs. "
    "You should ask your doctor before any surgery."
)
SIZE = (120, 40)


@pytest.fixture()
def db_path(mini_db, tmp_path) -> Path:
    """A private copy of the indexed mini corpus (the app and its workers open their own connections)."""
    from store.db import write_tx
    from store.inspect import delete_run

    path = tmp_path / "tui.db"
    dest = open_db(path)
    mini_db.conn.backup(dest.conn)
    with write_tx(dest):  # the corpus only: runs other tests left in the shared database go
        for (run_id,) in dest.execute("SELECT id FROM runs").fetchall():
            delete_run(dest, run_id)
        dest.execute("DELETE FROM stage_cache")
    dest.conn.close()
    return path


@pytest.fixture(scope="module")
def shared_models(tmp_path_factory) -> Workbench:
    """Loads each model once for the module; every test gets its own database and settings."""
    return Workbench(Settings(db_path=tmp_path_factory.mktemp("unused") / "unused.db"))


@pytest.fixture()
def workbench(shared_models, db_path) -> Workbench:
    return shared_models.with_settings(Settings(db_path=db_path, sources=("scifact-mini",), top_k=3))


def make_app(workbench, tmp_path=None, preload: bool = True):
    from tui.app import ClaimscopeApp

    ticks = iter(range(1000))
    return ClaimscopeApp(workbench, settings_path=tmp_path / "settings.toml" if tmp_path else None,
                         persist_settings=tmp_path is not None, clock=lambda: float(next(ticks)), preload=preload)


def plain(renderable) -> str:
    """What a widget's Rich renderable shows, as plain text."""
    from rich.console import Console

    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


async def settle(pilot) -> None:
    """One turn of the app's own state: its workers finished and its message queues drained.
    Waiting on this, not on the clock, makes a test as patient as a loaded machine needs."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot, condition, turns: int = 200) -> None:
    """Settle until ``condition`` holds. ``turns`` bounds app turns, not seconds: a condition
    that no turn of the app makes true fails, however fast or slow the machine."""
    for _ in range(turns):
        if condition():
            return
        await settle(pilot)
    raise AssertionError(f"condition not met after {turns} turns of the app")


async def wait_for_screen(app, pilot, kind, turns: int = 200):
    """Settle until ``kind`` is the active screen (screens are pushed by messages); fails
    with the screen that is there instead."""
    for _ in range(turns):
        if isinstance(app.screen, kind):
            return app.screen
        await settle(pilot)
    raise AssertionError(f"expected {kind.__name__}, got {app.screen!r}")


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


async def test_claims_in_another_language_are_notified_or_left_unverified_as_the_settings_say(workbench):
    """Every model reads English: by default the app checks a Spanish sentence and says so in a
    notification; with the settings' English only its claim is shown not checkable, unverified."""
    from tui.messages import OtherLanguages

    answer = ("La cirugía bariátrica reduce el peso de los pacientes con obesidad. "
              "Cholesterol loading induces KLF4 expression in vascular smooth muscle cells.")
    for english_only in (False, True):
        app = make_app(workbench.with_settings(replace(workbench.settings, english_only=english_only)))
        notified: list = []
        app.notify = lambda message, _into=notified, **kw: _into.append((message, kw))  # what the user would see as a toast
        seen: list = []
        async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
            run_id = await run_answer(app, pilot, answer)
            notes = [m for m in seen if isinstance(m, OtherLanguages)]
            claims = rq.run_claims(app.db, run_id)
            if english_only:
                assert notes == []
                assert not claims[0].checkable and claims[0].verdict is None and claims[1].verdict is not None
                note = app.db.execute("SELECT note FROM claims WHERE id = ?", [claims[0].id]).fetchone()[0]
                assert note == "not English (reads as Spanish)"
                assert [str(c) for c in app.query_one("#claims").get_row_at(0)][1].startswith("– not checkable")
            else:
                assert len(notes) == 1 and notes[0].run_id == run_id
                assert notes[0].text.startswith("1 of 2 claims read as another language (Spanish)")
                assert all(c.checkable for c in claims)
                assert [(m, kw["severity"]) for m, kw in notified] == [(notes[0].text, "warning")]
                assert "English only" in notes[0].text


async def test_an_answer_opened_from_the_command_line_is_in_the_editor_and_ctrl_r_checks_it(workbench, tmp_path):
    """`claimscope tui answer.md`: the CLI reads the file as check --file does and the app
    starts with it in the editor, so the first key a user presses is ctrl+r."""
    from textual.widgets import TextArea

    from tui.app import ClaimscopeApp
    from tui.cli.options import check_inputs

    path = tmp_path / "answer.md"
    path.write_text(ANSWER, encoding="utf-8")
    [(_, text)] = check_inputs(None, path, None)
    app = ClaimscopeApp(workbench, persist_settings=False, preload=False, opened=(str(path), text))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one("#answer", TextArea).text == ANSWER
        assert f"opened {path}" in str(app.query_one("#status").render())
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.run_id is not None and rq.get_run(app.db, app.run_id).input_text == ANSWER
        assert app.query_one("#claims").row_count == 3


async def test_ctrl_o_refuses_a_binary_file_as_the_command_line_does_and_opens_a_text_one(workbench, tmp_path):
    """ctrl+o reads a file with the same checks as `claimscope tui FILE` and check --file: a
    NUL byte (UTF-16, an executable) is one error modal, not a text of control characters."""
    from textual.widgets import TextArea

    from tui.screens.modals import ErrorModal, OpenFileModal

    binary, good = tmp_path / "utf16.txt", tmp_path / "answer.txt"
    binary.write_bytes("Tokyo is in Japan.".encode("utf-16-le"))
    good.write_text(ANSWER, encoding="utf-8")
    async def pushed(kind):
        # the modal's directory tree has its own workers, cancelled when it closes: wait on turns
        for _ in range(200):
            if isinstance(app.screen, kind):
                return app.screen
            await pilot.pause()
        raise AssertionError(f"expected {kind.__name__}, got {app.screen!r}")

    app = make_app(workbench, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        (await pushed(OpenFileModal)).dismiss(binary)
        modal = await pushed(ErrorModal)
        assert "contains a NUL byte" in modal.message and str(binary) in modal.message
        modal.dismiss()
        await pilot.press("ctrl+o")
        (await pushed(OpenFileModal)).dismiss(good)
        for _ in range(200):
            if app.query_one("#answer", TextArea).text == ANSWER:
                break
            await pilot.pause()
        assert app.query_one("#answer", TextArea).text == ANSWER


def test_tui_refuses_a_bad_file_before_the_screen_opens(tmp_path):
    from typer.testing import CliRunner

    from tui.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["tui", str(tmp_path / "missing.md")])
    assert res.exit_code == 2 and "no such file" in res.output
    res = runner.invoke(app, ["tui", "-"], input=b"Tokyo is in Japan.")
    assert res.exit_code == 2 and "give a file, not '-'" in res.output
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe\x00")
    res = runner.invoke(app, ["tui", str(tmp_path / "bin.md")])
    assert res.exit_code == 2 and "not valid UTF-8" in res.output


async def test_inspect_edit_label_and_export(workbench, tmp_path):
    from textual.widgets import Input

    from store.annotations import claim_annotations
    from tui.screens.export import ExportModal
    from tui.screens.inspect import InspectorScreen
    from tui.screens.modals import EditClaimModal

    app = make_app(workbench)
    async with app.run_test(size=SIZE) as pilot:
        run_id = await run_answer(app, pilot)
        first = rq.run_claims(app.db, run_id)[0]
        # the inspector: passages with their retrieval scores and probability bars
        app.query_one("#claims").focus()
        await pilot.press("enter")
        await wait_for_screen(app, pilot, InspectorScreen)
        cards = [plain(w.content) for w in app.screen.query(".card")]
        assert cards[0].startswith(first.text)
        assert len(cards) == 1 + 3  # the claim, then top-k = 3 passages
        assert all("fused" in c and "bm25" in c and "dense" in c for c in cards[1:])
        assert any("entail" in c and "contradict" in c for c in cards[1:])
        await pilot.press("escape")
        # edit the first claim: only it is re-verified
        other_verdict = app.db.execute("SELECT id FROM verdicts WHERE claim_id = ?",
                                       [rq.run_claims(app.db, run_id)[1].id]).fetchall()
        await pilot.press("e")
        await wait_for_screen(app, pilot, EditClaimModal)
        field = app.screen.query_one(Input)
        field.value = "Bariatric surgery improves mental health outcomes."
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        edited = rq.run_claims(app.db, run_id)[0]
        assert edited.text == "Bariatric surgery improves mental health outcomes." and edited.status == "done"
        assert app.db.execute("SELECT original_text FROM claims WHERE id = ?", [edited.id]).fetchone()[0] == first.text
        assert app.db.execute("SELECT id FROM verdicts WHERE claim_id = ?",
                              [rq.run_claims(app.db, run_id)[1].id]).fetchall() == other_verdict
        assert str(app.query_one("#claims").get_row_at(0)[4]).startswith("Bariatric surgery improves")
        # label the model's verdict: stored beside it, shown in the table
        await pilot.press("x")
        await pilot.pause()
        (note,) = claim_annotations(app.db, edited.id)
        assert note.judgement == "wrong" and note.verdict_id is not None
        assert str(app.query_one("#claims").get_row_at(0)[3]) == "✘"
        # export as JSONL
        await pilot.press("ctrl+s")
        await wait_for_screen(app, pilot, ExportModal)
        out = tmp_path / "run.jsonl"
        app.screen.query_one("#format").value = "jsonl"
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(out)
        app.screen.query_one("#export-path", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        # and as the HTML report (the file a reviewer without a terminal opens)
        await pilot.press("ctrl+s")
        await wait_for_screen(app, pilot, ExportModal)
        page = tmp_path / "run.html"
        app.screen.query_one("#format").value = "html"
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(page)
        app.screen.query_one("#export-path", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
    html_page = page.read_text(encoding="utf-8")
    assert html_page.startswith("<!DOCTYPE html>") and f"claimscope run {run_id}" in html_page
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["text"] for x in lines] == [c.text for c in rq.run_claims(open_db(workbench.settings.db_path), run_id)]
    assert lines[0]["human_judgement"] == "wrong" and len(lines[0]["evidence"]) == 3
    assert lines[2]["checkable"] is False and lines[2]["note"]


async def test_history_reopen_compare_and_delete(workbench):
    from tui.screens.compare import CompareScreen
    from tui.screens.modals import ConfirmModal

    app = make_app(workbench)
    async with app.run_test(size=SIZE) as pilot:
        first = await run_answer(app, pilot)
        await pilot.press("ctrl+n")
        second = await run_answer(app, pilot, ANSWER.replace("KLF4", "KLF5"))
        assert second != first
        await pilot.press("f2")
        await wait_for_screen(app, pilot, HistoryScreen)
        runs = app.screen.query_one("#runs")
        assert runs.row_count == 2
        await pilot.press("space", "down", "space", "c")
        await wait_for_screen(app, pilot, CompareScreen)
        summary = str(app.screen.query_one("#compare-summary").render())
        assert summary.startswith("4 claims: 2 in both runs")
        await pilot.press("escape")
        await pilot.press("f2")
        await wait_for_screen(app, pilot, HistoryScreen)
        await pilot.press("down", "enter")  # the older run
        await wait_until(pilot, lambda: app.run_id == first)
        assert app.query_one("#answer").text == ANSWER
        await pilot.press("f2")
        await wait_for_screen(app, pilot, HistoryScreen)
        await pilot.press("d")
        await wait_for_screen(app, pilot, ConfirmModal)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.query_one("#runs").row_count == 1)
        assert rq.get_run(app.db, second) is None and rq.get_run(app.db, first) is not None
        assert app.db.execute("SELECT count(*) FROM claims WHERE run_id = ?", [second]).fetchone()[0] == 0


async def test_interrupted_run_resumes_in_the_app(workbench):
    """A run cut off after its first verdict (as by a crash) is reopened and finished; the
    stored verdict is kept, not recomputed."""
    import threading

    from core.pipeline.runner import Cancelled

    db = workbench.open_db()
    pipe = workbench.pipeline(db, workbench_options(workbench))
    cancel = threading.Event()
    run_id = pipe.start(ANSWER)
    with pytest.raises(Cancelled):
        pipe.resume(run_id, lambda e: e.kind == "verdict_ready" and cancel.set(), cancel)
    kept = db.execute("SELECT v.id FROM verdicts v JOIN claims c ON c.id = v.claim_id WHERE c.run_id = ?",
                      [run_id]).fetchall()
    assert len(kept) == 1
    app = make_app(workbench)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_for_screen(app, pilot, HistoryScreen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.run_id == run_id)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.run_id == run_id  # the same run, finished
    assert rq.get_run(db, run_id).status == "done"
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    after = db.execute("SELECT v.id FROM verdicts v JOIN claims c ON c.id = v.claim_id WHERE c.run_id = ?",
                       [run_id]).fetchall()
    assert len(after) == 2 and kept[0] in after


def workbench_options(workbench):
    from core.workbench import RunOptions

    return RunOptions.from_settings(workbench.settings)


async def test_settings_are_saved_and_bad_models_reach_the_error_modal(workbench, tmp_path):
    from textual.widgets import Input, Switch

    from tui.screens.modals import ErrorModal
    from tui.screens.settings import SettingsScreen

    app = make_app(workbench, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for_screen(app, pilot, SettingsScreen)
        app.screen.query_one("#top_k", Input).value = "500"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "'run.top_k' must be between 1 and 100" in str(app.screen.query_one("#settings-error").render())
        app.screen.query_one("#top_k", Input).value = "5"
        app.screen.query_one("#verifier", Input).value = str(tmp_path / "no-such-model")
        app.screen.query_one("#english_only", Switch).value = True
        await pilot.press("ctrl+s")
        await pilot.pause()
        saved = load_settings(tmp_path / "settings.toml")
        assert saved.top_k == 5 and saved.verifier == str(tmp_path / "no-such-model")
        assert saved.english_only and "english_only = true" in (tmp_path / "settings.toml").read_text()
        assert app.workbench.settings.top_k == 5
        await run_answer_expecting_error(app, pilot)
        assert isinstance(app.screen, ErrorModal)
        assert "no-such-model" in app.screen.message
        assert not app.running


async def run_answer_expecting_error(app, pilot):
    from textual.widgets import TextArea

    app.query_one("#answer", TextArea).load_text(ANSWER)
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_scores_screen_aligns_aspects_and_recomputes_with_beta(workbench):
    from textual.widgets import Input, TextArea

    from tui.screens.scores import ScoresScreen

    app = make_app(workbench)
    async with app.run_test(size=SIZE) as pilot:
        run_id = await run_answer(app, pilot)
        await pilot.press("f4")
        await wait_for_screen(app, pilot, ScoresScreen)
        assert "Factual precision" in str(app.screen.query_one("#precision").render())
        app.screen.query_one("#aspects", TextArea).load_text("mental health after surgery\nKLF4 in smooth muscle cells\n")
        app.screen.query_one("#query", Input).value = "What is known about bariatric surgery and KLF4?"
        await pilot.press("ctrl+a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        icat = rq.run_scores(app.db, run_id)["icat"]["detail"]
        assert [a["text"] for a in icat["aspects"]] == ["mental health after surgery", "KLF4 in smooth muscle cells"]
        assert icat["beta"] == 1.0 and icat["n_claims"] == 2
        table = app.screen.query_one("#coverage")
        assert table.row_count == 2 and len(table.columns) == 1 + 2  # aspect + one column per verified claim
        shown = [[str(table.get_cell_at((r, c))) for c in range(1, 3)] for r in range(2)]
        aligned = {int(k): set(v) for k, v in icat["alignment"]["claim_aspects"].items()}
        verdicts = [c.verdict for c in rq.run_claims(app.db, run_id) if c.checkable]
        expected = [["●" if a in aligned.get(i, ()) and verdicts[i] == "supported" else "○" if a in aligned.get(i, ())
                     else "·" for i in range(2)] for a in (1, 2)]
        assert shown == expected and sum(len(s) for s in aligned.values()) >= 1  # something was aligned
        app.screen.query_one("#beta", Input).value = "2"
        await pilot.pause()
        again = rq.run_scores(app.db, run_id)["icat"]["detail"]
        assert again["beta"] == 2.0 and again["aspects"] == icat["aspects"]
        assert "ICAT-2" in str(app.screen.query_one("#icat").render())


async def test_a_scores_screen_failure_reaches_the_error_modal(workbench, tmp_path):
    """A worker of the scores screen that fails (here the LLM asked for the query's ICAT-A
    aspects does not exist) is shown in the app's error modal, like every other worker
    failure — not swallowed because Worker.StateChanged does not bubble from a screen."""
    from dataclasses import replace

    from textual.widgets import Button, Input

    from tui.screens.modals import ErrorModal
    from tui.screens.scores import ScoresScreen

    missing = tmp_path / "no-such-llm.gguf"
    app = make_app(workbench.with_settings(replace(workbench.settings, llm=str(missing))), preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await run_answer(app, pilot)
        await pilot.press("f4")
        screen = await wait_for_screen(app, pilot, ScoresScreen)
        screen.query_one("#query", Input).value = "What is known about bariatric surgery?"
        screen.query_one("#llm-aspects", Button).press()
        await pilot.pause()
        await app.workers.wait_for_complete()
        modal = await wait_for_screen(app, pilot, ErrorModal)
        assert "no-such-llm" in modal.message
        assert not app.running


async def test_attributed_answer_shows_each_claim_beside_its_sources(workbench, data_dir):
    """An ExpertQA answer attributed by `claimscope attribute` (seed 002), reopened in the app:
    every claim shows its attribution label and, in the inspector, the sources it cites."""
    from typer.testing import CliRunner

    from tui.cli import app as cli

    res = CliRunner().invoke(cli, ["--db", str(workbench.settings.db_path), "attribute", "--expertqa",
                                   str(data_dir / "fixtures" / "expertqa_dev_5.jsonl"), "--index", "1", "--json"])
    assert res.exit_code == 0, res.output
    stored = json.loads(res.stdout.strip().splitlines()[-1])
    app = make_app(workbench, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_for_screen(app, pilot, HistoryScreen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.run_id == stored["run_id"])
        table = app.query_one("#claims")
        labels = [str(table.get_row_at(i)[1]).split(" ", 1)[1] for i in range(table.row_count)]
        assert labels == [c["label"] for c in stored["claims"]]
        assert "attribution · AutoAIS" in str(app.query_one("#run-header").render())
        cited = next(i for i, c in enumerate(stored["claims"]) if c["citations"])
        table.focus()
        table.move_cursor(row=cited)
        await pilot.pause()
        card = plain(app.query_one("#inspector").query(".card").first().content)
        claim = stored["claims"][cited]
        assert "cites " + " ".join(f"[{n}]" for n in claim["citations"]) in card
        assert stored["claims"][cited]["label"] in card


async def test_keys_are_remapped_by_binding_id_and_palette_lists_actions(workbench):
    from dataclasses import replace


    app = make_app(workbench.with_settings(replace(workbench.settings, keymap={"history": "f9"})), preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")  # no longer bound
        await pilot.pause()
        assert not isinstance(app.screen, HistoryScreen)
        await pilot.press("f9")
        await wait_for_screen(app, pilot, HistoryScreen)
        await pilot.press("escape")
        names = [name for name, _, _ in app.palette_commands()]
        assert {"Run", "History", "Export run", "Scores", "Settings", "Help"} <= set(names)


async def test_query_expansion_run_shows_generated_text_apart_and_acu_on_demand(shared_models, db_path):
    """A query2doc run (seed 000): the inspector shows the pseudo-document as generated text,
    apart from the evidence cards, with its leakage-audit result; each passage carries its
    context characteristics (seed 001 §4.1); `a` scores ACU (seed 001 §5) passage by passage."""
    from store.inspect import claim_view
    from tui.widgets.inspector import EvidenceInspector

    wb = shared_models.with_settings(Settings(db_path=db_path, sources=("scifact-mini",), top_k=2,
                                              mode="query2doc", expansion_max_tokens=32))
    app = make_app(wb, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        run_id = await run_answer(app, pilot, "Bariatric surgery leads to negative outcomes in mental health.")
        db = open_db(db_path)
        claim_id, = db.execute("SELECT id FROM claims WHERE run_id = ?", [run_id]).fetchone()
        stored = db.execute("SELECT method, documents, matched FROM expansions WHERE claim_id = ?", [claim_id]).fetchall()
        assert len(stored) == 1 and stored[0][0] == "query2doc" and stored[0][2] in (0, 1)
        generated = json.loads(stored[0][1])[0]
        cards = [plain(s.content) for s in app.query_one("#inspector", EvidenceInspector).query(".card")]
        expansion = [c for c in cards if "not evidence" in c]
        assert len(expansion) == 1 and "query2doc" in expansion[0]
        assert ("already states the retrieved evidence" in expansion[0]) == bool(stored[0][2])
        evidence_cards = [c for c in cards if "bm25" in c and "fused" in c]
        assert len(evidence_cards) == 2 and all("jaccard" in c and "Flesch" in c for c in evidence_cards)
        assert all(generated[:40] not in c for c in evidence_cards)  # generated text is never shown as evidence

        app.query_one("#claims").focus()
        await pilot.press("a")  # context usage of the selected claim's two passages
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = claim_view(db, claim_id)
        assert all(ev.context_usage is not None for ev in view.evidence)
        assert all(-3 <= ev.context_usage.acu_sum <= 3 for ev in view.evidence)
        cards = [plain(s.content) for s in app.query_one("#inspector", EvidenceInspector).query(".card")]
        assert sum("ACU " in c for c in cards) == 2
