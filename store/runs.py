"""Typed writes and reads for runs: claims, evidence, judgements, verdicts, scores, manifests.

Each writer expects to be called inside :func:`store.db.write_tx` by its caller, so one
logical step (e.g. "claim verified") lands atomically.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils


def create_run(db: sqlite_utils.Database, input_text: str, config: dict) -> int:
    h = hashlib.sha256(input_text.encode("utf-8")).hexdigest()
    cur = db.execute(
        "INSERT INTO runs(input_text, input_hash, config, status) VALUES (?, ?, ?, 'running')",
        [input_text, h, json.dumps(config, sort_keys=True)],
    )
    return int(cur.lastrowid)


def set_run_status(db: sqlite_utils.Database, run_id: int, status: str) -> None:
    db.execute("UPDATE runs SET status = ? WHERE id = ?", [status, run_id])


def add_manifest(db: sqlite_utils.Database, run_id: int | None, entries: Sequence[dict], thresholds: dict | None = None) -> None:
    for m in entries:
        db.execute(
            """INSERT INTO model_manifest(run_id, role, model_id, path, sha256, revision, quantisation,
                 prompt_hashes, thresholds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                run_id, m["role"], m["model_id"], m.get("path"), m.get("sha256"), m.get("revision"),
                m.get("quantisation"), json.dumps(m.get("prompt_hashes")) if m.get("prompt_hashes") else None,
                json.dumps(thresholds) if thresholds else None,
            ],
        )


def add_claim(
    db: sqlite_utils.Database, run_id: int, idx: int, text: str, span: tuple[int, int] | None = None, checkable: bool = True
) -> int:
    cur = db.execute(
        "INSERT INTO claims(run_id, idx, text, span_start, span_end, checkable) VALUES (?, ?, ?, ?, ?, ?)",
        [run_id, idx, text, span[0] if span else None, span[1] if span else None, int(checkable)],
    )
    return int(cur.lastrowid)


def set_claim_status(db: sqlite_utils.Database, claim_id: int, status: str) -> None:
    db.execute("UPDATE claims SET status = ? WHERE id = ?", [status, claim_id])


@dataclass(frozen=True)
class EvidenceRow:
    passage_id: int
    rank: int
    fused_score: float | None
    bm25_score: float | None
    bm25_rank: int | None
    dense_score: float | None
    dense_rank: int | None


def add_evidence(db: sqlite_utils.Database, claim_id: int, rows: Sequence[EvidenceRow]) -> dict[int, int]:
    """Insert retrieved passages for a claim; returns passage id → evidence id."""
    out = {}
    for r in rows:
        cur = db.execute(
            """INSERT INTO evidence(claim_id, passage_id, rank, fused_score, bm25_score, bm25_rank,
                 dense_score, dense_rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [claim_id, r.passage_id, r.rank, r.fused_score, r.bm25_score, r.bm25_rank, r.dense_score, r.dense_rank],
        )
        out[r.passage_id] = int(cur.lastrowid)
    return out


def add_judgement(
    db: sqlite_utils.Database,
    claim_id: int,
    evidence_id: int,
    unit: str,
    sentences: Sequence[int],
    probs: Sequence[float],
    model: str,
    window: int = 0,
    n_windows: int = 1,
) -> int:
    cur = db.execute(
        """INSERT INTO judgements(claim_id, evidence_id, unit, sentences, p_entailment, p_neutral,
             p_contradiction, window, n_windows, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, evidence_id, unit, json.dumps(list(sentences)), float(probs[0]), float(probs[1]),
         float(probs[2]), window, n_windows, model],
    )
    return int(cur.lastrowid)


def add_verdict(
    db: sqlite_utils.Database,
    claim_id: int,
    label: str,
    support: float | None,
    model: str,
    deciding_evidence_id: int | None,
    deciding_judgement_id: int | None,
    probabilities: Sequence[float] | None,
    thresholds: dict,
) -> int:
    cur = db.execute(
        """INSERT INTO verdicts(claim_id, label, support, deciding_evidence_id, deciding_judgement_id,
             probabilities, model, thresholds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, label, support, deciding_evidence_id, deciding_judgement_id,
         json.dumps([float(p) for p in probabilities]) if probabilities is not None else None,
         model, json.dumps(thresholds, sort_keys=True)],
    )
    return int(cur.lastrowid)
