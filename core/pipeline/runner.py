"""Runs: input → decompose → retrieve → verify → score, as a stream of stored events.

Every step is written to SQLite before it is announced: a listener (the CLI's progress
bar, the TUI) only ever sees what is already stored, so closing and reopening a run shows
the same thing. Each claim's evidence, judgements and verdict land in one transaction, so
an interrupted run (Ctrl+C, crash, kill) resumes with :meth:`Pipeline.resume`: claims
already verified are kept and never recomputed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

import sqlite_utils

from core import markdown
from core.decompose import citations
from core.decompose.base import Claim, Decomposer, code_hash
from core.decompose.citations import CitedClaim, decompose_cited
from core.diagnostics.characteristics import parse_partial_date
from core.errors import InputError, NotFoundError
from core.language import LanguageGuard, mark_other_languages
from core.machine import machine_manifest
from core.pipeline.events import Event, EventKind
from core.pipeline.stored import expand_cached, store_claim_result
from core.retrieve.expand import Expander, Expansion
from core.retrieve.leakage import LeakageResult, Premise, audit
from core.retrieve.searcher import DEFAULT_MODE, Hit, Searcher
from core.score import run_scores
from core.verify.verifier import ClaimVerdict, PassageEvidence, Verifier
from store import cache
from store import expansions as xq
from store import runs as rq
from store.db import write_tx

Listener = Callable[[Event], None]


@dataclass
class ClaimResult:
    run_id: int
    claim_id: int
    claim: str
    verdict: ClaimVerdict
    hits: list[Hit]
    expansion: Expansion | None = None
    leakage: LeakageResult | None = None


class Cancelled(Exception):
    """Raised inside a run when its cancel flag is set; everything stored so far stays."""


BATCH_CLAIMS = 8  # the most claims whose NLI pairs share one batched pass


def window_sizes(most: int = BATCH_CLAIMS) -> Iterator[int]:
    """How many claims each batched NLI pass takes: 1, 2, 4, … up to ``most``. The first verdict
    comes after one claim's work; later windows share a forward pass. A Ray worker verifies an
    answer in the same windows as :meth:`Pipeline.resume`, so the two give the same numbers: the
    int8 verifier quantises its activations per batch, and a different batch moves them in the
    third decimal (measured: .2766 alone, .2701 batched with the answer's other claim)."""
    size = 1
    while True:
        yield size
        size = min(2 * size, max(1, most))


def passage_evidence(hits: list[Hit]) -> list[PassageEvidence]:
    return [
        PassageEvidence(h.passage.id, h.rank, tuple(h.passage.sentence_texts()), h.passage.text, h.passage.title,
                        h.passage.source, h.sentence_ranks or ())
        for h in hits
    ]


def audit_premises(hits: list[Hit], verdict: ClaimVerdict) -> list[Premise]:
    """What a run's leakage audit checks the expansion against: the deciding unit and each
    hit's best-matching sentence (their ``ref`` is the passage id). Retrieved, not gold,
    evidence — so "matched" means the expansion restates what was retrieved (seeds.md §1.4
    step 6). Capped at these k + 1 texts to keep the audit under a second per claim."""
    out: list[Premise] = []
    if verdict.deciding is not None:
        out.append(Premise(verdict.deciding.unit.passage_id, verdict.deciding.unit.text))
    for h in hits:
        text = h.sentence_text
        if text and all(text != p.text for p in out):
            out.append(Premise(h.passage.id, text))
    return out


def split_claims(text: str, decomposer: Decomposer, language_guard: LanguageGuard | None = None) -> list[CitedClaim]:
    """An answer's claims with their [n] citations (:func:`decompose_cited`: ``decompose()`` when
    there is no marker), those of sentences in another language noted and made not checkable when
    ``language_guard`` is given (core/language.py). The one way a run splits an answer, here and
    on a cluster worker (core/pipeline/cluster.py), so both store the same claims."""
    cited = decompose_cited(text, decomposer)
    if language_guard is None:
        return cited
    marked = mark_other_languages([c.claim for c in cited], language_guard)
    return [replace(c, claim=m) for c, m in zip(cited, marked, strict=True)]


class Pipeline:
    """Drives runs over one database with one set of stages (decomposer, retrieval, verifier)."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        decomposer: Decomposer,
        searcher: Searcher,
        verifier: Verifier,
        *,
        sources: list[str] | None = None,
        k: int = 10,
        mode: str = DEFAULT_MODE,
        use_cache: bool = True,
        expander: Expander | None = None,
        splitter: Any = None,
        batch_claims: int = BATCH_CLAIMS,
        language_guard: LanguageGuard | None = None,
    ) -> None:
        """``expander`` is required by the expansion modes (hyde, query2doc); ``splitter``
        (sentences of the generated text) turns on their leakage audit. ``batch_claims``: the
        most claims whose NLI pairs share one batched pass (:meth:`resume`). ``language_guard``
        (the ``english_only`` setting): claims of sentences in another language are noted and
        not verified (core/language.py)."""
        self.db, self.decomposer, self.searcher, self.verifier = db, decomposer, searcher, verifier
        self.sources, self.k, self.mode = sources, k, mode
        self.use_cache = use_cache
        self.expander, self.splitter = expander, splitter
        self.batch_claims = batch_claims
        self.language_guard = language_guard
        if mode in ("hyde", "query2doc") and (expander is None or expander.method != mode):
            raise InputError(f"retrieval mode {mode} needs a {mode} query expander (an LLM)")
        self._manifest_key: str | None = None
        # how an answer's layout and [n] markers are read before its decomposer sees it: a changed
        # reading never serves a decomposition the earlier one cached
        self._layout_code = code_hash(markdown.__file__, citations.__file__)

    def config(self) -> dict[str, Any]:
        config = {
            "decomposer": self.decomposer.name, "sources": self.sources, "k": self.k, "mode": self.mode,
            "thresholds": asdict(self.verifier.t), "nli": self.verifier.nli.ref.model_id,
        }
        if self.expander is not None:
            config["expansion"] = self.expander.config()
        if getattr(self.verifier, "verdict_rule", "rules") != "rules":  # the learned verdicts and their weights
            from core.verify.verdict_model import model_digest

            config["verdict_rule"] = {"rule": self.verifier.verdict_rule, "model": model_digest()}
        if self.language_guard is not None:  # absent when off, so runs made before the setting keep their key
            config["english_only"] = True
        return config

    def _emit(
        self, listener: Listener | None, run_id: int, kind: EventKind, payload: dict, claim_id: int | None = None
    ) -> None:
        """Store the event (inside the caller's transaction when there is one), then announce it."""
        with write_tx(self.db):
            rq.add_event(self.db, run_id, kind, payload, claim_id)
        if listener:
            listener(Event(run_id, kind, payload, claim_id))

    def start(
        self, text: str, external_id: str | None = None, listener: Listener | None = None,
        claim_date: str | None = None,
    ) -> int:
        """Create a run and store its claims; returns the run id (nothing verified yet).
        ``claim_date`` (YYYY[-MM[-DD]]) is when the text was written: evidence published
        after it is flagged in the inspector (seed 001 §4.1)."""
        if not text.strip():
            raise InputError("the input text is empty")
        if claim_date is not None and parse_partial_date(claim_date) is None:
            raise InputError(f"claim date {claim_date!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")
        cited, cached = self._decompose(text)
        return self.start_decomposed(text, cited, external_id, listener, claim_date, cached=cached)

    def start_decomposed(
        self, text: str, cited: list[CitedClaim], external_id: str | None = None, listener: Listener | None = None,
        claim_date: str | None = None, *, cached: bool = False,
    ) -> int:
        """:meth:`start` with the claims already split (by a cluster worker,
        core/pipeline/cluster.py): the run, its claims and their events in one transaction."""
        claims = [c.claim for c in cited]
        with write_tx(self.db):
            if not cached and self.use_cache:
                cache.put(self.db, "decompose", self._decompose_key(), text,
                          [{"claim": asdict(c.claim), "citations": list(c.citations)} for c in cited])
            run_id = rq.create_run(self.db, text, self.config(), claim_date)
            rq.set_external_id(self.db, run_id, external_id)
            rq.add_manifest(self.db, run_id, self._manifests(), asdict(self.verifier.t))
            ids = [
                rq.add_claim(self.db, run_id, c.claim.idx, c.claim.text, c.claim.span, c.claim.checkable,
                             c.claim.note, c.claim.context, c.citations)
                for c in cited
            ]
            rq.add_event(self.db, run_id, EventKind.RUN_STARTED, {"claims": len(claims), "config": self.config()})
            for c, cid in zip(claims, ids, strict=True):
                rq.add_event(self.db, run_id, EventKind.CLAIM_FOUND, {"idx": c.idx, "text": c.text, "span": list(c.span)}, cid)
        if listener:
            listener(Event(run_id, EventKind.RUN_STARTED, {"claims": len(claims)}))
            for c, cid in zip(claims, ids, strict=True):
                listener(Event(run_id, EventKind.CLAIM_FOUND, {"idx": c.idx, "text": c.text, "span": list(c.span)}, cid))
        return run_id

    def _manifests(self) -> list[dict]:
        """Every model the run uses: embedder, verifier (NLI or LLM judge), and the
        decomposer's LLM when it has one (with its file hash and quantisation); and the
        machine, since model outputs are reproducible exactly only on one CPU (core/machine.py)."""
        out = [self.searcher.embedder.ref.manifest(), self.verifier.nli.ref.manifest(), machine_manifest()]
        if self.expander is not None:
            out.append({**self.expander.llm.ref.manifest(), "role": "expansion"})
        return out + self._splitting_manifests()

    def _splitting_manifests(self) -> list[dict]:
        """The models that decide a run's claims besides the rules: the decomposer's LLM, and the
        language identifier of the English-only guard (which claims are left unverified)."""
        out = []
        llm = getattr(self.decomposer, "llm", None)
        if llm is not None and getattr(llm, "ref", None) is not None:
            out.append({**llm.ref.manifest(), "role": "decomposer"})
        if self.language_guard is not None:
            out.append(self.language_guard.identifier.ref.manifest())
        return out

    def _decompose_key(self) -> str:
        llm = getattr(self.decomposer, "llm", None)
        model = llm.ref.manifest() if llm is not None and getattr(llm, "ref", None) is not None else None
        # the decomposer's own identity (the rules' code hash, the atomic adapter's settings): a
        # changed decomposer never reads a decomposition the old one cached
        identity = getattr(self.decomposer, "identity", None)
        return cache.key_of({"decomposer": self.decomposer.name, "model": model, "layout": self._layout_code,
                             **({"identity": identity} if identity is not None else {}),
                             **({"english_only": True} if self.language_guard is not None else {})})

    def _decompose(self, text: str) -> tuple[list[CitedClaim], bool]:
        """The claims of ``text`` (with their [n] citations), from the stage cache when the
        same decomposer and model split the same text before; (claims, came from cache)."""
        if self.use_cache:
            hit = cache.get(self.db, "decompose", self._decompose_key(), text)
            if hit is not None:
                return [
                    CitedClaim(Claim(**{**c["claim"], "span": tuple(c["claim"]["span"])}), tuple(c["citations"]))
                    for c in hit
                ], True
        return split_claims(text, self.decomposer, self.language_guard), False

    def manifest_key(self) -> str:
        """What determines a claim's evidence and verdict: models (ids and weight hashes),
        thresholds, grounding, top-k, retrieval mode, sources and their index state. Two
        claims with the same text under the same key get the same result (stage cache)."""
        if self._manifest_key is None:
            from store.sources import list_sources

            index_state = sorted(
                (s.name, s.n_passages, s.updated_at) for s in list_sources(self.db)
                if not self.sources or s.name in self.sources
            )
            self._manifest_key = cache.key_of({
                "config": self.config(),
                "grounding": getattr(self.verifier, "subject_terms", None) is not None,
                "models": [self.searcher.embedder.ref.manifest(), self.verifier.nli.ref.manifest()],
                "index": index_state,
            })
        return self._manifest_key

    def resume(self, run_id: int, listener: Listener | None = None, cancel: threading.Event | None = None) -> dict:
        """Verify every claim of the run not verified yet, then score; returns the scores.
        Claims go in windows of 1, 2, 4, … up to ``batch_claims``: the first verdict comes
        after one claim's work, and the later windows' NLI pairs run in one batched forward
        pass (:meth:`Verifier.verify_many`). Each claim is still stored and announced alone."""
        run = rq.get_run(self.db, run_id)
        if run is None:
            raise NotFoundError(f"no run {run_id}")
        with write_tx(self.db):
            rq.set_run_status(self.db, run_id, "running")
        pending = [c for c in rq.run_claims(self.db, run_id) if c.status != "done" and c.checkable]
        sizes, pos = window_sizes(self.batch_claims), 0
        while pos < len(pending):
            if cancel is not None and cancel.is_set():
                self._emit(listener, run_id, EventKind.RUN_CANCELLED, {"at_claim": pending[pos].idx})
                with write_tx(self.db):
                    rq.set_run_status(self.db, run_id, "cancelled")
                raise Cancelled(f"run {run_id} cancelled; resume it to finish")
            batch = [(c.id, c.idx, c.text) for c in pending[pos : pos + next(sizes)]]
            pos += self._verify_window(run_id, batch, listener, cancel)
        return self.score(run_id, listener)

    def _verify_one(self, run_id: int, claim_id: int, idx: int, text: str, listener: Listener | None) -> None:
        self._verify_window(run_id, [(claim_id, idx, text)], listener)

    def _verify_window(
        self, run_id: int, claims: list[tuple[int, int, str]], listener: Listener | None,
        cancel: threading.Event | None = None,
    ) -> int:
        """Retrieve and verify a window of claims (id, idx, text) and store each result in its
        own transaction — or copy the stored result of an identical claim verified under the
        same manifest key. A cancel stops the window after the claims retrieved so far.
        Returns how many of ``claims`` were handled."""
        key = self.manifest_key() if self.use_cache else None
        todo: list[tuple[int, int, str, list[Hit], Expansion | None]] = []
        handled = 0
        for claim_id, idx, text in claims:
            if handled and cancel is not None and cancel.is_set():
                break
            handled += 1
            cached = self._from_cache(run_id, claim_id, idx, text, key) if key else None
            if cached is not None:
                if listener:
                    for kind, payload in cached:
                        listener(Event(run_id, kind, payload, claim_id))
                continue
            expansion: Expansion | None = None
            try:
                if self.expander is not None:
                    self._emit(listener, run_id, EventKind.PROGRESS, {"idx": idx, "stage": "expanding"}, claim_id)
                    expansion = expand_cached(self.db, self.expander, text)
                self._emit(listener, run_id, EventKind.PROGRESS, {"idx": idx, "stage": "retrieving"}, claim_id)
                # best sentences only for the expansion's audit: a run never stores them (Searcher.search)
                hits = self.searcher.search(text, k=self.k, mode=self.mode, sources=self.sources, expansion=expansion,
                                            mark_sentences=expansion is not None and self.splitter is not None,
                                            rank_sentences=self.verifier.wants_sentence_ranks)
                if not hits:
                    self._emit(listener, run_id, EventKind.WARNING, {"idx": idx, "message": "no evidence found in the sources"}, claim_id)
                self._emit(listener, run_id, EventKind.PROGRESS, {"idx": idx, "stage": "verifying", "passages": len(hits)}, claim_id)
            except Exception as exc:
                self._fail(listener, run_id, [(claim_id, idx)], exc)
                raise
            todo.append((claim_id, idx, text, hits, expansion))
        try:
            verdicts = self.verifier.verify_many([(text, passage_evidence(hits)) for _, _, text, hits, _ in todo])
            leaks = [
                audit(expansion.documents, text, audit_premises(hits, verdict), self.splitter, self.verifier.nli,
                      min_entailment=self.verifier.t.support)
                if expansion is not None and self.splitter is not None else None
                for (_, _, text, hits, expansion), verdict in zip(todo, verdicts, strict=True)
            ]
        except Exception as exc:
            self._fail(listener, run_id, [(claim_id, idx) for claim_id, idx, *_ in todo], exc)
            raise
        for (claim_id, idx, text, hits, expansion), verdict, leak in zip(todo, verdicts, leaks, strict=True):
            self.store_result(run_id, claim_id, idx, text, hits, verdict, listener, expansion=expansion, leak=leak, key=key)
        return handled

    def _fail(self, listener: Listener | None, run_id: int, claims: list[tuple[int, int]], exc: Exception) -> None:
        """Store the error on each claim it stopped (they stay resumable), then announce it."""
        for claim_id, idx in claims:
            self._emit(listener, run_id, EventKind.ERROR, {"idx": idx, "message": f"{type(exc).__name__}: {exc}"}, claim_id)
            with write_tx(self.db):
                rq.set_claim_status(self.db, claim_id, "error")

    def store_result(
        self, run_id: int, claim_id: int, idx: int, text: str, hits: list[Hit], verdict: ClaimVerdict,
        listener: Listener | None = None, *, expansion: Expansion | None = None, leak: LeakageResult | None = None,
        key: str | None = None,
    ) -> None:
        """Store one claim's evidence, judgements, verdict and events in one transaction, then
        announce them. Also the entry point of results computed elsewhere (a cluster worker):
        the process holding ``self.db`` stays the only writer."""
        if key is None and self.use_cache:
            key = self.manifest_key()
        found: dict[str, Any] = {"idx": idx, "passages": len(hits)}
        if leak is not None:
            found["expansion_matched"] = leak.matched
        ready = {"idx": idx, "label": verdict.label, "support": verdict.support}
        with write_tx(self.db):
            evidence_ids = store_claim_result(
                self.db, claim_id, hits, verdict, self.mode, self.verifier.nli.ref.model_id, asdict(self.verifier.t)
            )
            if expansion is not None:
                xq.add_expansion(self.db, claim_id, expansion, leak, evidence_ids)
            rq.add_event(self.db, run_id, EventKind.EVIDENCE_FOUND, found, claim_id)
            rq.add_event(self.db, run_id, EventKind.VERDICT_READY, ready, claim_id)
            if key is not None:
                cache.put(self.db, "verify", key, text, {"claim_id": claim_id})
        if listener:
            listener(Event(run_id, EventKind.EVIDENCE_FOUND, found, claim_id))
            listener(Event(run_id, EventKind.VERDICT_READY, ready, claim_id))

    def _from_cache(self, run_id: int, claim_id: int, idx: int, text: str, key: str) -> list[tuple[str, dict]] | None:
        """Copy the stored result of the same claim text verified under ``key``, in one
        transaction with its events; None on a miss (or when that claim was deleted since)."""
        hit = cache.get(self.db, "verify", key, text)
        if hit is None or hit["claim_id"] == claim_id:
            return None
        with write_tx(self.db):
            if not rq.copy_claim_result(self.db, hit["claim_id"], claim_id):
                return None
            rq.set_claim_status(self.db, claim_id, "done")
            label, support = self.db.execute(
                "SELECT label, support FROM verdicts WHERE claim_id = ? ORDER BY id DESC LIMIT 1", [claim_id]
            ).fetchone()
            n = self.db.execute("SELECT count(*) FROM evidence WHERE claim_id = ?", [claim_id]).fetchone()[0]
            events = [
                (EventKind.EVIDENCE_FOUND, {"idx": idx, "passages": n, "cached": True}),
                (EventKind.VERDICT_READY, {"idx": idx, "label": label, "support": support, "cached": True}),
            ]
            for kind, payload in events:
                rq.add_event(self.db, run_id, kind, payload, claim_id)
        return events

    def reverify_claim(self, claim_id: int, text: str, listener: Listener | None = None) -> dict:
        """The user edited a claim: store the new text (the decomposer's stays in
        ``original_text``; the old verdict is kept in the ``claim_edited`` event), verify
        only that claim, and rescore the run. Returns the run's scores."""
        text = text.strip()
        if not text:
            raise InputError("the edited claim is empty")
        row = self.db.execute("SELECT run_id, idx, text, original_text FROM claims WHERE id = ?", [claim_id]).fetchone()
        if row is None:
            raise NotFoundError(f"no claim {claim_id}")
        run_id, idx, old_text, original = row
        old = self.db.execute(
            "SELECT label, support FROM verdicts WHERE claim_id = ? ORDER BY id DESC LIMIT 1", [claim_id]
        ).fetchone()
        payload = {"idx": idx, "old_text": old_text, "text": text, "old_label": old[0] if old else None,
                   "old_support": old[1] if old else None}
        with write_tx(self.db):
            self.db.execute("DELETE FROM verdicts WHERE claim_id = ?", [claim_id])
            self.db.execute("DELETE FROM judgements WHERE claim_id = ?", [claim_id])
            self.db.execute("DELETE FROM evidence WHERE claim_id = ?", [claim_id])
            self.db.execute("DELETE FROM expansions WHERE claim_id = ?", [claim_id])
            self.db.execute(
                "UPDATE claims SET text = ?, original_text = ?, checkable = 1, note = NULL, status = 'pending' WHERE id = ?",
                [text, original if original is not None else old_text, claim_id],
            )
            rq.add_event(self.db, run_id, EventKind.CLAIM_EDITED, payload, claim_id)
        if listener:
            listener(Event(run_id, EventKind.CLAIM_EDITED, payload, claim_id))
        self._verify_one(run_id, claim_id, idx, text, listener)
        return self.score(run_id, listener)

    def score(self, run_id: int, listener: Listener | None = None) -> dict:
        """Recompute every score the run's stored rows allow (core/score/icat.py: factual precision
        always, None when the answer only abstained; ICAT when aspects were set for the run),
        store each kind, and return factual precision's detail plus the other kinds' values.
        No model call: a new β or a changed verdict only re-reads rows."""
        results = rq.run_results(self.db, run_id)
        computed = run_scores(results, rq.run_scores(self.db, run_id))
        scores = dict(computed["factual_precision"][1])
        scores.update({kind: value for kind, (value, _) in computed.items() if kind != "factual_precision"})
        complete = all(r["status"] == "done" or not r["checkable"] for r in results)
        with write_tx(self.db):
            for kind, (value, detail) in computed.items():
                rq.set_score(self.db, run_id, kind, value, detail)
            rq.add_event(self.db, run_id, EventKind.SCORE_UPDATED, scores)
            if complete:
                rq.set_run_status(self.db, run_id, "done")
                rq.add_event(self.db, run_id, EventKind.RUN_FINISHED, {"factual_precision": scores["factual_precision"]})
        if listener:
            listener(Event(run_id, EventKind.SCORE_UPDATED, scores))
            if complete:
                listener(Event(run_id, EventKind.RUN_FINISHED, {"factual_precision": scores["factual_precision"]}))
        return scores


def verify_claim(
    db: sqlite_utils.Database,
    searcher: Searcher,
    verifier: Verifier,
    claim: str,
    *,
    sources: list[str] | None = None,
    k: int = 10,
    mode: str = DEFAULT_MODE,
    expander: Expander | None = None,
    splitter: Any = None,
    against: list[dict] | None = None,
) -> ClaimResult:
    """One claim as a whole run (``claimscope verify``): expand (hyde / query2doc), retrieve,
    verify, audit the expansion, store in one transaction. ``against``: the run's given documents
    (``config["against"]``, core/pipeline/given.py :func:`verify_given`), whose searcher embeds
    nothing."""
    if not claim.strip():
        raise InputError("the claim is empty")
    expansion = expand_cached(db, expander, claim) if expander is not None else None
    hits = searcher.search(claim, k=k, mode=mode, sources=sources, expansion=expansion,
                           rank_sentences=verifier.wants_sentence_ranks)
    verdict = verifier.verify(claim, passage_evidence(hits))
    leak = None
    if expansion is not None and splitter is not None:
        leak = audit(expansion.documents, claim, audit_premises(hits, verdict), splitter, verifier.nli,
                     min_entailment=verifier.t.support)
    nli_id = verifier.nli.ref.model_id
    thresholds = asdict(verifier.t)
    config: dict[str, Any] = {"kind": "verify", "sources": sources, "k": k, "mode": mode, "thresholds": thresholds}
    manifests = [verifier.nli.ref.manifest(), machine_manifest()]
    if against is None:
        manifests.insert(0, searcher.embedder.ref.manifest())
    else:
        config["against"] = against
    if expander is not None:
        config["expansion"] = expander.config()
        manifests.append({**expander.llm.ref.manifest(), "role": "expansion"})
    with write_tx(db):
        run_id = rq.create_run(db, claim, config)
        rq.add_manifest(db, run_id, manifests, thresholds)
        claim_id = rq.add_claim(db, run_id, 0, claim, (0, len(claim)))
        evidence_ids = store_claim_result(db, claim_id, hits, verdict, mode, nli_id, thresholds)
        if expansion is not None:
            xq.add_expansion(db, claim_id, expansion, leak, evidence_ids)
        rq.add_event(db, run_id, EventKind.VERDICT_READY, {"idx": 0, "label": verdict.label, "support": verdict.support}, claim_id)
        rq.set_run_status(db, run_id, "done")
    return ClaimResult(run_id, claim_id, claim, verdict, hits, expansion, leak)
