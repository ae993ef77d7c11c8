"""Stored context-usage (ACU) scores per evidence row and model (table of migration 7)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

import sqlite_utils


class ContextUsage(Protocol):
    """What the store keeps of an ACU score (core.diagnostics.acu.ContextUsage has it); a
    Protocol, so the store never imports core, not even for types."""

    stance: str
    p_claim: dict
    p_evidence: dict
    delta: dict
    acu_sum: float
    repulsion: bool
    memory_conflict: bool


@dataclass(frozen=True)
class ContextUsageRow:
    evidence_id: int
    model: str
    shots: int
    stance: str
    stance_source: str  # verifier | human
    p_claim: dict
    p_evidence: dict
    delta: dict
    acu_sum: float
    repulsion: bool
    memory_conflict: bool | None


def put(
    db: sqlite_utils.Database, claim_id: int, evidence_id: int, usage: ContextUsage, *, model: dict, shots: int,
    stance_source: str,
) -> None:
    """Store (or replace) one evidence row's score under this model, shots and stance.
    Caller holds the transaction."""
    db.execute(
        """INSERT OR REPLACE INTO context_usage (claim_id, evidence_id, model, model_sha256, shots, stance,
           stance_source, p_claim, p_evidence, delta, acu_sum, repulsion, memory_conflict)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, evidence_id, model.get("model_id", ""), model.get("sha256"), shots, usage.stance, stance_source,
         json.dumps(usage.p_claim), json.dumps(usage.p_evidence), json.dumps(usage.delta), usage.acu_sum,
         int(usage.repulsion), int(usage.memory_conflict)],
    )


def for_claim(db: sqlite_utils.Database, claim_id: int) -> dict[int, ContextUsageRow]:
    """The latest score per evidence row of a claim (any model), keyed by evidence id."""
    out: dict[int, ContextUsageRow] = {}
    for r in db.execute(
        """SELECT evidence_id, model, shots, stance, stance_source, p_claim, p_evidence, delta, acu_sum, repulsion,
                  memory_conflict FROM context_usage WHERE claim_id = ? ORDER BY id""",
        [claim_id],
    ).fetchall():
        out[r[0]] = ContextUsageRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]),
                                    json.loads(r[7]), r[8], bool(r[9]), None if r[10] is None else bool(r[10]))
    return out
