"""Runs: input → (decompose) → retrieve → verify → store.

This module currently drives single-claim runs (``claimscope verify``): one claim is
retrieved for, verified, and the run — evidence with every retriever's score and rank,
every NLI judgement with its three probabilities, the verdict and the model manifest — is
written in one transaction, so a run is either stored whole or not at all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import sqlite_utils

from core.retrieve import Hit, Searcher
from core.verify import ClaimVerdict, PassageEvidence, Verifier
from store import runs as rq
from store.db import write_tx


@dataclass
class ClaimResult:
    run_id: int
    claim_id: int
    claim: str
    verdict: ClaimVerdict
    hits: list[Hit]


def passage_evidence(hits: list[Hit]) -> list[PassageEvidence]:
    return [PassageEvidence(h.passage.id, h.rank, tuple(h.passage.sentence_texts()), h.passage.text) for h in hits]


def verify_claim(
    db: sqlite_utils.Database,
    searcher: Searcher,
    verifier: Verifier,
    claim: str,
    *,
    sources: list[str] | None = None,
    k: int = 10,
    mode: str = "hybrid",
) -> ClaimResult:
    """Retrieve top-k passages for one claim, verify it, and store the whole run."""
    hits = searcher.search(claim, k=k, mode=mode, sources=sources)
    verdict = verifier.verify(claim, passage_evidence(hits))
    nli_id = verifier.nli.ref.model_id
    thresholds = asdict(verifier.t)
    config: dict[str, Any] = {"kind": "verify", "sources": sources, "k": k, "mode": mode, "thresholds": thresholds}
    with write_tx(db):
        run_id = rq.create_run(db, claim, config)
        rq.add_manifest(db, run_id, [searcher.embedder.ref.manifest(), verifier.nli.ref.manifest()], thresholds)
        claim_id = rq.add_claim(db, run_id, 0, claim, (0, len(claim)))
        evidence_ids = rq.add_evidence(
            db,
            claim_id,
            [
                rq.EvidenceRow(
                    h.passage.id, h.rank, h.scores.get(mode), h.scores.get("bm25"), h.ranks.get("bm25"),
                    h.scores.get("dense"), h.ranks.get("dense"),
                )
                for h in hits
            ],
        )
        deciding_id = None
        for j in verdict.judgements:
            jid = rq.add_judgement(
                db, claim_id, evidence_ids[j.unit.passage_id], j.unit.kind, j.unit.sentences, j.probs,
                nli_id, j.window, j.n_windows,
            )
            if j is verdict.deciding:
                deciding_id = jid
        d = verdict.deciding
        rq.add_verdict(
            db, claim_id, verdict.label, verdict.support, nli_id,
            evidence_ids[d.unit.passage_id] if d else None, deciding_id,
            d.probs if d else None, thresholds,
        )
        rq.set_claim_status(db, claim_id, "done")
        rq.set_run_status(db, run_id, "done")
    return ClaimResult(run_id, claim_id, claim, verdict, hits)
