"""Small modal dialogs: an error, a yes/no question, editing a claim, opening a file."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DirectoryTree, Input, Label, Static


class ErrorModal(ModalScreen[None]):
    """The one place failures are shown (the app's single error handler pushes it)."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="close-error")]

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.title_text, self.message = title, message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error-dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.message, markup=False, classes="dialog-body")
            yield Button("Close", variant="error", id="close")

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss()


class ConfirmModal(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel", id="confirm-cancel"),
                Binding("y", "dismiss(True)", "Yes", id="confirm-yes")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, markup=False, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes", variant="warning", id="yes")
                yield Button("No", id="no")

    @on(Button.Pressed)
    def _answer(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class EditClaimModal(ModalScreen[str | None]):
    """Edit a claim's text; the new text is re-verified alone."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="edit-cancel")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Edit the claim, then Enter to re-verify it", classes="dialog-title")
            yield Input(self.text, id="claim-text")
            yield Static("", id="edit-error", classes="dialog-error")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#edit-error", Static).update("The claim is empty.")
            return
        self.dismiss(event.value.strip())


class OpenFileModal(ModalScreen[Path | None]):
    """Pick a text file: type a path, or browse and select one."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="open-cancel")]

    def __init__(self, start: Path | None = None) -> None:
        super().__init__()
        self.start = start or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Open a text file (Enter to open)", classes="dialog-title")
            yield Input(placeholder="path/to/answer.txt", id="path")
            yield DirectoryTree(self.start, id="tree")
            yield Static("", id="open-error", classes="dialog-error")

    @on(DirectoryTree.FileSelected)
    def _picked(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(Path(event.path))

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        if not event.value.strip() or not path.is_file():
            self.query_one("#open-error", Static).update(f"Not a file: {event.value.strip() or '(empty)'}")
            return
        self.dismiss(path)
