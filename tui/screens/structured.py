"""A stored structured-support run (``claimscope structured``): each lead sentence with the
body sentences that support it and their sources, the propagated scores (PeopleProfiles)."""

from __future__ import annotations

from rich.console import Group
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static


class StructuredScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="structured-back")]

    def __init__(self, report: dict) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        from tui.structured_view import structured_lines

        with VerticalScroll(id="structured"):
            yield Static(Group(*structured_lines(self.report)), id="structured-report")
        yield Footer()
