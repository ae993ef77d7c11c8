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

from store.expansions import copy_expansions


def create_run(db: sqlite_utils.Database, input_text: str, config: dict, claim_date: str | None = None) -> int:
    h = hashlib.sha256(input_text.encode("utf-8")).hexdigest()
    cur = db.execute(
        "INSERT INTO runs(input_text, input_hash, config, status, claim_date) VALUES (?, ?, ?, 'running', ?)",
        [input_text, h, json.dumps(config, sort_keys=True), claim_date],
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
    db: sqlite_utils.Database,
    run_id: int,
    idx: int,
    text: str,
    span: tuple[int, int] | None = None,
    checkable: bool = True,
    note: str | None = None,
    context: str | None = None,
    citations: Sequence[int] = (),
) -> int:
    cur = db.execute(
        """INSERT INTO claims(run_id, idx, text, span_start, span_end, checkable, note, context, citations)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [run_id, idx, text, span[0] if span else None, span[1] if span else None, int(checkable), note, context,
         json.dumps(list(citations)) if citations else None],
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
    stages: dict[str, tuple[float, int]] | None = None  # every retrieval stage: (score, rank)


def add_evidence(db: sqlite_utils.Database, claim_id: int, rows: Sequence[EvidenceRow]) -> dict[int, int]:
    """Insert retrieved passages for a claim; returns passage id → evidence id."""
    out = {}
    for r in rows:
        cur = db.execute(
            """INSERT INTO evidence(claim_id, passage_id, rank, fused_score, bm25_score, bm25_rank,
                 dense_score, dense_rank, stages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [claim_id, r.passage_id, r.rank, r.fused_score, r.bm25_score, r.bm25_rank, r.dense_score, r.dense_rank,
             json.dumps(r.stages) if r.stages else None],
        )
        out[r.passage_id] = int(cur.lastrowid)
    return out


def add_judgement(
    db: sqlite_utils.Database,
    claim_id: int,
    evidence_id: int,
    unit: str,
    sentences: Sequence[int],
    text: str,
    probs: Sequence[float],
    model: str,
    window: int = 0,
    n_windows: int = 1,
    grounded: bool = True,
) -> int:
    """One NLI result. ``text`` is exactly what was judged (a set may join sentences of
    several passages; ``evidence_id`` is the first one's). ``grounded``: the evidence names
    the claim's subject, so it may decide the verdict."""
    cur = db.execute(
        """INSERT INTO judgements(claim_id, evidence_id, unit, sentences, text, p_entailment, p_neutral,
             p_contradiction, window, n_windows, grounded, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [claim_id, evidence_id, unit, json.dumps(list(sentences)), text, float(probs[0]), float(probs[1]),
         float(probs[2]), window, n_windows, int(grounded), model],
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


def add_event(db: sqlite_utils.Database, run_id: int, kind: str, payload: dict, claim_id: int | None = None) -> int:
    cur = db.execute(
        "INSERT INTO events(run_id, kind, claim_id, payload) VALUES (?, ?, ?, ?)",
        [run_id, kind, claim_id, json.dumps(payload, sort_keys=True)],
    )
    return int(cur.lastrowid)


def set_external_id(db: sqlite_utils.Database, run_id: int, external_id: str | None) -> None:
    db.execute("UPDATE runs SET external_id = ? WHERE id = ?", [external_id, run_id])


def set_score(db: sqlite_utils.Database, run_id: int, kind: str, value: float | None, detail: dict) -> None:
    db.execute(
        """INSERT INTO scores(run_id, kind, value, detail) VALUES (?, ?, ?, ?)
           ON CONFLICT(run_id, kind) DO UPDATE SET value = excluded.value, detail = excluded.detail""",
        [run_id, kind, value, json.dumps(detail, sort_keys=True)],
    )


@dataclass(frozen=True)
class RunRow:
    id: int
    created_at: str
    status: str
    input_text: str
    config: dict
    external_id: str | None


def get_run(db: sqlite_utils.Database, run_id: int) -> RunRow | None:
    row = db.execute(
        "SELECT id, created_at, status, input_text, config, external_id FROM runs WHERE id = ?", [run_id]
    ).fetchone()
    return RunRow(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5]) if row else None


@dataclass(frozen=True)
class ClaimRow:
    id: int
    idx: int
    text: str
    span: tuple[int, int] | None
    checkable: bool
    status: str
    verdict: str | None
    support: float | None


def run_claims(db: sqlite_utils.Database, run_id: int) -> list[ClaimRow]:
    rows = db.execute(
        """SELECT c.id, c.idx, c.text, c.span_start, c.span_end, c.checkable, c.status, v.label, v.support
           FROM claims c LEFT JOIN verdicts v ON v.claim_id = c.id AND v.id = (
               SELECT max(id) FROM verdicts WHERE claim_id = c.id)
           WHERE c.run_id = ? ORDER BY c.idx""",
        [run_id],
    ).fetchall()
    return [
        ClaimRow(r[0], r[1], r[2], (r[3], r[4]) if r[3] is not None else None, bool(r[5]), r[6], r[7], r[8])
        for r in rows
    ]


def run_results(db: sqlite_utils.Database, run_id: int) -> list[dict]:
    """Per claim: text, span, verdict, support and its deciding evidence (title, doc id, text, probabilities)."""
    rows = db.execute(
        """SELECT c.idx, c.text, c.span_start, c.span_end, c.checkable, c.status, v.label, v.support,
                  j.unit, j.text, j.p_entailment, j.p_neutral, j.p_contradiction,
                  d.title, d.ext_id, d.url, s.name, c.note, c.citations
           FROM claims c
           LEFT JOIN verdicts v ON v.claim_id = c.id AND v.id = (SELECT max(id) FROM verdicts WHERE claim_id = c.id)
           LEFT JOIN judgements j ON j.id = v.deciding_judgement_id
           LEFT JOIN evidence e ON e.id = j.evidence_id
           LEFT JOIN passages p ON p.id = e.passage_id
           LEFT JOIN documents d ON d.id = p.document_id
           LEFT JOIN sources s ON s.id = p.source_id
           WHERE c.run_id = ? ORDER BY c.idx""",
        [run_id],
    ).fetchall()
    out = []
    for r in rows:
        item = {
            "idx": r[0], "text": r[1], "span": [r[2], r[3]] if r[2] is not None else None, "note": r[17],
            "citations": json.loads(r[18]) if r[18] else [],
            "checkable": bool(r[4]), "status": r[5], "verdict": r[6], "support": r[7], "evidence": None,
        }
        if r[8] is not None:
            item["evidence"] = {
                "unit": r[8], "text": r[9], "probs": {"entailment": r[10], "neutral": r[11], "contradiction": r[12]},
                "title": r[13], "doc_id": r[14], "url": r[15], "source": r[16],
            }
        out.append(item)
    return out


def run_scores(db: sqlite_utils.Database, run_id: int) -> dict:
    rows = db.execute("SELECT kind, value, detail FROM scores WHERE run_id = ?", [run_id]).fetchall()
    return {k: {"value": v, "detail": json.loads(d) if d else None} for k, v, d in rows}


def list_runs(db: sqlite_utils.Database, limit: int = 50) -> list[dict]:
    rows = db.execute(
        """SELECT r.id, r.created_at, r.status, r.external_id, substr(r.input_text, 1, 200),
                  (SELECT count(*) FROM claims c WHERE c.run_id = r.id),
                  (SELECT value FROM scores s WHERE s.run_id = r.id AND s.kind = 'factual_precision')
           FROM runs r ORDER BY r.id DESC LIMIT ?""",
        [limit],
    ).fetchall()
    keys = ("id", "created_at", "status", "external_id", "input", "claims", "factual_precision")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def input_hash(input_text: str) -> str:
    """The ``runs.input_hash`` of a text (sha256 of its UTF-8 bytes, as :func:`create_run` stores it)."""
    return hashlib.sha256(input_text.encode("utf-8")).hexdigest()


def find_run(
    db: sqlite_utils.Database, external_id: str | None, input_hash: str, config: dict | None = None
) -> RunRow | None:
    """The newest stored run of this input (external id + input text hash), if any.

    Why: a batch (``check --jsonl``) re-run after a crash or Ctrl+C must resume the runs it
    already started instead of creating a second run per line. With ``config`` only a run made
    with the same stages and settings counts: the same text checked against another source or
    verifier is a different run.
    """
    sql = "SELECT id FROM runs WHERE external_id IS ? AND input_hash = ?"
    params: list = [external_id, input_hash]
    if config is not None:
        sql += " AND config = ?"
        params.append(json.dumps(config, sort_keys=True))
    row = db.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchone()
    return get_run(db, row[0]) if row else None


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


def same_text_runs(db: sqlite_utils.Database, run_id: int) -> list[tuple[int, str, float | None]]:
    """(id, created_at, factual precision) of every run of the same input text as ``run_id``
    (same ``input_hash``), oldest first — the history screen's precision-over-time plot."""
    rows = db.execute(
        """SELECT r.id, r.created_at,
                  (SELECT value FROM scores s WHERE s.run_id = r.id AND s.kind = 'factual_precision')
           FROM runs r WHERE r.input_hash = (SELECT input_hash FROM runs WHERE id = ?) ORDER BY r.id""",
        [run_id],
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def batch_precisions(db: sqlite_utils.Database) -> list[tuple[int, str, float]]:
    """(id, input id, factual precision) of every run that carries an input id — the lines of
    `check --jsonl` batches — and has a precision, oldest first (the history's batch plot)."""
    rows = db.execute(
        """SELECT r.id, r.external_id, s.value FROM runs r JOIN scores s ON s.run_id = r.id
           AND s.kind = 'factual_precision' WHERE r.external_id IS NOT NULL AND s.value IS NOT NULL
           ORDER BY r.id""").fetchall()
    return [(r[0], r[1], r[2]) for r in rows]
