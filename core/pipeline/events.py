"""A run's events, typed: one :class:`EventKind` per step and one payload shape per kind.

Every event is stored (``events`` table, kind as text) before it is announced, so the kinds'
values are the strings stored since schema v1 and never change. Listeners (the CLI's progress
bar, the TUI's workers) branch on :class:`EventKind` members and read payload keys the
TypedDicts below declare, instead of bare strings and unchecked dict keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NotRequired, TypedDict


class EventKind(StrEnum):
    RUN_STARTED = "run_started"
    CLAIM_FOUND = "claim_found"
    PROGRESS = "progress"  # a claim's stage: expanding, retrieving, verifying
    EVIDENCE_FOUND = "evidence_found"
    VERDICT_READY = "verdict_ready"
    WARNING = "warning"
    ERROR = "error"
    CLAIM_EDITED = "claim_edited"
    SCORE_UPDATED = "score_updated"
    RUN_FINISHED = "run_finished"
    RUN_CANCELLED = "run_cancelled"


class RunStarted(TypedDict):
    claims: int
    config: NotRequired[dict[str, Any]]  # stored; not announced


class ClaimFound(TypedDict):
    idx: int
    text: str
    span: list[int]


class Progress(TypedDict):
    idx: int
    stage: str  # expanding | retrieving | verifying
    passages: NotRequired[int]


class EvidenceFound(TypedDict):
    idx: int
    passages: int
    expansion_matched: NotRequired[bool]
    cached: NotRequired[bool]  # copied from the stage cache


class VerdictReady(TypedDict):
    idx: int
    label: str
    support: float
    cached: NotRequired[bool]


class Notice(TypedDict):
    """The payload of a warning or an error."""

    idx: int
    message: str


class ClaimEdited(TypedDict):
    idx: int
    old_text: str
    text: str
    old_label: str | None
    old_support: float | None


class RunFinished(TypedDict):
    factual_precision: float | None


class RunCancelled(TypedDict):
    at_claim: int


# score_updated carries core.score.run_scores' detail: kind → value and a flat detail.
ScoreUpdated = dict[str, Any]

Payload = (RunStarted | ClaimFound | Progress | EvidenceFound | VerdictReady | Notice | ClaimEdited | ScoreUpdated
           | RunFinished | RunCancelled)

PAYLOADS: dict[EventKind, Any] = {
    EventKind.RUN_STARTED: RunStarted, EventKind.CLAIM_FOUND: ClaimFound, EventKind.PROGRESS: Progress,
    EventKind.EVIDENCE_FOUND: EvidenceFound, EventKind.VERDICT_READY: VerdictReady, EventKind.WARNING: Notice,
    EventKind.ERROR: Notice, EventKind.CLAIM_EDITED: ClaimEdited, EventKind.SCORE_UPDATED: ScoreUpdated,
    EventKind.RUN_FINISHED: RunFinished, EventKind.RUN_CANCELLED: RunCancelled,
}


@dataclass(frozen=True)
class Event:
    """One step of a run, stored in ``events`` before it is announced. A payload with
    ``"cached": true`` came from the stage cache. ``kind`` is always an :class:`EventKind`
    (a stored string is converted; an unknown one fails here, not in a listener)."""

    run_id: int
    kind: EventKind
    payload: Payload
    claim_id: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", EventKind(self.kind))
