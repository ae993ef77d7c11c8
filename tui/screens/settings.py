"""Settings: models, thresholds, top-k, device, theme — saved to the user's TOML file."""

from __future__ import annotations

from dataclasses import replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from core.decompose import DECOMPOSERS
from core.retrieve.searcher import DEFAULT_MODE
from core.settings import CHOICES, Settings

MODES = (DEFAULT_MODE, *(m for m in CHOICES["mode"] if m != DEFAULT_MODE))  # hyde / query2doc: LLM query expansion
HYDE_PROMPTS = CHOICES["hyde_prompt"]
DEVICES = ("cpu", "cuda", "mps")


class SettingsScreen(ModalScreen[Settings | None]):
    """Edits a copy of the settings; returns the new settings (the app saves them)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="settings-cancel"),
                Binding("ctrl+s", "save", "Save", id="settings-save")]

    def __init__(self, settings: Settings, themes: list[str]) -> None:
        super().__init__()
        self.settings, self.themes = settings, themes

    def compose(self) -> ComposeResult:
        s = self.settings
        with VerticalScroll(classes="dialog wide tall"):
            yield Label("Settings (saved to your claimscope.toml)", classes="dialog-title")
            with Grid(id="settings-grid"):
                yield Label("Verifier (embedded, llm, HF id, folder or .gguf)")
                yield Input(s.verifier, id="verifier")
                yield Label("LLM GGUF (embedded or a path)")
                yield Input(s.llm, id="llm")
                yield Label("Embedder (default, HF id or folder)")
                yield Input(s.embedder, id="embedder")
                yield Label("Decomposer")
                yield Select([(d, d) for d in DECOMPOSERS], value=s.decomposer if s.decomposer in DECOMPOSERS
                             else DECOMPOSERS[0], allow_blank=False, id="decomposer")
                yield Label("Retrieval mode")
                yield Select([(m, m) for m in MODES], value=s.mode, allow_blank=False, id="mode")
                yield Label("HyDE prompt (hyde mode; written by the LLM)")
                yield Select([(p, p) for p in HYDE_PROMPTS], value=s.hyde_prompt if s.hyde_prompt in HYDE_PROMPTS
                             else HYDE_PROMPTS[0], allow_blank=False, id="hyde_prompt")
                yield Label("Top-k passages per claim")
                yield Input(str(s.top_k), type="integer", id="top_k")
                yield Label("Support threshold P(entail) >")
                yield Input(str(s.support_threshold), type="number", id="support_threshold")
                yield Label("Refute threshold P(contradict) >")
                yield Input(str(s.refute_threshold), type="number", id="refute_threshold")
                yield Label("Conflict threshold (both ways) >")
                yield Input(str(s.conflict_threshold), type="number", id="conflict_threshold")
                yield Label("Grounding guard")
                yield Switch(s.grounding, id="grounding")
                yield Label("English only (claims in other languages noted, not verified)")
                yield Switch(s.english_only, id="english_only")
                yield Label("Device")
                yield Select([(d, d) for d in DEVICES], value=s.device if s.device in DEVICES else "cpu",
                             allow_blank=False, id="device")
                yield Label("Theme")
                yield Select([(t, t) for t in self.themes], value=s.theme if s.theme in self.themes else self.themes[0],
                             allow_blank=False, id="theme")
            yield Static("", id="settings-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    def collect(self) -> Settings:
        """The edited settings; ValueError with a message naming the field when one is invalid.
        Choices and ranges are core.settings.validate's, the same as the file's and the CLI's."""
        from core.errors import InputError
        from core.settings import validate

        text = {w.id: w.value.strip() for w in self.query(Input)}
        try:
            top_k = int(text["top_k"])
        except ValueError:
            raise ValueError("top-k must be a whole number") from None
        numbers = {}
        for key in ("support_threshold", "refute_threshold", "conflict_threshold"):
            try:
                numbers[key] = float(text[key])
            except ValueError:
                raise ValueError(f"{key.replace('_', ' ')} must be a number") from None
        selects = {w.id: str(w.value) for w in self.query(Select)}
        edited = replace(
            self.settings, verifier=text["verifier"], llm=text["llm"], embedder=text["embedder"], top_k=top_k,
            grounding=self.query_one("#grounding", Switch).value,
            english_only=self.query_one("#english_only", Switch).value, **numbers, **selects,
        )
        try:
            return validate(edited)
        except InputError as exc:
            raise ValueError(str(exc)) from None

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        try:
            self.dismiss(self.collect())
        except ValueError as exc:
            self.query_one("#settings-error", Static).update(str(exc))
