"""Read models of a stored run for inspection and export: each claim with its verdict, its
evidence passages (document, retrieval scores and ranks), and every NLI judgement.

Kept apart from :mod:`store.runs` (the writers) because the TUI's inspector, the history
and comparison screens and the exporters all read the same shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import sqlite_utils

from store.context_usage import ContextUsageRow
from store.context_usage import for_claim as context_usage_for_claim
from store.expansions import ExpansionView, claim_expansion
from store.sources import get_passages


@dataclass(frozen=True)
class JudgementView:
    id: int
    unit: str  # sentence | passage | set
    sentences: tuple[int, ...]  # sentence indices within the passage
    text: str
    probs: tuple[float, float, float]  # entailment, neutral, contradiction
    grounded: bool

    @property
    def support(self) -> float:
        return self.probs[0] - self.probs[2]


@dataclass(frozen=True)
class EvidenceView:
    id: int
    rank: int
    fused_score: float | None
    bm25_score: float | None
    bm25_rank: int | None
    dense_score: float | None
    dense_rank: int | None
    passage_id: int
    source: str
    doc_id: str
    title: str
    url: str | None
    text: str
    sentences: tuple[str, ...]
    sentence_spans: tuple[tuple[int, int], ...]  # of each sentence within ``text``
    judgements: tuple[JudgementView, ...]
    date: str | None = None  # the document's publication date, when the source gives one
    context_usage: ContextUsageRow | None = None  # ACU of this passage (seed 001 §5), once computed
    stages: dict[str, tuple[float, int]] | None = None  # every retrieval stage's (score, rank)

    def best(self) -> JudgementView | None:
        """The most decisive judgement on this passage: largest |P(e) − P(c)|."""
        return max(self.judgements, key=lambda j: abs(j.support), default=None)


@dataclass(frozen=True)
class ClaimView:
    id: int
    idx: int
    text: str
    span: tuple[int, int] | None
    checkable: bool
    status: str
    note: str | None
    context: str | None
    citations: tuple[int, ...]
    original_text: str | None
    verdict: str | None
    support: float | None
    verdict_probs: tuple[float, float, float] | None
    deciding_evidence_id: int | None
    deciding_judgement_id: int | None
    human_label: str | None = None
    human_judgement: str | None = None
    expansion_matched: bool | None = None  # the query expansion already states the evidence (seed 000 §3.3)
    claim_date: str | None = None  # the run's date of the checked text, when given
    evidence: tuple[EvidenceView, ...] = field(default=())
    expansion: ExpansionView | None = None  # generated text the claim was retrieved with; never evidence


_CLAIMS_SQL = """
SELECT c.id, c.idx, c.text, c.span_start, c.span_end, c.checkable, c.status, c.note, c.context,
       c.citations, c.original_text, v.label, v.support, v.probabilities, v.deciding_evidence_id,
       v.deciding_judgement_id, a.label, a.judgement,
       (SELECT matched FROM expansions WHERE claim_id = c.id ORDER BY id DESC LIMIT 1),
       (SELECT claim_date FROM runs WHERE id = c.run_id)
FROM claims c
LEFT JOIN verdicts v ON v.id = (SELECT max(id) FROM verdicts WHERE claim_id = c.id)
LEFT JOIN annotations a ON a.id = (SELECT max(id) FROM annotations WHERE claim_id = c.id)
WHERE {where} ORDER BY c.idx"""


def _claim(r) -> ClaimView:
    probs = json.loads(r[13]) if r[13] else None
    return ClaimView(
        r[0], r[1], r[2], (r[3], r[4]) if r[3] is not None else None, bool(r[5]), r[6], r[7], r[8],
        tuple(json.loads(r[9])) if r[9] else (), r[10], r[11], r[12], tuple(probs) if probs else None,
        r[14], r[15], r[16], r[17], None if r[18] is None else bool(r[18]), r[19],
    )


def run_claim_views(db: sqlite_utils.Database, run_id: int) -> list[ClaimView]:
    """Every claim of a run with its latest verdict and latest human annotation (no evidence)."""
    return [_claim(r) for r in db.execute(_CLAIMS_SQL.format(where="c.run_id = ?"), [run_id]).fetchall()]


def claim_view(db: sqlite_utils.Database, claim_id: int) -> ClaimView | None:
    """One claim with its evidence passages, ranked, and every judgement made on them."""
    row = db.execute(_CLAIMS_SQL.format(where="c.id = ?"), [claim_id]).fetchone()
    if row is None:
        return None
    base = _claim(row)
    ev_rows = db.execute(
        """SELECT id, rank, fused_score, bm25_score, bm25_rank, dense_score, dense_rank, passage_id, stages
           FROM evidence WHERE claim_id = ? ORDER BY rank""",
        [claim_id],
    ).fetchall()
    passages = get_passages(db, [r[7] for r in ev_rows])
    dates = dict(db.execute(
        f"""SELECT p.id, d.date FROM passages p JOIN documents d ON d.id = p.document_id
            WHERE p.id IN ({",".join("?" * len(ev_rows))})""",
        [r[7] for r in ev_rows],
    ).fetchall()) if ev_rows else {}
    usage = context_usage_for_claim(db, claim_id)
    by_evidence: dict[int, list[JudgementView]] = {}
    for j in db.execute(
        """SELECT id, evidence_id, unit, sentences, text, p_entailment, p_neutral, p_contradiction, grounded
           FROM judgements WHERE claim_id = ? ORDER BY id""",
        [claim_id],
    ).fetchall():
        by_evidence.setdefault(j[1], []).append(
            JudgementView(j[0], j[2], tuple(json.loads(j[3])), j[4], (j[5], j[6], j[7]), bool(j[8]))
        )
    evidence = []
    for r in ev_rows:
        p = passages.get(r[7])
        if p is None:  # the passage's source was removed since; the judgement text remains
            continue
        evidence.append(
            EvidenceView(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], p.id, p.source, p.doc_ext_id, p.title, p.url, p.text,
                tuple(p.sentence_texts()), tuple((a - p.char_start, b - p.char_start) for a, b in p.sentences),
                tuple(by_evidence.get(r[0], ())), dates.get(p.id), usage.get(r[0]),
                {k: tuple(v) for k, v in json.loads(r[8]).items()} if r[8] else None,
            )
        )
    return ClaimView(**{**base.__dict__, "evidence": tuple(evidence), "expansion": claim_expansion(db, claim_id)})


def delete_run(db: sqlite_utils.Database, run_id: int) -> bool:
    """Remove a run and everything under it (claims, evidence, judgements, verdicts, events,
    scores, annotations, manifest rows cascade). The caller holds the transaction."""
    claim_ids = [r[0] for r in db.execute("SELECT id FROM claims WHERE run_id = ?", [run_id]).fetchall()]
    for cid in claim_ids:  # verdicts point at evidence/judgements without ON DELETE: remove them first
        db.execute("DELETE FROM verdicts WHERE claim_id = ?", [cid])
    return db.execute("DELETE FROM runs WHERE id = ?", [run_id]).rowcount > 0
