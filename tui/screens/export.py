"""Export the open run to JSONL, CSV, a Markdown report or an HTML report (ctrl+s)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from core.errors import ClaimscopeError
from core.pipeline.export import FORMATS, export_run

FORMAT_NAMES = {
    "jsonl": "JSONL (every claim, all evidence)", "csv": "CSV (a row per claim)", "md": "Markdown report",
    "html": "HTML report (opens in any browser)",
}


class ExportModal(ModalScreen[Path | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="export-cancel")]

    def __init__(self, db, run_id: int, folder: Path | None = None) -> None:
        super().__init__()
        self.db, self.run_id = db, run_id
        self.folder = folder or Path.cwd()

    def _default(self, fmt: str) -> str:
        return str(self.folder / f"claimscope-run-{self.run_id}{FORMATS[fmt]}")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Export run {self.run_id}", classes="dialog-title")
            yield Select([(v, k) for k, v in FORMAT_NAMES.items()], value="md", allow_blank=False, id="format")
            yield Input(self._default("md"), id="export-path")
            yield Static("", id="export-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export", variant="primary", id="do-export")
                yield Button("Cancel", id="cancel")

    @on(Select.Changed, "#format")
    def _format(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        stem = Path(path.value)
        path.value = str(stem.with_suffix(FORMATS[str(event.value)])) if path.value else self._default(str(event.value))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#do-export")
    @on(Input.Submitted, "#export-path")
    def export(self) -> None:
        fmt = str(self.query_one("#format", Select).value)
        try:
            written = export_run(self.db, self.run_id, fmt, Path(self.query_one("#export-path", Input).value.strip()))
        except (ClaimscopeError, OSError) as exc:
            self.query_one("#export-error", Static).update(str(exc))
            return
        self.dismiss(written)
