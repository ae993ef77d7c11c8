"""A cache of stage outputs across runs, keyed on (stage, manifest key, input hash).

The manifest key is a hash of everything that determines a stage's output — model ids and
file hashes, thresholds, top-k, sources and their index state — so a hit is exactly the
output the stage would compute again. Outputs are JSON (never pickle). Callers hold the
write transaction for :func:`put`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlite_utils

from store.expansions import copy_expansions


def key_of(obj: Any) -> str:
    """A stable sha256 of a JSON-serialisable description (sorted keys)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def get(db: sqlite_utils.Database, stage: str, manifest_key: str, input_text: str) -> Any | None:
    row = db.execute(
        "SELECT output FROM stage_cache WHERE stage = ? AND manifest_key = ? AND input_sha256 = ?",
        [stage, manifest_key, hashlib.sha256(input_text.encode()).hexdigest()],
    ).fetchone()
    return json.loads(row[0]) if row else None


def put(db: sqlite_utils.Database, stage: str, manifest_key: str, input_text: str, output: Any) -> None:
    db.execute(
        "INSERT OR REPLACE INTO stage_cache (stage, manifest_key, input_sha256, output) VALUES (?, ?, ?, ?)",
        [stage, manifest_key, hashlib.sha256(input_text.encode()).hexdigest(), json.dumps(output)],
    )


def clear(db: sqlite_utils.Database, stage: str | None = None) -> int:
    cur = db.execute("DELETE FROM stage_cache" + (" WHERE stage = ?" if stage else ""), [stage] if stage else [])
    return cur.rowcount


def copy_claim_result(db: sqlite_utils.Database, from_claim: int, to_claim: int) -> bool:
    """Copy a verified claim's evidence, judgements, verdict and query expansion onto another claim (a cache
    hit: same claim text, same models and settings). Returns False when the source claim has
    no verdict any more (deleted run), so the caller computes afresh. Caller holds the tx."""
    verdict = db.execute(
        """SELECT label, support, deciding_evidence_id, probabilities, model, deciding_judgement_id, thresholds
           FROM verdicts WHERE claim_id = ? ORDER BY id DESC LIMIT 1""",
        [from_claim],
    ).fetchone()
    if verdict is None:
        return False
    evidence_map: dict[int, int] = {}
    for row in db.execute(
        """SELECT id, passage_id, rank, fused_score, bm25_score, bm25_rank, dense_score, dense_rank
           FROM evidence WHERE claim_id = ?""",
        [from_claim],
    ).fetchall():
        cur = db.execute(
            """INSERT INTO evidence (claim_id, passage_id, rank, fused_score, bm25_score, bm25_rank, dense_score,
               dense_rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [to_claim, *row[1:]],
        )
        evidence_map[row[0]] = int(cur.lastrowid)
    judgement_map: dict[int, int] = {}
    for row in db.execute(
        """SELECT id, evidence_id, unit, sentences, text, p_entailment, p_neutral, p_contradiction, window,
                  n_windows, grounded, model FROM judgements WHERE claim_id = ? ORDER BY id""",
        [from_claim],
    ).fetchall():
        cur = db.execute(
            """INSERT INTO judgements (claim_id, evidence_id, unit, sentences, text, p_entailment, p_neutral,
               p_contradiction, window, n_windows, grounded, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [to_claim, evidence_map[row[1]], *row[2:]],
        )
        judgement_map[row[0]] = int(cur.lastrowid)
    copy_expansions(db, from_claim, to_claim, evidence_map)
    label, support, dec_ev, probs, model, dec_j, thresholds = verdict
    db.execute(
        """INSERT INTO verdicts (claim_id, label, support, deciding_evidence_id, probabilities, model,
           deciding_judgement_id, thresholds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        [to_claim, label, support, evidence_map.get(dec_ev), probs, model, judgement_map.get(dec_j), thresholds],
    )
    return True
