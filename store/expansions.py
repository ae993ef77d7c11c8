"""Stored query expansions and their leakage-audit pairs (tables of migration 7).

Generated text lives here and only here: nothing in this module touches ``evidence``, and the
read model says plainly that it is generated (seed 000; seeds.md §1.1 item 4).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import sqlite_utils


class Expansion(Protocol):
    """What the store keeps of a query expansion (core.retrieve.expand.Expansion has it);
    a Protocol, so the store never imports core, not even for types."""

    method: str
    preset: str
    documents: tuple[str, ...]
    model: dict
    params: Any  # a dataclass of sampling parameters
    seconds: float


class LeakageResult(Protocol):
    """What the store keeps of a leakage audit (core.retrieve.leakage.LeakageResult)."""

    matched: bool
    pairs: Any  # judged pairs: .premise (.ref, .text), .sentence (.doc_index, .sentence_index, .text), .label, .p_entailment


@dataclass(frozen=True)
class MatchRow:
    evidence_id: int | None
    premise: str
    doc_index: int
    sentence_index: int
    sentence: str
    label: str
    p_entailment: float


@dataclass(frozen=True)
class ExpansionView:
    id: int
    claim_id: int
    method: str
    preset: str
    documents: tuple[str, ...]
    model: str
    params: dict
    seconds: float | None
    matched: bool | None
    matches: tuple[MatchRow, ...]  # entailed pairs only (what the UI shows)


def add_expansion(
    db: sqlite_utils.Database, claim_id: int, expansion: Expansion, audit: LeakageResult | None,
    evidence_ids: dict[int, int] | None = None,
) -> int:
    """Store a claim's expansion and every judged audit pair. A premise's ``ref`` is the
    passage id of retrieved evidence, mapped to its evidence row by ``evidence_ids``.
    Caller holds the transaction."""
    cur = db.execute(
        """INSERT INTO expansions (claim_id, method, preset, documents, model, model_sha256, params, seconds,
           matched) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, expansion.method, expansion.preset, json.dumps(list(expansion.documents)),
         expansion.model.get("model_id", ""), expansion.model.get("sha256"), json.dumps(asdict(expansion.params)),
         expansion.seconds, None if audit is None else int(audit.matched)],
    )
    exp_id = int(cur.lastrowid)
    for pair in audit.pairs if audit is not None else ():
        ev = (evidence_ids or {}).get(pair.premise.ref) if isinstance(pair.premise.ref, int) else None
        db.execute(
            """INSERT INTO expansion_matches (expansion_id, evidence_id, premise, doc_index, sentence_index, sentence,
               label, p_entailment) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [exp_id, ev, pair.premise.text, pair.sentence.doc_index, pair.sentence.sentence_index,
             pair.sentence.text, pair.label, pair.p_entailment],
        )
    return exp_id


def copy_expansions(db: sqlite_utils.Database, from_claim: int, to_claim: int, evidence_map: dict[int, int]) -> None:
    """A stage-cache hit copies the expansion with the evidence (caller holds the tx)."""
    for row in db.execute(
        """SELECT id, method, preset, documents, model, model_sha256, params, seconds, matched
           FROM expansions WHERE claim_id = ? ORDER BY id""",
        [from_claim],
    ).fetchall():
        cur = db.execute(
            """INSERT INTO expansions (claim_id, method, preset, documents, model, model_sha256, params, seconds,
               matched) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [to_claim, *row[1:]],
        )
        new_id = int(cur.lastrowid)
        for m in db.execute(
            """SELECT evidence_id, premise, doc_index, sentence_index, sentence, label, p_entailment
               FROM expansion_matches WHERE expansion_id = ? ORDER BY id""",
            [row[0]],
        ).fetchall():
            db.execute(
                """INSERT INTO expansion_matches (expansion_id, evidence_id, premise, doc_index, sentence_index,
                   sentence, label, p_entailment) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                [new_id, evidence_map.get(m[0]) if m[0] is not None else None, *m[1:]],
            )


def claim_expansion(db: sqlite_utils.Database, claim_id: int) -> ExpansionView | None:
    """The latest expansion of a claim with its entailed audit pairs, or None."""
    row = db.execute(
        """SELECT id, method, preset, documents, model, params, seconds, matched FROM expansions
           WHERE claim_id = ? ORDER BY id DESC LIMIT 1""",
        [claim_id],
    ).fetchone()
    if row is None:
        return None
    matches = tuple(
        MatchRow(*m)
        for m in db.execute(
            """SELECT evidence_id, premise, doc_index, sentence_index, sentence, label, p_entailment
               FROM expansion_matches WHERE expansion_id = ? AND label = 'entailment'
               ORDER BY p_entailment DESC""",
            [row[0]],
        ).fetchall()
    )
    return ExpansionView(
        row[0], claim_id, row[1], row[2], tuple(json.loads(row[3])), row[4], json.loads(row[5]), row[6],
        None if row[7] is None else bool(row[7]), matches,
    )


def matched_claims(db: sqlite_utils.Database, run_id: int) -> set[int]:
    """Ids of the run's claims whose expansion restates their retrieved evidence."""
    return {
        r[0]
        for r in db.execute(
            "SELECT e.claim_id FROM expansions e JOIN claims c ON c.id = e.claim_id WHERE c.run_id = ? AND e.matched = 1",
            [run_id],
        ).fetchall()
    }
