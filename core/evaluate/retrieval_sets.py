"""Retrieval test sets: a corpus of documents with sentence boundaries, and claims with gold
documents and gold evidence sentences, for ``claimscope eval retrieval``.

Three datasets, each read in its own published format:

- ``scifact``: the corpus's abstracts (sentence lists) and claims whose ``evidence`` maps a
  document to rationale sets; the gold documents are those keys, the gold sentences are the
  union of the rationale sentences (the SciFact rationale-selection target).
- ``climate-fever``: Climate-FEVER has no corpus file, only five Wikipedia sentences per
  claim with the article they come from. The corpus here is every article named in the
  file, rebuilt from the sentences the file holds for it (ordered by their sentence number
  in ``evidence_id``), so sentences of other claims are the distractors. Gold: the
  sentences labelled SUPPORTS or REFUTES and their articles; claims without one are skipped.
- ``wice``: each claim cites one long web page (``evidence``, a sentence list). The corpus
  is every page of the file, one document each, so a claim's own page must be found among
  all pages (document level), then its supporting sentences within it. WiCE gives
  alternative supporting-sentence sets (any one suffices): sentence recall@k is the best
  coverage over those sets. Claims without a supporting set (not_supported) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.evaluate.datasets import load_scifact_claims
from core.ingest.sources import jsonl_records, load_documents
from store.records import DocumentRecord

RETRIEVAL_DATASETS = ("scifact", "climate-fever", "wice")
SentenceKey = tuple[str, int]  # (document ext id, sentence index in the document)


@dataclass(frozen=True)
class RetrievalClaim:
    id: str
    claim: str
    gold_docs: frozenset[str]
    # alternative gold sentence sets: sentence recall is the best coverage over them
    gold_sentence_sets: tuple[frozenset[SentenceKey], ...]


@dataclass(frozen=True)
class RetrievalSet:
    dataset: str
    documents: list[DocumentRecord]
    claims: list[RetrievalClaim]
    fmt: str  # the source format the documents are indexed as


def load_retrieval_set(dataset: str, claims_path: Path, corpus_path: Path | None = None) -> RetrievalSet:
    if dataset == "scifact":
        if corpus_path is None:
            raise InputError("SciFact retrieval needs --corpus (corpus.jsonl)")
        return _scifact(claims_path, corpus_path)
    if dataset == "climate-fever":
        return _climate_fever(claims_path)
    if dataset == "wice":
        return _wice(claims_path)
    raise InputError(f"unknown retrieval dataset {dataset!r} (supported: {', '.join(RETRIEVAL_DATASETS)})")


def _scifact(claims_path: Path, corpus_path: Path) -> RetrievalSet:
    docs = load_documents(corpus_path, "scifact")
    claims = []
    for c in load_scifact_claims(claims_path):
        if not c.gold_docs:
            continue
        sents = frozenset((d, int(i)) for d, sets in c.evidence.items() for s in sets for i in s.get("sentences", []))
        claims.append(RetrievalClaim(str(c.id), c.claim, frozenset(c.gold_docs), (sents,)))
    return RetrievalSet("scifact", docs, claims, "scifact")


def _joined(ext_id: str, title: str, sentences: list[str]) -> DocumentRecord:
    """A document whose text is its sentences joined by one space, with their spans."""
    spans, parts, pos = [], [], 0
    for s in sentences:
        s = " ".join(s.split()) or "."
        spans.append((pos, pos + len(s)))
        parts.append(s)
        pos += len(s) + 1
    return DocumentRecord(ext_id, title, " ".join(parts), sentences=spans)


_EVIDENCE_ID = re.compile(r"^(.*):(\d+)$")


def _climate_fever(path: Path) -> RetrievalSet:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    articles: dict[str, dict[int, str]] = {}
    raw = []
    for lineno, obj in jsonl_records(path):
        evs = obj.get("evidences")
        if not isinstance(evs, list) or not isinstance(obj.get("claim"), str):
            raise InputError(f"line {lineno}: expected 'claim' and an 'evidences' list (Climate-FEVER format)", path)
        gold = []
        for ev in evs:
            m = _EVIDENCE_ID.match(str(ev.get("evidence_id", "")))
            article = str(ev.get("article") or (m.group(1) if m else ""))
            num = int(m.group(2)) if m else len(articles.get(article, {}))
            articles.setdefault(article, {}).setdefault(num, str(ev.get("evidence", "")))
            if ev.get("evidence_label") in ("SUPPORTS", "REFUTES"):
                gold.append((article, num))
        raw.append((str(obj.get("claim_id", lineno)), obj["claim"], gold))
    docs, index_of = [], {}
    for article, by_num in sorted(articles.items()):
        nums = sorted(by_num)
        index_of.update({(article, n): i for i, n in enumerate(nums)})
        docs.append(_joined(article, article.replace("_", " "), [by_num[n] for n in nums]))
    claims = [
        RetrievalClaim(cid, text, frozenset(a for a, _ in gold), (frozenset((a, index_of[(a, n)]) for a, n in gold),))
        for cid, text, gold in raw if gold
    ]
    if not claims:
        raise InputError("contains no claim with SUPPORTS / REFUTES evidence", path)
    return RetrievalSet("climate-fever", docs, claims, "jsonl")


_WICE_TITLE = re.compile(r"^\(meta data\) TITLE:\s*(.*)$")


def _wice(path: Path) -> RetrievalSet:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    docs, claims = [], []
    for lineno, obj in jsonl_records(path):
        evidence, sets = obj.get("evidence"), obj.get("supporting_sentences")
        if not isinstance(evidence, list) or not isinstance(obj.get("claim"), str):
            raise InputError(f"line {lineno}: expected 'claim' and an 'evidence' sentence list (WiCE format)", path)
        ext = str((obj.get("meta") or {}).get("id") or f"wice-{lineno}")
        m = _WICE_TITLE.match(str(evidence[0])) if evidence else None
        docs.append(_joined(ext, m.group(1).strip() if m else "", [str(s) for s in evidence] or ["."]))
        gold_sets = tuple(frozenset((ext, int(i)) for i in s) for s in (sets or []) if s)
        if gold_sets:
            claims.append(RetrievalClaim(ext, obj["claim"], frozenset([ext]), gold_sets))
    if not claims:
        raise InputError("contains no claim with supporting sentences", path)
    return RetrievalSet("wice", docs, claims, "jsonl")
