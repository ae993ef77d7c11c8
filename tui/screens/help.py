"""The help screen: tui/help.md plus the live key bindings (after the user's keymap)."""

from __future__ import annotations

from importlib.resources import files

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="close-help")]

    def __init__(self, bindings: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.bindings = bindings  # (keys, description, id)

    def compose(self) -> ComposeResult:
        body = files("tui").joinpath("help.md").read_text(encoding="utf-8")
        table = ["", "## Keys", "", "| keys | action | binding id |", "|---|---|---|"]
        table += [f"| `{keys}` | {desc} | `{bid}` |" for keys, desc, bid in self.bindings]
        with VerticalScroll(classes="dialog wide tall"):
            yield Markdown(body + "\n".join(table))
