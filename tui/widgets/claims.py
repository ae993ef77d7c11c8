"""The claims of a run, one row each, filling in live as workers finish."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from store.inspect import ClaimView
from tui.widgets.verdicts import attribution_badge, support_text, verdict_badge

HUMAN = {"correct": Text("✔"), "wrong": Text("✘")}  # the person's judgement of the verdict


class ClaimsTable(DataTable):
    """Rows keyed by claim id: #, verdict (or stage), signed support, human label, claim."""

    DEFAULT_CSS = """
    ClaimsTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "select_cursor", "Inspect", id="inspect-claim"),
        Binding("e", "app.edit_claim", "Edit claim", id="edit-claim"),
        Binding("c", "app.label('correct')", "Verdict correct", id="label-correct"),
        Binding("x", "app.label('wrong')", "Verdict wrong", id="label-wrong"),
        Binding("a", "app.context_usage", "Context usage", id="context-usage"),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.attribution: Mapping[int, dict] = {}  # claim idx → its attribution detail (attributed answers)

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_column("#", key="idx", width=2)
        self.add_column("verdict", key="verdict", width=17)
        self.add_column("supp.", key="support", width=5)
        self.add_column("you", key="human", width=3)
        self.add_column("claim", key="claim")

    def on_resize(self) -> None:
        self.fit_claim_column()

    def fit_claim_column(self) -> None:
        """The claim column takes the width left by the others (long claims are cut; the
        inspector shows the whole claim), so the table never scrolls sideways."""
        column = self.columns.get("claim")  # type: ignore[call-overload]
        if column is None:
            return
        others = sum(c.get_render_width(self) for key, c in self.columns.items() if key != "claim")
        column.auto_width = False
        column.width = max(10, self.scrollable_content_region.width - others - 2 * self.cell_padding)
        self.refresh()

    def _cells(self, c: ClaimView, stage: str | None, colours: Mapping[str, str]) -> list:
        human = HUMAN.get(c.human_judgement or "", Text(c.human_label or ""))
        attributed = self.attribution.get(c.idx)
        if attributed is not None:
            p = attributed.get("p_entailment")
            cites = "".join(f"[{n}]" for n in c.citations)
            return [str(c.idx + 1), attribution_badge(attributed["label"], colours),
                    support_text(p), human, f"{c.text} {cites}".strip()]
        label = c.verdict if c.status == "done" else None
        text: str | Text = c.text if c.checkable or not c.note else f"{c.text}  ({c.note})"
        if c.expansion_matched:  # the query expansion already stated the evidence (Yoon et al., "Hypothetical Documents or Knowledge Leakage?" §3.3)
            text = Text.assemble(("⚑ ", f"bold {colours.get('warning', 'yellow')}"), str(text))
        return [str(c.idx + 1), verdict_badge(label, stage or c.status, c.checkable, colours),
                support_text(c.support if label else None), human, text]

    def show_claims(self, claims: list[ClaimView], colours: Mapping[str, str]) -> None:
        self.clear()
        for c in claims:
            self.add_row(*self._cells(c, None, colours), key=str(c.id))

    def update_claim(self, c: ClaimView, stage: str | None, colours: Mapping[str, str]) -> None:
        """Add the claim's row, or rewrite its cells in place (the cursor stays put)."""
        cells = self._cells(c, stage, colours)
        key = str(c.id)
        if key not in self.rows:
            self.add_row(*cells, key=key)
            return
        for column, value in zip(("idx", "verdict", "support", "human", "claim"), cells, strict=True):
            self.update_cell(key, column, value, update_width=column == "claim")

    @property
    def selected_claim_id(self) -> int | None:
        if not self.row_count:
            return None
        key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return int(key.value) if key.value is not None else None
