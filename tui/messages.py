"""Messages the workers post to the app (one per stored pipeline event) and small status
messages. Workers never touch widgets: they post, the app updates on its own thread."""

from __future__ import annotations

from textual.message import Message
from textual.worker import Worker, WorkerState

from core.pipeline.events import Event


class RunEvent(Message):
    """One stored pipeline event (claim found, progress, verdict ready, score updated, …)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class ScreenWorkerChanged(Message):
    """A screen's worker changed state. ``Worker.StateChanged`` does not bubble, so a screen
    running workers forwards it with this message to the app's one error handler."""

    def __init__(self, worker: Worker, state: WorkerState) -> None:
        super().__init__()
        self.worker, self.state = worker, state


class Status(Message):
    """A line for the status bar: "loading models …", "cancelled", …"""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ModelsReady(Message):
    """The background warm-up has loaded every model a run needs."""


class IndexProgress(Message):
    """Indexing a built-in source on first use; a burst collapses into the newest."""

    def __init__(self, label: str, done: int, total: int | None) -> None:
        super().__init__()
        self.label, self.done, self.total = label, done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


class ContextUsageScored(Message):
    """One evidence passage's ACU (Hagström et al., "A Reality Check on Context Utilisation" §5) is stored."""

    def __init__(self, claim_id: int, evidence_id: int, acu_sum: float, done: int, total: int) -> None:
        super().__init__()
        self.claim_id, self.evidence_id, self.acu_sum = claim_id, evidence_id, acu_sum
        self.done, self.total = done, total


class OtherLanguages(Message):
    """A run made in every language has claims that read as another language (core/language.py):
    the app notifies, since every model reads English and their verdicts mean little."""

    def __init__(self, run_id: int, text: str) -> None:
        super().__init__()
        self.run_id, self.text = run_id, text
