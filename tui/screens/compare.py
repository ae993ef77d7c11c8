"""Two runs side by side: scores of each, and every claim (matched by its text) with the
verdict and support each run gave it, differences marked."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from store import runs as rq
from store.inspect import run_claim_views
from tui.widgets.verdicts import support_text, verdict_badge


def _score_line(db, run_id: int) -> str:
    run = rq.get_run(db, run_id)
    scores = rq.run_scores(db, run_id)
    fp = scores.get("factual_precision", {}).get("value")
    cfg = run.config if run else {}
    parts = [f"run {run_id}", run.status if run else "?", f"precision {fp:.2f}" if fp is not None else "no score",
             f"decomposer {cfg.get('decomposer', '?')}", f"k {cfg.get('k', '?')}", f"mode {cfg.get('mode', '?')}"]
    return " · ".join(parts)


class CompareScreen(Screen[None]):
    BINDINGS = [Binding("escape", "dismiss", "Back", id="compare-back")]

    def __init__(self, db, a: int, b: int) -> None:
        super().__init__()
        self.db, self.a, self.b = db, a, b

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Compare runs {self.a} and {self.b}", classes="screen-title")
            yield Static(f"A: {_score_line(self.db, self.a)}\nB: {_score_line(self.db, self.b)}", id="compare-scores",
                         markup=False)
            yield Static("", id="compare-summary", markup=False)
            yield DataTable(id="compare", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        colours = self.app.get_css_variables()
        table = self.query_one("#compare", DataTable)
        for key, label in (("diff", "Δ"), ("claim", "claim"), ("a", f"run {self.a}"), ("sa", "A"),
                           ("b", f"run {self.b}"), ("sb", "B")):
            table.add_column(label, key=key)
        claims_a = {c.text: c for c in run_claim_views(self.db, self.a)}
        claims_b = {c.text: c for c in run_claim_views(self.db, self.b)}
        order = list(claims_a) + [t for t in claims_b if t not in claims_a]
        changed = 0
        for text in order:
            ca, cb = claims_a.get(text), claims_b.get(text)
            differs = ca is None or cb is None or ca.verdict != cb.verdict
            changed += differs
            cells = []
            for c in (ca, cb):
                if c is None:
                    cells += [Text("(absent)", style="dim"), Text("")]
                else:
                    cells += [verdict_badge(c.verdict if c.status == "done" else None, c.status, c.checkable, colours),
                              support_text(c.support)]
            table.add_row(Text("≠", style="bold") if differs else "", text, *cells)
        both = len(set(claims_a) & set(claims_b))
        self.query_one("#compare-summary", Static).update(
            f"{len(order)} claims: {both} in both runs, {changed} with a different verdict or only in one run"
        )
