"""The claimscope workbench: paste an answer, run, watch claims and verdicts stream in,
inspect each claim's evidence, review, compare and export runs.

Model calls run in thread workers (group ``pipeline``) with their own SQLite connection;
they post one :class:`~tui.messages.RunEvent` per stored pipeline event and never touch a
widget. Every view is read back from the store, so a reopened run looks exactly like a
live one. Failures of any worker reach one handler (:meth:`on_worker_state_changed`),
which shows them in a modal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Select, Static, TextArea
from textual.widgets.text_area import Selection
from textual.worker import Worker, WorkerState

from core.decompose import DECOMPOSERS
from core.errors import ClaimscopeError
from core.pipeline.events import EventKind
from core.score.precision import factual_precision
from core.workbench import RunOptions, Workbench
from store import runs as rq
from store.inspect import claim_view, run_claim_views
from themes import THEMES, THEMES_CSS
from tui.actions import AppActions
from tui.commands import WorkbenchCommands
from tui.messages import IndexProgress, ModelsReady, OtherLanguages, RunEvent, ScreenWorkerChanged, Status
from tui.widgets.claims import ClaimsTable
from tui.widgets.inspector import EvidenceInspector

VERIFIERS = {"embedded": "NLI verifier", "llm": "LLM judge"}
# Labels for the input bar; the names themselves come from the decompose registry, so a new
# variant shows up here (under its own name until it gets a label).
_DECOMPOSER_LABELS = {"rules": "rule claims", "sentence": "sentences", "llm": "LLM claims", "atomic": "trained atomic facts"}
DECOMPOSER_NAMES = {name: _DECOMPOSER_LABELS.get(name, name) for name in DECOMPOSERS}
ALL_SOURCES = "__all__"


class ClaimscopeApp(AppActions, App):
    TITLE = "claimscope"
    CSS_PATH = ["app.tcss", str(THEMES_CSS)]
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS = [
        Binding("ctrl+r", "run", "Run", id="run", priority=True),
        Binding("escape", "cancel_run", "Cancel run", id="cancel-run", show=False),
        Binding("ctrl+n", "new_answer", "New", id="new-answer"),
        Binding("ctrl+t", "edit_answer", "Edit text", id="edit-answer", show=False),
        Binding("ctrl+o", "open_file", "Open", id="open-file"),
        Binding("ctrl+g", "against", "Given sources", id="against"),
        Binding("f2", "history", "History", id="history"),
        Binding("ctrl+s", "export", "Export", id="export"),  # ctrl+e is end-of-line in the text box
        Binding("f4", "scores", "Scores", id="scores"),
        Binding("f3", "settings", "Settings", id="settings"),
        Binding("f1", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
    ]

    def __init__(
        self,
        workbench: Workbench,
        *,
        settings_path: Path | None = None,
        persist_settings: bool = True,
        clock: Callable[[], float] = time.perf_counter,
        preload: bool = True,
        opened: tuple[str, str] | None = None,
    ) -> None:
        """``opened``: (where it came from, text) of an answer to show in the editor at start
        (`claimscope tui FILE`), read and checked by the caller as `check --file` reads one."""
        super().__init__()
        self.workbench = workbench
        self.opened = opened
        self.settings_path = settings_path
        self.persist_settings = persist_settings
        self.clock = clock
        self.preload = preload
        self.db = None  # the UI thread's connection (reads and annotations); workers open their own
        self.run_id: int | None = None
        self.stages: dict[int, str] = {}  # claim id → retrieving | verifying while a worker has it
        self.cancel_flag = threading.Event()
        self.running = False
        self.timing: dict[str, float] = {}
        self.attribution: dict | None = None  # the shown run's attribution detail (cited answers)
        self.claimscope_themes = list(THEMES)
        self.against: list | None = None  # documents to check against instead of a knowledge source

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Verdict colours for any theme that does not set them (Textual's built-in ones)."""
        return {**super().get_theme_variable_defaults(), **THEMES["claimscope-dark"].variables}

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static("No run yet: type or paste an answer, then ctrl+r.", id="run-header", markup=False)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield TextArea(id="answer", soft_wrap=True, tab_behavior="focus")
                with Grid(id="controls"):
                    yield Select([("all sources", ALL_SOURCES)], id="source", allow_blank=False,
                                 tooltip="Knowledge source the evidence comes from")
                    yield Select([(v, k) for k, v in DECOMPOSER_NAMES.items()], id="decomposer", allow_blank=False,
                                 tooltip="How the answer is split into claims")
                    yield Select([(v, k) for k, v in VERIFIERS.items()], id="verifier", allow_blank=False,
                                 tooltip="What judges each claim against its evidence")
                    yield Button("Run ▶", id="run-button", variant="primary", tooltip="Run (ctrl+r)")
            with Vertical(id="right"):
                yield ClaimsTable(id="claims")
                yield EvidenceInspector(id="inspector")
        yield Static("", id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        for theme in THEMES.values():
            self.register_theme(theme)
        s = self.workbench.settings
        self.theme = s.theme if s.theme in self.available_themes else "claimscope-dark"
        if s.keymap:
            self.set_keymap(s.keymap)
        self.db = self.workbench.open_db()
        self.query_one("#answer", TextArea).border_title = "answer"
        self.query_one("#claims", ClaimsTable).border_title = "claims"
        self.query_one("#inspector", EvidenceInspector).border_title = "evidence"
        self._fill_controls()
        self.query_one("#inspector", EvidenceInspector).show(None, self.colours)
        self.query_one("#answer", TextArea).focus()
        if self.opened is not None:
            where, text = self.opened
            self.query_one("#answer", TextArea).load_text(text)
            self._status(f"opened {where}: ctrl+r checks it")
        if self.preload:
            self.warm_up(self.options())

    @work(thread=True, group="warmup", exit_on_error=False, description="Loading models")
    def warm_up(self, options: RunOptions) -> None:
        """Load the models in the background while the user types (the UI never waits)."""
        self.post_message(Status("loading models in the background …"))
        self.workbench.warm_up(options)
        self.post_message(ModelsReady())

    def _fill_controls(self) -> None:
        from core.ingest.sources import BUILTINS
        from store.sources import list_sources

        s = self.workbench.settings
        names = [src.name for src in list_sources(self.db)]
        options = [("all sources", ALL_SOURCES)] + [(n, n) for n in names]
        options += [(f"{n} (built in, indexed on first use)", n) for n in BUILTINS if n not in names]
        source = self.query_one("#source", Select)
        source.set_options(options)
        wanted = s.sources[0] if len(s.sources) == 1 else ALL_SOURCES
        source.value = wanted if any(v == wanted for _, v in options) else ALL_SOURCES
        self.query_one("#decomposer", Select).value = s.decomposer if s.decomposer in DECOMPOSER_NAMES else "rules"
        verifier = self.query_one("#verifier", Select)
        if s.verifier not in VERIFIERS:
            verifier.set_options([(v, k) for k, v in VERIFIERS.items()] + [(f"NLI: {s.verifier}", s.verifier)])
        verifier.value = s.verifier

    @property
    def colours(self) -> dict[str, str]:
        return self.get_css_variables()

    def options(self) -> RunOptions:
        """The run options: settings, with the input bar's choices on top."""
        source = self.query_one("#source", Select).value
        return replace(
            RunOptions.from_settings(self.workbench.settings),
            decomposer=str(self.query_one("#decomposer", Select).value),
            verifier=str(self.query_one("#verifier", Select).value),
            sources=() if source == ALL_SOURCES else (str(source),),
        )

    # ------------------------------------------------------------------ running

    def action_run(self) -> None:
        if self.running:
            self.notify("A run is in progress (escape cancels it).", severity="warning")
            return
        text = self.query_one("#answer", TextArea).text
        if not text.strip():
            self.notify("Type or paste an answer first.", severity="error")
            return
        resume = None
        if self.run_id is not None:
            run = rq.get_run(self.db, self.run_id)
            if run is not None and run.status != "done" and run.input_text == text:
                resume = self.run_id  # an interrupted or cancelled run: finish it, recompute nothing
        self.cancel_flag = threading.Event()
        self.running = True
        self.timing = {"start": self.clock()}
        self.stages.clear()
        if resume is None:
            self.run_id = None
            self.query_one("#claims", ClaimsTable).clear()
            self.query_one("#inspector", EvidenceInspector).show(None, self.colours)
        self._status("starting …")
        self.check(text, self.options(), resume)

    @on(Button.Pressed, "#run-button")
    def _run_pressed(self) -> None:
        self.action_run()

    def action_cancel_run(self) -> None:
        if self.running:
            self.cancel_flag.set()
            self._status("cancelling after the current claim …")

    @work(thread=True, exclusive=True, group="pipeline", exit_on_error=False, description="Checking the answer")
    def check(self, text: str, options: RunOptions, resume: int | None = None) -> None:
        """Decompose, retrieve, verify, score — in this thread, with this thread's connection."""
        from core.pipeline.runner import Cancelled

        db = self.workbench.open_db()
        try:
            self.post_message(Status("loading models …"))
            pipeline = self._pipeline(db, options, resume)
            listener = self._listener
            if resume is None:  # (a resumed run is the one already on screen)
                self.post_message(Status("splitting the answer into claims …"))
                resume = pipeline.start(text, listener=listener)
                if not options.english_only:
                    self._read_languages(db, resume)
            pipeline.resume(resume, listener, self.cancel_flag)
        except Cancelled:
            self.post_message(Status("cancelled: ctrl+r finishes the run (stored claims are kept)"))
        finally:
            db.close()

    def _read_languages(self, db, run_id: int) -> None:
        """In the check worker: when claims of a run made in every language read as another
        language, post :class:`OtherLanguages` (the settings' "English only" leaves them unverified)."""
        from core.language import language_names, other_languages

        claims = [c.text for c in rq.run_claims(db, run_id) if c.checkable]
        langs = other_languages(claims, self.workbench.language_guard())
        if langs:
            self.post_message(OtherLanguages(run_id, f"{sum(langs.values())} of {len(claims)} claims read as another "
                                             f"language ({language_names(langs)}): the models read English, so their "
                                             "verdicts mean little. The settings' English only switch leaves them unverified."))

    def on_other_languages(self, message: OtherLanguages) -> None:
        self.notify(message.text, title=f"Run {message.run_id}", severity="warning", timeout=12)

    @work(thread=True, exclusive=True, group="pipeline", exit_on_error=False, description="Re-verifying a claim")
    def reverify(self, claim_id: int, text: str, options: RunOptions) -> None:
        db = self.workbench.open_db()
        try:
            self.post_message(Status("re-verifying the edited claim …"))
            self._pipeline(db, options, self.run_id).reverify_claim(claim_id, text, self._listener)
        finally:
            db.close()

    def _pipeline(self, db, options: RunOptions, run_id: int | None):
        """A run over the given sources (core/pipeline/given.py) when the user set some or the run
        being resumed was one; else over the knowledge sources."""
        from core.pipeline.given import given_from_config, given_pipeline

        run = rq.get_run(db, run_id) if run_id is not None else None
        stored = given_from_config(db, run.config) if run is not None else None
        if stored is not None or (run is None and self.against):
            return given_pipeline(self.workbench, db, options, docs=self.against, stored=stored)
        return self.workbench.pipeline(db, options, progress=self._index_progress)

    def action_against(self) -> None:
        from tui.screens.against import AgainstScreen

        self.push_screen(AgainstScreen(self.against), self._set_against)

    def _set_against(self, docs: list | None) -> None:
        if docs is None:
            return
        self.against = docs or None
        answer = self.query_one("#answer", TextArea)
        answer.border_subtitle = f"against {len(docs)} given source(s)" if docs else ""
        self._status(f"the next run checks against {len(docs)} given source(s) only" if docs
                     else "the next run checks against the knowledge sources")

    def _listener(self, event) -> None:
        self.post_message(RunEvent(event))

    def _index_progress(self, label: str, done: int, total: int | None) -> None:
        self.post_message(IndexProgress(label, done, total))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self._worker_changed(event.worker, event.state)

    def on_screen_worker_changed(self, message: ScreenWorkerChanged) -> None:
        """A screen's worker (its StateChanged does not bubble; the screen forwards it)."""
        self._worker_changed(message.worker, message.state)

    def _worker_changed(self, worker: Worker, state: WorkerState) -> None:
        """The one error handler: any worker failure is shown in a modal; the run stays stored."""
        if worker.group == "warmup" and state == WorkerState.ERROR:
            self._status(f"could not preload the models ({worker.error}); a run will report why")
            return
        if worker.group != "pipeline" or state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        self.running = False
        if state == WorkerState.ERROR:
            from tui.screens.modals import ErrorModal

            error = worker.error
            message = str(error) if isinstance(error, ClaimscopeError) else f"{type(error).__name__}: {error}"
            self._status(f"failed: {message}")
            self.push_screen(ErrorModal(worker.description or "Error", message))
        if self.run_id is not None:
            self._refresh_header()

    def on_status(self, message: Status) -> None:
        self._status(message.text)

    def on_models_ready(self) -> None:
        if not self.running and self.run_id is None:  # else a run's own status lines win
            self._status("models ready")

    def on_index_progress(self, message: IndexProgress) -> None:
        total = f"/{message.total}" if message.total else ""
        self._status(f"preparing the sources on first use (once): {message.label} {message.done}{total}")

    def on_run_event(self, message: RunEvent) -> None:
        ev = message.event
        if ev.kind is EventKind.RUN_STARTED:
            self._show_run(ev.run_id, keep_text=True)
            return
        if ev.run_id != self.run_id:
            return
        if ev.kind is EventKind.PROGRESS and ev.claim_id is not None:
            self.stages[ev.claim_id] = ev.payload["stage"]
            self._status(f"claim {ev.payload['idx'] + 1}: {ev.payload['stage']} …")
        elif ev.kind is EventKind.VERDICT_READY:
            self.stages.pop(ev.claim_id, None)
            self.timing.setdefault("first", self.clock())
        elif ev.kind in (EventKind.WARNING, EventKind.ERROR):
            self._status(f"claim {ev.payload['idx'] + 1}: {ev.payload['message']}")
        elif ev.kind is EventKind.RUN_FINISHED:
            self.timing["last"] = self.clock()
            self._status("done")
        elif ev.kind is EventKind.RUN_CANCELLED:
            self._status("cancelled")
        if ev.claim_id is not None:
            self._refresh_claim(ev.claim_id)
        if ev.kind in (EventKind.VERDICT_READY, EventKind.SCORE_UPDATED, EventKind.RUN_FINISHED, EventKind.CLAIM_FOUND):
            self._refresh_header()

    # ------------------------------------------------------------------ views

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def _show_run(self, run_id: int, keep_text: bool = False) -> None:
        """Show a stored run: its text (read-only, for span highlighting), claims, scores."""
        run = rq.get_run(self.db, run_id)
        if run is None:
            self.notify(f"Run {run_id} no longer exists.", severity="error")
            return
        self.run_id = run_id
        answer = self.query_one("#answer", TextArea)
        if not keep_text or answer.text != run.input_text:
            answer.load_text(run.input_text)
        answer.read_only = True
        answer.border_title = f"answer · run {run_id} (ctrl+t edits a copy)"
        table = self.query_one("#claims", ClaimsTable)
        self.attribution = (rq.run_scores(self.db, run_id).get("attribution") or {}).get("detail")
        table.attribution = {c["idx"]: c for c in (self.attribution or {}).get("claims", [])}
        table.show_claims(run_claim_views(self.db, run_id), self.colours)
        self._refresh_header()
        self._show_selected()
        structured = (rq.run_scores(self.db, run_id).get("structured") or {}).get("detail")
        if structured is not None:  # a `claimscope structured` run: its own view, over the workbench
            from tui.screens.structured import StructuredScreen

            self.push_screen(StructuredScreen({**structured, "run_id": run_id}))

    def _refresh_claim(self, claim_id: int) -> None:
        view = claim_view(self.db, claim_id)
        if view is None:
            return
        table = self.query_one("#claims", ClaimsTable)
        table.update_claim(view, self.stages.get(claim_id), self.colours)
        if table.selected_claim_id == claim_id:
            self._show_selected()

    def _refresh_header(self) -> None:
        if self.run_id is None:
            return
        run = rq.get_run(self.db, self.run_id)
        if self.attribution is not None:  # an attributed answer (ExpertQA, Malaviya et al.): its AutoAIS and label counts
            score = self.attribution.get("score")
            labels = "  ".join(f"{k} {v}" for k, v in self.attribution.get("labels", {}).items())
            self.query_one("#run-header", Static).update(
                f"run {self.run_id} · attribution · AutoAIS {'—' if score is None else f'{score:.2f}'} · {labels}")
            return
        claims = run_claim_views(self.db, self.run_id)
        checkable = [c for c in claims if c.checkable]
        done = [c for c in checkable if c.status == "done"]
        labels = [c.verdict for c in done]
        parts = [f"run {self.run_id}", "running" if self.running else run.status,
                 f"{len(done)}/{len(checkable)} verified"]
        if run.config.get("against"):
            parts.insert(1, f"against {len(run.config['against'])} given source(s)")
        if len(claims) > len(checkable):
            parts.append(f"{len(claims) - len(checkable)} not checkable")
        if labels:
            parts.append(f"factual precision {factual_precision(labels):.2f}")
            parts.append(" ".join(f"{icon}{labels.count(k)}" for k, icon in
                                  (("supported", "✔"), ("refuted", "✘"), ("not_enough_info", "?"), ("conflicting", "⚡"))))
        if "first" in self.timing:
            parts.append(f"first verdict {self.timing['first'] - self.timing['start']:.1f}s")
        if "last" in self.timing:
            parts.append(f"all {self.timing['last'] - self.timing['start']:.1f}s")
        self.query_one("#run-header", Static).update(" · ".join(parts))

    @on(DataTable.RowHighlighted, "#claims")
    def _highlighted(self) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        table = self.query_one("#claims", ClaimsTable)
        claim_id = table.selected_claim_id
        view = claim_view(self.db, claim_id) if claim_id is not None else None
        self.query_one("#inspector", EvidenceInspector).show(view, self.colours, self.attribution,
                                                             self.workbench.characterizer())
        answer = self.query_one("#answer", TextArea)
        if view is not None and view.span and answer.read_only:
            doc = answer.document
            start, end = (doc.get_location_from_index(i) for i in view.span)
            answer.selection = Selection(start, end)
            answer.scroll_cursor_visible()

    @on(DataTable.RowSelected, "#claims")
    def _selected(self) -> None:
        self.action_inspect()
