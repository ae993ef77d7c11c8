"""All of a run's reads and writes that the stages need, in one place.

The stage packages (decompose, retrieve, verify, score, diagnostics) compute and never touch
the database; what they compute reaches the ``store`` here, each write in its own
transaction (or the caller's, where a docstring says so), so the stages stay testable
without SQLite and the layering (checked by import-linter) stays one-way.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sqlite_utils

from core.diagnostics.acu import ContextUsage, ContextUsageScorer, stance_from_nli
from core.errors import InputError, NotFoundError
from core.retrieve.expand import Expander, Expansion
from core.retrieve.searcher import Hit
from core.score.agreement import agreement
from core.score.attribution import ENTAIL_THRESHOLD, TOP_K, AnswerAttribution
from core.score.icat import (
    EMBED_THRESHOLD,
    ICAT_KIND,
    Aspect,
    JSONGenerator,
    align_by_embedding,
    align_by_source_labels,
    align_llm,
    check_beta,
    icat_detail,
)
from core.verify.verifier import ClaimVerdict
from store import cache
from store import context_usage as cq
from store import runs as rq
from store.annotations import add_annotation, run_annotations
from store.db import write_tx
from store.inspect import claim_view

# ------------------------------------------------------------------ a claim's verdict


def store_claim_result(
    db: sqlite_utils.Database, claim_id: int, hits: list[Hit], verdict: ClaimVerdict, mode: str, nli_id: str,
    thresholds: dict,
) -> dict[int, int]:
    """Evidence (every retriever's score and rank), every judgement, the verdict; returns
    passage id → evidence id. Caller holds the transaction."""
    evidence_ids = rq.add_evidence(
        db,
        claim_id,
        [
            rq.EvidenceRow(
                h.passage.id, h.rank, h.scores.get(mode), h.scores.get("bm25"), h.ranks.get("bm25"),
                h.scores.get("dense"), h.ranks.get("dense"),
                {name: (h.scores[name], h.ranks[name]) for name in h.scores if name in h.ranks},
            )
            for h in hits
        ],
    )
    deciding_id = None
    for j in verdict.judgements:
        jid = rq.add_judgement(
            db, claim_id, evidence_ids[j.unit.passage_id], j.unit.kind, j.unit.sentences, j.unit.text, j.probs,
            nli_id, j.window, j.n_windows, j.grounded,
        )
        if j is verdict.deciding:
            deciding_id = jid
    d = verdict.deciding
    rq.add_verdict(
        db, claim_id, verdict.label, verdict.support, nli_id, evidence_ids[d.unit.passage_id] if d else None,
        deciding_id, d.probs if d else None, thresholds,
    )
    rq.set_claim_status(db, claim_id, "done")
    return evidence_ids


# ------------------------------------------------------------------ query expansion (stage cache)


def expand_cached(db: sqlite_utils.Database | None, expander: Expander, claim: str) -> Expansion:
    """The claim's pseudo-documents; from the stage cache of ``db`` when the same model,
    prompt and parameters expanded the same claim before (then ``cached`` is True), else
    generated and cached (its own transaction). ``db`` None: no cache."""
    if not claim.strip():
        raise InputError("the claim to expand is empty")
    key = cache.key_of(expander.config())
    if db is not None:
        hit = cache.get(db, "expand", key, claim)
        if hit is not None:
            return expander.expansion(claim, hit["documents"], hit["seconds"], cached=True)
    t0 = time.perf_counter()
    docs = expander.generate(claim)
    seconds = time.perf_counter() - t0
    if db is not None:
        with write_tx(db):
            cache.put(db, "expand", key, claim, {"documents": docs, "seconds": seconds})
    return expander.expansion(claim, docs, seconds, cached=False)


# ------------------------------------------------------------------ ACU of a stored claim's evidence


def score_stored_claim(
    db: Any, claim_id: int, scorer: ContextUsageScorer,
    on_scored: Callable[[int, ContextUsage], None] | None = None,
) -> list[tuple[int, ContextUsage]]:
    """ACU of every evidence passage of a verified claim, best-ranked first, each stored in
    ``context_usage`` in its own transaction as soon as it is scored (an interrupted scoring
    keeps what it finished). The stance is the verifier's: :func:`stance_from_nli` of the
    passage's most decisive judgement (``stance_source`` = verifier). ``on_scored`` is told
    each (evidence id, result) as it lands."""

    view = claim_view(db, claim_id)
    if view is None:
        raise InputError(f"no claim {claim_id}")
    out = []
    for ev in view.evidence:
        best = ev.best()
        if best is None:
            continue
        usage = scorer.score(view.text, ev.text, stance_from_nli(best.probs))
        with write_tx(db):
            cq.put(db, claim_id, ev.id, usage, model=scorer.llm.manifest(), shots=scorer.shots,
                   stance_source="verifier")
        out.append((ev.id, usage))
        if on_scored is not None:
            on_scored(ev.id, usage)
    return out


# ------------------------------------------------------------------ ICAT of a stored run


def _doc_aspect_labels(meta_json: str | None) -> list[str]:
    """A document's aspect labels: ``meta["aspects"]`` (a list, e.g. from a JSONL source), else
    its ``meta["topic"]`` (wiki-vital's coarse category: Arts, History, …)."""
    meta = json.loads(meta_json) if meta_json else {}
    if not isinstance(meta, dict):
        return []
    labels = meta.get("aspects")
    if isinstance(labels, list):
        return [str(x) for x in labels]
    return [meta["topic"]] if isinstance(meta.get("topic"), str) else []


def run_source_labels(db: Any, run_id: int, threshold: float = 0.5) -> tuple[list[str], dict[int, list[str]]]:
    """ICAT-M inputs from stored rows: every aspect label (``documents.meta["aspects"]``) of
    the documents retrieved for the run, and for each claim idx the labels of the first
    retrieved document (by rank) with a grounded unit entailing it, P(entail) > 0.5 (seed
    004 §5.2 and §5.4)."""
    rows = db.execute(
        """SELECT c.idx, e.rank, d.meta,
                  (SELECT max(j.p_entailment) FROM judgements j WHERE j.evidence_id = e.id AND j.grounded = 1)
           FROM claims c JOIN evidence e ON e.claim_id = c.id JOIN passages p ON p.id = e.passage_id
           JOIN documents d ON d.id = p.document_id WHERE c.run_id = ? ORDER BY c.idx, e.rank""",
        [run_id],
    ).fetchall()
    every: list[str] = []
    first: dict[int, list[str]] = {}
    for idx, _rank, meta, p_ent in rows:
        labels = _doc_aspect_labels(meta)
        every.extend(labels)
        if idx not in first and p_ent is not None and p_ent > threshold:
            first[idx] = labels
    return every, first


def set_run_icat(
    db: Any, run_id: int, aspects: Sequence[Aspect], *, method: str = "embedding", query: str | None = None,
    beta: float = 1.0, encode: Callable[[list[str]], np.ndarray] | None = None, llm: JSONGenerator | None = None,
    threshold: float = EMBED_THRESHOLD,
) -> dict:
    """Align the run's checkable claims to ``aspects`` (``embedding`` | ``llm`` | ``source``),
    store the ``icat`` score (inputs and values in its detail) and return the detail. Later
    :meth:`core.pipeline.runner.Pipeline.score` calls recompute it from the stored alignment."""

    check_beta(beta)
    rows = [r for r in rq.run_results(db, run_id) if r["checkable"] and r.get("verdict")]
    texts = [r["text"] for r in rows]
    if method == "embedding":
        if encode is None:
            raise InputError("the embedding alignment needs an embedder")
        al = align_by_embedding(encode, aspects, texts, query=query, threshold=threshold)
    elif method == "llm":
        if llm is None:
            raise InputError("the LLM alignment needs an LLM (--llm)")
        al = align_llm(llm, query or "", aspects, texts, [r["verdict"] == "supported" for r in rows])
    elif method == "source":
        _, first = run_source_labels(db, run_id)
        al = align_by_source_labels({i: first.get(r["idx"], []) for i, r in enumerate(rows)}, aspects)
    else:
        raise InputError(f"unknown alignment method {method!r} (embedding, llm or source)")
    detail = icat_detail(query, aspects, al, rows, beta)
    with write_tx(db):
        rq.set_score(db, run_id, ICAT_KIND, detail["icat"], detail)
    return detail


# ------------------------------------------------------------------ agreement with stored human labels


def run_pairs(db: Any, run_id: int) -> tuple[list[tuple[str, str]], Counter]:
    """(human label, model verdict) for every claim of the run that has both."""

    if rq.get_run(db, run_id) is None:
        raise NotFoundError(f"no run {run_id}")
    verdicts = {c.id: c.verdict for c in rq.run_claims(db, run_id)}
    pairs, origins = [], Counter()
    for claim_id, ann in sorted(run_annotations(db, run_id).items()):
        if ann.label and verdicts.get(claim_id):
            pairs.append((ann.label, verdicts[claim_id]))
            origins[ann.origin] += 1
    return pairs, origins


def runs_agreement(db: Any, run_ids: Sequence[int], binary: bool = False) -> dict:
    """Per run and pooled across the runs (every claim counted once)."""
    per_run, pooled, origins = {}, [], Counter()
    for rid in run_ids:
        pairs, org = run_pairs(db, rid)
        per_run[rid] = agreement(pairs, binary, org)
        pooled += pairs
        origins += org
    return {"runs": per_run, "all": agreement(pooled, binary, origins)}


def import_labels(db: Any, run_id: int, labels: Mapping[int, str], origin: str, annotator: str | None = None) -> int:
    """Store a dataset's gold labels as annotations of the run's claims (claim idx → label,
    one of :data:`LABELS`), origin = the dataset's name. Caller holds the write transaction.
    Returns how many were stored."""

    ids = dict(db.execute("SELECT idx, id FROM claims WHERE run_id = ?", [run_id]).fetchall())
    n = 0
    for idx, label in labels.items():
        if idx not in ids:
            raise InputError(f"run {run_id} has no claim {idx}")
        add_annotation(db, ids[idx], label=label, origin=origin, annotator=annotator)
        n += 1
    return n


# ------------------------------------------------------------------ an attributed answer as a run


def store_attribution(db, text: str, result: AnswerAttribution, references: Mapping[int, str | None],
                      external_id: str | None = None) -> int:
    """Keep an attributed answer as a run: its sentence claims with their citations, and the
    ``attribution`` score (value = AutoAIS mean; detail = per-claim labels, kept sentences,
    and the cited sources' texts, so a viewer shows each claim beside what it cites)."""

    detail = result.detail()
    detail["sources"] = {str(k): v for k, v in references.items()}
    with write_tx(db):
        run_id = rq.create_run(db, text, {"kind": "attribution", "threshold": ENTAIL_THRESHOLD, "top_k": TOP_K})
        rq.set_external_id(db, run_id, external_id)
        for c in result.claims:
            rq.add_claim(db, run_id, c.idx, c.text, None, True, None, None, c.citations)
        rq.set_score(db, run_id, "attribution", result.score, detail)
        rq.set_run_status(db, run_id, "done")
    return run_id
