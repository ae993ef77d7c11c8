"""Past runs from the store: reopen, delete, mark two and compare them side by side; below
the table a plot of the highlighted run's text (factual precision of its runs over time) or,
with b, of the batch (per-answer precision of the runs that carry an input id)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label

from store.db import write_tx
from store.inspect import delete_run
from store.runs import batch_precisions, list_runs, same_text_runs
from tui.screens.modals import ConfirmModal
from tui.widgets.plots import PrecisionPlot


@dataclass(frozen=True)
class HistoryChoice:
    """What the history screen returns: a run to reopen, or two runs to compare."""

    reopen: int | None = None
    compare: tuple[int, int] | None = None


class HistoryScreen(Screen[HistoryChoice | None]):
    DEFAULT_CSS = "HistoryScreen #runs { height: 1fr; } HistoryScreen #precision-plot { height: 15; }"
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Back", id="history-back"),
        Binding("enter", "reopen", "Reopen", id="history-reopen"),
        Binding("d,delete", "delete", "Delete", id="history-delete"),
        Binding("space", "mark", "Mark", id="history-mark"),
        Binding("c", "compare", "Compare marked", id="history-compare"),
        Binding("b", "toggle_plot", "Text / batch plot", id="history-plot"),
    ]

    def __init__(self, db) -> None:
        super().__init__()
        self.db = db
        self.marked: list[int] = []
        self.plot_batch = False  # the plot shows the batch instead of the highlighted run's text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Runs — enter reopens, space marks two to compare, d deletes", classes="screen-title")
            yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            yield PrecisionPlot(id="precision-plot")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        for key, label in (("mark", " "), ("id", "run"), ("created", "created"), ("status", "status"),
                           ("claims", "claims"), ("fp", "precision"), ("input", "input")):
            table.add_column(label, key=key)
        self.reload()

    def reload(self) -> None:
        table = self.query_one("#runs", DataTable)
        table.clear()
        for r in list_runs(self.db, limit=500):
            fp = "" if r["factual_precision"] is None else f"{r['factual_precision']:.2f}"
            preview = " ".join(r["input"].split())[:60]
            table.add_row("●" if r["id"] in self.marked else "", str(r["id"]), r["created_at"], r["status"],
                          str(r["claims"]), Text(fp, justify="right"), preview, key=str(r["id"]))

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self.show_plot()

    def action_toggle_plot(self) -> None:
        self.plot_batch = not self.plot_batch
        self.show_plot()

    def show_plot(self) -> None:
        plot = self.query_one("#precision-plot", PrecisionPlot)
        colour = self.app.get_css_variables().get("verdict-supported", "#5DBB63")
        if self.plot_batch:
            values = [fp for _, _, fp in batch_precisions(self.db)]
            plot.show_batch(values, colour, "runs with an input id (check --jsonl lines)")
            return
        run_id = self._current()
        plot.show_over_time([] if run_id is None else [(rid, fp) for rid, _, fp in same_text_runs(self.db, run_id)],
                            colour)

    def _current(self) -> int | None:
        table = self.query_one("#runs", DataTable)
        if not table.row_count:
            return None
        key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return int(key.value)

    def action_reopen(self) -> None:
        run_id = self._current()
        if run_id is not None:
            self.dismiss(HistoryChoice(reopen=run_id))

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_reopen()

    def action_mark(self) -> None:
        run_id = self._current()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked = [*self.marked[-1:], run_id]  # keep the last two marked
        table = self.query_one("#runs", DataTable)
        for key in table.rows:
            table.update_cell(key, "mark", "●" if int(key.value) in self.marked else "")

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("Mark two runs with space first.", severity="warning")
            return
        self.dismiss(HistoryChoice(compare=(self.marked[0], self.marked[1])))

    def action_delete(self) -> None:
        run_id = self._current()
        if run_id is None:
            return

        def done(yes: bool | None) -> None:
            if yes:
                with write_tx(self.db):
                    delete_run(self.db, run_id)
                if run_id in self.marked:
                    self.marked.remove(run_id)
                self.reload()
                self.show_plot()
                self.notify(f"Deleted run {run_id}.")

        self.app.push_screen(ConfirmModal(f"Delete run {run_id} and everything stored with it?"), done)
