"""The evidence inspector full screen (enter on a claim)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Label

from store.inspect import ClaimView
from tui.widgets.inspector import EvidenceInspector


class InspectorScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Back", id="inspector-back")]

    def __init__(self, claim: ClaimView, colours: Mapping[str, str], attribution: Mapping | None = None,
                 characterizer: Any = None) -> None:
        super().__init__()
        self.claim, self.colours, self.attribution = claim, colours, attribution
        self.characterizer = characterizer

    def compose(self) -> ComposeResult:
        verdict = (self.claim.verdict or ("attributed" if self.attribution else self.claim.status)).replace("_", " ")
        support = f" · support {self.claim.support:+.2f}" if self.claim.support is not None else ""
        yield Label(f"Claim {self.claim.idx + 1} · {verdict}{support}", classes="screen-title")
        yield EvidenceInspector(id="full-inspector")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(EvidenceInspector).show(self.claim, self.colours, self.attribution, self.characterizer)
