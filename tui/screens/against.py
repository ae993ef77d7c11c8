"""The sources the answer is checked against (``check --against`` in the workbench): paste
one or more documents, or name .txt / .md / .jsonl files; the run then judges every claim
against these documents only (core/pipeline/given.py). Clearing returns to the knowledge sources."""

from __future__ import annotations

import re
import shlex

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea

from core.errors import ClaimscopeError
from store.records import DocumentRecord

SEPARATOR = re.compile(r"^\s*-{3,}\s*$", re.MULTILINE)  # a "---" line separates pasted documents


def parse_sources(pasted: str, files: str) -> list[DocumentRecord]:
    """Documents from the dialog: pasted text (``---`` lines between documents) and files."""
    from core.pipeline.given import load_given_files, pasted_document

    docs = []
    for i, part in enumerate(p for p in SEPARATOR.split(pasted) if p.strip()):
        first = part.strip().splitlines()[0]
        title = first.lstrip("#").strip()[:80] if first.startswith("#") else f"pasted source {i + 1}"
        doc = pasted_document(part, title)
        doc.ext_id = f"pasted-{i + 1}"
        docs.append(doc)
    names = shlex.split(files) if files.strip() else []
    if names:
        docs += load_given_files(names)
    return docs


class AgainstScreen(ModalScreen[list[DocumentRecord] | None]):
    """Returns the documents to check against, [] to clear them, None when cancelled."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="against-cancel")]

    def __init__(self, current: list[DocumentRecord] | None = None) -> None:
        super().__init__()
        self.current = current or []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="against-dialog"):
            yield Label("Check against these sources only (no knowledge source)", classes="dialog-title")
            yield Static("Paste the passages the answer was written from (a line '---' between documents), "
                         "and/or name files (.txt, .md, .html, .pdf, .docx, .jsonl).", markup=False, classes="dialog-body")
            yield TextArea("\n---\n".join(d.text for d in self.current if d.ext_id.startswith("pasted")),
                           id="against-text", soft_wrap=True, tab_behavior="focus")
            yield Input(placeholder="files: passages.md refs.jsonl", id="against-files",
                        value=" ".join(shlex.quote(d.ext_id) for d in self.current if not d.ext_id.startswith("pasted")))
            yield Static("", id="against-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Use", variant="primary", id="against-use")
                yield Button("Clear", id="against-clear", tooltip="Back to the knowledge sources")
                yield Button("Cancel", id="against-cancel-button")

    @on(Button.Pressed, "#against-use")
    @on(Input.Submitted, "#against-files")
    def _use(self) -> None:
        try:
            docs = parse_sources(self.query_one("#against-text", TextArea).text,
                                 self.query_one("#against-files", Input).value)
        except (ClaimscopeError, ValueError) as exc:
            self.query_one("#against-error", Static).update(str(exc))
            return
        if not docs:
            self.query_one("#against-error", Static).update("Paste a source or name a file (or Clear).")
            return
        self.dismiss(docs)

    @on(Button.Pressed, "#against-clear")
    def _clear(self) -> None:
        self.dismiss([])

    @on(Button.Pressed, "#against-cancel-button")
    def _cancel(self) -> None:
        self.dismiss(None)
