"""Human annotations of claims, kept beside the model's verdicts (never replacing them).

A person labels a verdict ``correct`` or ``wrong`` in the TUI, or a dataset's gold label is
imported; agreement between model and people is computed from these rows. Callers hold the
write transaction, as for :mod:`store.runs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

HUMAN_LABELS = ("supported", "refuted", "not_enough_info", "conflicting")


@dataclass(frozen=True)
class Annotation:
    id: int
    claim_id: int
    verdict_id: int | None
    label: str | None  # the human verdict, when known
    judgement: str | None  # "correct" | "wrong": of the model's verdict ``verdict_id``
    origin: str  # "user" (TUI/CLI) or the dataset it was imported from
    annotator: str | None
    note: str | None
    created_at: str


def add_annotation(
    db: sqlite_utils.Database,
    claim_id: int,
    *,
    label: str | None = None,
    judgement: str | None = None,
    origin: str = "user",
    annotator: str | None = None,
    note: str | None = None,
) -> int:
    """Store one annotation of the claim's latest verdict. ``judgement="correct"`` without a
    label records the model's label as the human one, so agreement can use it directly."""
    if label is None and judgement is None:
        raise ValueError("an annotation needs a label or a judgement")
    if label is not None and label not in HUMAN_LABELS:
        raise ValueError(f"unknown label {label!r} (one of {', '.join(HUMAN_LABELS)})")
    if judgement is not None and judgement not in ("correct", "wrong"):
        raise ValueError(f"unknown judgement {judgement!r} (correct or wrong)")
    row = db.execute(
        "SELECT id, label FROM verdicts WHERE claim_id = ? ORDER BY id DESC LIMIT 1", [claim_id]
    ).fetchone()
    verdict_id, model_label = (row[0], row[1]) if row else (None, None)
    if label is None and judgement == "correct":
        label = model_label
    cur = db.execute(
        """INSERT INTO annotations (claim_id, verdict_id, label, judgement, origin, annotator, note)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, verdict_id, label, judgement, origin, annotator, note],
    )
    return int(cur.lastrowid)


def claim_annotations(db: sqlite_utils.Database, claim_id: int) -> list[Annotation]:
    rows = db.execute(
        """SELECT id, claim_id, verdict_id, label, judgement, origin, annotator, note, created_at
           FROM annotations WHERE claim_id = ? ORDER BY id""",
        [claim_id],
    ).fetchall()
    return [Annotation(*r) for r in rows]


def run_annotations(db: sqlite_utils.Database, run_id: int) -> dict[int, Annotation]:
    """The latest annotation of each annotated claim of a run, by claim id."""
    rows = db.execute(
        """SELECT a.id, a.claim_id, a.verdict_id, a.label, a.judgement, a.origin, a.annotator, a.note, a.created_at
           FROM annotations a JOIN claims c ON c.id = a.claim_id
           WHERE c.run_id = ? AND a.id = (SELECT max(id) FROM annotations WHERE claim_id = a.claim_id)""",
        [run_id],
    ).fetchall()
    return {r[1]: Annotation(*r) for r in rows}
