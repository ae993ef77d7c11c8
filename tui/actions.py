"""The workbench's actions that open screens and dialogs (inspect, history, scores, export,
settings, help, files, labels, edits, context usage), kept apart from the app's layout, run
workers and event handling in tui/app.py. A mixin of :class:`tui.app.ClaimscopeApp`: it uses
the app's state (``db``, ``workbench``, ``run_id``, …) and defines no ``@on`` handlers (those
need the App's metaclass), only actions, workers and ``on_*`` message methods.
"""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.widgets import Static, TextArea

from core.settings import Settings, save_settings
from store import runs as rq
from store.annotations import add_annotation
from store.db import write_tx
from store.inspect import claim_view
from tui.messages import ContextUsageScored, Status
from tui.widgets.claims import ClaimsTable
from tui.widgets.inspector import EvidenceInspector


class AppActions:
    """Actions of :class:`tui.app.ClaimscopeApp` (see the module docstring)."""

    def action_inspect(self) -> None:
        from tui.screens.inspect import InspectorScreen

        claim_id = self.query_one("#claims", ClaimsTable).selected_claim_id
        view = claim_view(self.db, claim_id) if claim_id is not None else None
        if view is not None:
            self.push_screen(InspectorScreen(view, self.colours, self.attribution, self.workbench.characterizer()))

    # ------------------------------------------------------------------ context usage

    def action_context_usage(self) -> None:
        """ACU of the selected claim's evidence with the settings' LLM (Hagström et al., "A Reality Check on Context Utilisation" §5)."""
        claim_id = self.query_one("#claims", ClaimsTable).selected_claim_id
        view = claim_view(self.db, claim_id) if claim_id is not None else None
        if view is None or self.running:
            self.notify("Select a claim (and wait for the run to finish) to score its context usage.",
                        severity="warning")
            return
        if view.status != "done" or not view.evidence:
            self.notify("Context usage needs a verified claim with evidence.", severity="warning")
            return
        self.running = True
        self.score_context_usage(claim_id, len(view.evidence))

    @work(thread=True, exclusive=True, group="pipeline", exit_on_error=False, description="Scoring context usage")
    def score_context_usage(self, claim_id: int, total: int) -> None:
        """P(True/None/False) without and with each passage; one message per stored passage."""
        from core.pipeline.stored import score_stored_claim

        db = self.workbench.open_db()
        try:
            self.post_message(Status("context usage: loading the LLM …"))
            done = 0

            def scored(evidence_id: int, usage) -> None:
                nonlocal done
                done += 1
                self.post_message(ContextUsageScored(claim_id, evidence_id, usage.acu_sum, done, total))

            score_stored_claim(db, claim_id, self.workbench.context_usage(), scored)
        finally:
            db.close()

    def on_context_usage_scored(self, message: ContextUsageScored) -> None:
        self._status(f"context usage: passage {message.done}/{message.total} ACU {message.acu_sum:+.2f}")
        self._refresh_claim(message.claim_id)

    # ------------------------------------------------------------------ review

    def action_edit_claim(self) -> None:
        from tui.screens.modals import EditClaimModal

        claim_id = self.query_one("#claims", ClaimsTable).selected_claim_id
        if claim_id is None or self.running:
            self.notify("Select a claim (and wait for the run to finish) to edit it.", severity="warning")
            return
        view = claim_view(self.db, claim_id)

        def done(text: str | None) -> None:
            if text and text != view.text:
                self.running = True
                self.timing = {"start": self.clock()}
                self.reverify(claim_id, text, self.options())

        self.push_screen(EditClaimModal(view.text), done)

    def action_label(self, judgement: str) -> None:
        claim_id = self.query_one("#claims", ClaimsTable).selected_claim_id
        if claim_id is None:
            return
        view = claim_view(self.db, claim_id)
        if view.verdict is None:
            self.notify("This claim has no verdict to label yet.", severity="warning")
            return
        with write_tx(self.db):
            add_annotation(self.db, claim_id, judgement=judgement)
        self._refresh_claim(claim_id)
        self.notify(f"Labelled the verdict of claim {view.idx + 1} {judgement}.")

    # ------------------------------------------------------------------ input

    def action_new_answer(self) -> None:
        if self.running:
            return
        answer = self.query_one("#answer", TextArea)
        answer.read_only = False
        answer.load_text("")
        answer.border_title = "answer"
        self.run_id = None
        self.timing = {}
        self.attribution = None
        self.query_one("#claims", ClaimsTable).attribution = {}
        self.query_one("#claims", ClaimsTable).clear()
        self.query_one("#inspector", EvidenceInspector).show(None, self.colours)
        self.query_one("#run-header", Static).update("No run yet: type or paste an answer, then ctrl+r.")
        answer.focus()

    def action_edit_answer(self) -> None:
        """Edit a copy of the shown run's text (running it makes a new run)."""
        answer = self.query_one("#answer", TextArea)
        answer.read_only = False
        answer.border_title = "answer (edited copy: ctrl+r runs it as a new run)"
        self.run_id = None
        answer.focus()

    def action_open_file(self) -> None:
        from tui.screens.modals import OpenFileModal

        def done(path: Path | None) -> None:
            if path is None:
                return
            from core.errors import InputError
            from core.ingest.sources import read_answer_file

            try:
                text = read_answer_file(path)  # the checks `claimscope tui FILE` and check --file make
            except InputError as exc:
                self._error("Cannot open the file", str(exc))
                return
            except OSError as exc:
                self._error("Cannot open the file", f"{path}: {exc.strerror or exc}")
                return
            self.action_new_answer()
            self.query_one("#answer", TextArea).load_text(text)
            self._status(f"opened {path}")

        self.push_screen(OpenFileModal(), done)

    def _error(self, title: str, message: str) -> None:
        from tui.screens.modals import ErrorModal

        self.push_screen(ErrorModal(title, message))

    # ------------------------------------------------------------------ screens

    def action_history(self) -> None:
        from tui.screens.compare import CompareScreen
        from tui.screens.history import HistoryChoice, HistoryScreen

        def done(choice: HistoryChoice | None) -> None:
            if choice is None:
                if self.run_id is not None and rq.get_run(self.db, self.run_id) is None:
                    self.action_new_answer()  # the open run was deleted
                return
            if choice.reopen is not None and not self.running:
                self.timing = {}
                self.stages.clear()
                self._show_run(choice.reopen)
            elif choice.compare is not None:
                self.push_screen(CompareScreen(self.db, *choice.compare))

        self.push_screen(HistoryScreen(self.db), done)

    def action_scores(self) -> None:
        from tui.screens.scores import ScoresScreen

        if self.run_id is None:
            self.notify("Run or reopen a run first.", severity="warning")
            return

        def done(_=None) -> None:
            self._refresh_header()

        self.push_screen(ScoresScreen(self.db, self.workbench, self.run_id), done)

    def action_export(self) -> None:
        from tui.screens.export import ExportModal

        if self.run_id is None:
            self.notify("Run or reopen a run first.", severity="warning")
            return

        def done(path: Path | None) -> None:
            if path is not None:
                self.notify(f"Exported run {self.run_id} to {path}")

        self.push_screen(ExportModal(self.db, self.run_id), done)

    def action_settings(self) -> None:
        from tui.screens.settings import SettingsScreen

        def done(settings: Settings | None) -> None:
            if settings is None:
                return
            if self.persist_settings:
                try:
                    path = save_settings(settings, self.settings_path)
                except OSError as exc:
                    self._error("Cannot save the settings", str(exc))
                    return
                self.notify(f"Settings saved to {path}")
            self.workbench = self.workbench.with_settings(settings)
            self.set_theme_name(settings.theme)
            if settings.keymap:
                self.set_keymap(settings.keymap)
            self._fill_controls()

        self.push_screen(SettingsScreen(self.workbench.settings, self.claimscope_themes), done)

    def set_theme_name(self, name: str) -> None:
        self.theme = name
        if self.run_id is not None:
            self._show_run(self.run_id, keep_text=True)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        rows = [(b.key, b.description or b.action, b.id) for bindings in self._bindings.key_to_bindings.values()
                for b in bindings if b.id]
        rows += [(b.key, b.description, b.id) for b in ClaimsTable.BINDINGS]
        self.push_screen(HelpScreen(rows))

    def palette_commands(self):
        """(name, help, callback) for the command palette."""
        return [
            ("Run", "Check the answer (or finish an interrupted run)", self.action_run),
            ("Cancel run", "Stop after the current claim; the run stays resumable", self.action_cancel_run),
            ("New answer", "Clear the text and the claims", self.action_new_answer),
            ("Open file", "Load an answer from a text file", self.action_open_file),
            ("History", "Reopen, delete or compare past runs", self.action_history),
            ("Export run", "Write the run as JSONL, CSV or Markdown", self.action_export),
            ("Scores", "Factual precision and ICAT coverage of the query's aspects", self.action_scores),
            ("Settings", "Models, thresholds, top-k, device, theme", self.action_settings),
            ("Help", "How the workbench works, and its keys", self.action_help),
        ]
