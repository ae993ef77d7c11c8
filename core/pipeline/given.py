"""Checking claims against documents the user already has (``check --against``).

A RAG answer and the passages it was generated from, a report and its references: the
user gives the sources, and every claim is judged against *those* documents only — no
knowledge source, no retrieval.

Storage. The given documents go into the ordinary sources / documents / passages tables,
under one reserved source named ``_given`` (a user source name cannot start with ``_``,
core/index.py). A document is identified by the SHA-256 of its title and text: giving the
same file twice, or in two runs, stores it once. The run's config records the ids and
hashes of its documents (``config["against"]``), and evidence rows point at the stored
passages, so a run reopens (and resumes) without the files, and the inspector highlights
the deciding passage and sentence exactly as for a knowledge source. No migration is
needed; :func:`store.sources.list_sources` hides ``_``-sources, so retrieval over "all
sources" never sees given documents.

Judging. A given set is usually small, so nothing is retrieved: every passage of every given
document is evidence for every claim (chunked by the same chunker as an indexed source,
core/chunk.py) — past :data:`LONG_GIVEN_PASSAGES` passages (a long report), the
:data:`LONG_GIVEN_KEEP` that BM25 ranks highest for the claim (:class:`GivenSearcher`) — and the shipped :class:`~core.verify.Verifier` judges every sentence, every
passage (in the NLI model's 96-token windows, models/nli.py) and, when no single unit
decides, sets of ≤ 3 sentences (seed 003 §4.2). Line breaks in a given text are sentence
boundaries as well as spaCy's (headings and list items carry no full stop).

A claim of several sentences (``eval grounding``'s rows; the decomposer already gives one
sentence per claim) is judged sentence by sentence and takes the min over its sentences
(:func:`judge_text`, the LLM-AggreFact protocol the verifier issue measured).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from core.errors import InputError
from core.ingest.chunk import chunk
from core.ingest.sources import (
    DOCUMENT_SUFFIXES,
    empty_document_reason,
    jsonl_records,
    read_document_file,
    record_field,
)
from core.language import LanguageGuard
from core.pipeline.runner import ClaimResult, Pipeline, passage_evidence, verify_claim
from core.retrieve.searcher import Hit
from core.retrieve.sentence_rank import bm25_scores
from core.text import content_words
from core.verify.verifier import ClaimVerdict, Verifier
from models.nli import ENTAIL
from models.nlp import SentenceSplitter
from store import sources as sq
from store.db import write_tx
from store.records import DocumentRecord, StoredPassage

GIVEN_SOURCE = "_given"  # reserved: user source names start with a letter or digit
GIVEN_KINDS = "a .txt, .md, .html, .pdf, .docx or .jsonl"  # the files --against takes, for messages
GIVEN_MODE = "given"  # the "retrieval mode" of a run checked against given documents
GIVEN_SUFFIXES = (*DOCUMENT_SUFFIXES, ".jsonl")
MAX_GIVEN_CHARS = 2_000_000  # all given documents of one run together
LONG_GIVEN_PASSAGES = 24  # given passages past which a claim is judged on its best passages only (GivenSearcher)
LONG_GIVEN_KEEP = 12  # … how many: about 1,200 words around the claim


@dataclass(frozen=True)
class GivenDoc:
    """A stored given document: its row id, content hash and title."""

    document_id: int
    sha256: str
    title: str
    ext_id: str


# --------------------------------------------------------------------------- reading files


def load_given_files(paths: Sequence[str | Path]) -> list[DocumentRecord]:
    """Documents from ``--against`` files: a .txt / .md file is one document (title: its
    first Markdown heading, else the file name), and so is a saved web page (.html: the prose a
    reader sees, core/ingest/webpage.py), a PDF (its reflowed text layer, core/ingest/pdf.py) and a
    Word document (its paragraphs and tables, core/ingest/docx.py);
    a .jsonl file holds one document per line with ``text`` and optional ``title`` / ``id`` /
    ``url``. Bad input names the file (and line): missing, a directory, empty, not UTF-8, bad
    JSON, no text, a PDF without a text layer."""
    if not paths:
        raise InputError("give at least one document with --against FILE")
    docs: list[DocumentRecord] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise InputError("no such file", path)
        if path.is_dir():
            raise InputError(f"is a directory, expected {GIVEN_KINDS} file", path)
        suffix = path.suffix.lower()
        if suffix not in GIVEN_SUFFIXES:
            raise InputError(f"unsupported file type {suffix or '(none)'!r}: give {GIVEN_KINDS} file", path)
        if suffix == ".jsonl":
            found = 0
            for lineno, obj in jsonl_records(path):
                docs.append(document_record(obj, path, lineno, f"{path.name}:{lineno}"))
                found += 1
            if not found:
                raise InputError("is empty: no document in it", path)
        else:
            doc = read_document_file(path)
            if not doc.text:
                raise InputError(empty_document_reason(path, raw_empty=not path.read_bytes().strip()), path)
            docs.append(DocumentRecord(path.name, doc.title, doc.text, doc.url))
    check_given_size(docs)
    return docs


def document_record(obj: dict, where: str | Path, lineno: int, name: str, field: str = "") -> DocumentRecord:
    """One given document from a JSON object with ``text`` and optional ``title`` / ``id`` /
    ``url``; ``name`` stands in for a missing id and title. ``field`` names where the object sits
    in its line (``documents[2]``) for errors."""
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{field} needs a non-empty string field 'text'".lstrip(), where, lineno)
    ext = record_field(obj, "id", (str, int), where, lineno, required=False)
    title = record_field(obj, "title", str, where, lineno, required=False) or name
    url = record_field(obj, "url", str, where, lineno, required=False)
    return DocumentRecord(str(ext if ext is not None else name), title.strip(), text.strip(), url)


def line_documents(value: Any, where: str | Path, lineno: int, field: str = "documents") -> list[DocumentRecord]:
    """A batch line's own given documents (``check --jsonl``, field ``documents``, or a RAGAS log's
    ``retrieved_contexts`` / ``contexts``, named by ``field``): a list of strings, or of objects with
    ``text`` and optional ``title`` / ``id`` / ``url``. Why: a RAG pipeline logs each answer beside the
    passages it was generated from, and each answer is to be checked against its own passages, not
    one set shared by the batch (``--against``). A string's document is titled "document N" (N from
    1, its place in the list). Bad input names the file, the line and the entry."""
    if not isinstance(value, list) or not value:
        raise InputError(f"field {field!r} must be a non-empty list of strings or objects with 'text'", where, lineno)
    docs = []
    for i, item in enumerate(value, start=1):
        name = f"document {i}"
        if isinstance(item, str):
            if not item.strip():
                raise InputError(f"{field}[{i - 1}] is empty", where, lineno)
            docs.append(DocumentRecord(name, name, item.strip()))
        elif isinstance(item, dict):
            docs.append(document_record(item, where, lineno, name, field=f"{field}[{i - 1}]"))
        else:
            raise InputError(f"{field}[{i - 1}] must be a string or an object with 'text', got {type(item).__name__}",
                             where, lineno)
    check_given_size(docs, where, lineno)
    return docs


def check_given_size(docs: Sequence[DocumentRecord], where: str | Path | None = None, lineno: int | None = None) -> None:
    """All given documents of one run together hold at most :data:`MAX_GIVEN_CHARS` characters."""
    if sum(len(d.text) for d in docs) > MAX_GIVEN_CHARS:
        raise InputError(f"the given documents hold over {MAX_GIVEN_CHARS:,} characters: give fewer or shorter ones",
                         where, lineno)


def pasted_document(text: str, title: str = "pasted source") -> DocumentRecord:
    """A document pasted into the TUI (no file)."""
    if not text.strip():
        raise InputError("the pasted source is empty")
    return DocumentRecord("pasted", title, text.strip())


# --------------------------------------------------------------------------- storing


def document_sha256(doc: DocumentRecord) -> str:
    """What identifies a given document: its title and text (not the file it came from)."""
    return hashlib.sha256(f"{doc.title}\x00{doc.text}".encode()).hexdigest()


_LINE = re.compile(r"[^\n]+")


def split_given(text: str, splitter: SentenceSplitter) -> list[tuple[int, int]]:
    """Sentence spans of a given document: spaCy's sentences within each line (a line break
    always ends a sentence: headings, list items and table rows have no full stop)."""
    lines = [(m.start(), m.group()) for m in _LINE.finditer(text) if m.group().strip()]
    spans: list[tuple[int, int]] = []
    for (start, line), sents in zip(lines, splitter.split([ln for _, ln in lines]), strict=True):
        spans.extend((start + s, start + e) for s, e in (sents or [(0, len(line.rstrip()))]))
    return spans or [(0, len(text))]


def store_given(
    db: sqlite_utils.Database, docs: Sequence[DocumentRecord], splitter: SentenceSplitter,
    chunk_words: int = 128, chunk_overlap: int = 32,
) -> list[GivenDoc]:
    """Store the documents under the ``_given`` source (once per content hash) and return
    them in the order given (duplicates within ``docs`` collapse to one). Sentences and
    passages are computed before the one write transaction."""
    unique: dict[str, DocumentRecord] = {}
    for d in docs:
        unique.setdefault(document_sha256(d), d)
    source = sq.get_source(db, GIVEN_SOURCE)
    stored = _by_hash(db, source.id) if source else {}
    todo = [(h, d) for h, d in unique.items() if h not in stored]
    prepared = []
    for h, d in todo:
        spans = d.sentences or split_given(d.text, splitter)
        prepared.append((h, d, chunk(d.text, spans, chunk_words, chunk_overlap)))
    if prepared:
        with write_tx(db):
            sid = sq.upsert_source(db, name=GIVEN_SOURCE, format="given", path=None, attribution=None, licence=None,
                                   chunk_words=chunk_words, chunk_overlap=chunk_overlap) if source is None else source.id
            have = _by_hash(db, sid)  # another process may have stored some meanwhile
            for h, d, passages in prepared:
                if h not in have:
                    rec = DocumentRecord(h[:16], d.title, d.text, d.url, d.date, {"name": d.ext_id})
                    sq.insert_document(db, sid, rec, h, passages)
            sq.refresh_source_counts(db, sid, None)
        source = sq.get_source(db, GIVEN_SOURCE)
        stored = _by_hash(db, source.id)
    return [GivenDoc(stored[h], h, d.title, d.ext_id) for h, d in unique.items()]


def _by_hash(db: sqlite_utils.Database, source_id: int) -> dict[str, int]:
    """content hash → document id of the stored given documents (their ext_id is the
    hash's first 16 hex digits, short enough to show)."""
    return {h: doc_id for doc_id, h in sq.document_hashes(db, source_id).values()}


def against_config(docs: Sequence[GivenDoc]) -> list[dict]:
    """A run's ``config["against"]``: what :func:`given_from_config` reads back."""
    return [{"document_id": d.document_id, "sha256": d.sha256, "title": d.title, "name": d.ext_id} for d in docs]


def given_from_config(db: sqlite_utils.Database, config: dict) -> list[GivenDoc] | None:
    """The given documents of a stored run (None for a run over knowledge sources); a run
    reopens and resumes from these rows, without the original files."""
    against = config.get("against")
    if not against:
        return None
    return [GivenDoc(int(a["document_id"]), a["sha256"], a.get("title", ""), a.get("name", "")) for a in against]


# --------------------------------------------------------------------------- "retrieval"


class GivenSearcher:
    """Stands in for :class:`~core.retrieve.Searcher`: every passage of the given documents
    is a hit, for every claim (but for long documents, below). Hits are ordered by content-word
    overlap with the claim (a display order only: the verifier judges them all); ``k`` and
    ``mode`` are ignored.

    Long documents: when the given passages number more than :data:`LONG_GIVEN_PASSAGES` (a PDF
    report, a long saved page), only the :data:`LONG_GIVEN_KEEP` passages with the highest BM25
    score for the claim (title and text, core/retrieve/sentence_rank.bm25_scores) are hits, and
    all of their units are judged. Why: every unit of every passage for every claim made a
    17-page PDF take 17 s for 3 claims; a RAG answer's passages and
    the benchmark sets' documents (Factcheck-GPT ≤ 7 passages a row, ExpertQA ≤ 4, WiCE's median
    page 11) stay whole, since word-overlap pruning of small sets cost Factcheck-GPT grounding
    (.715 → .658). Measured on WiCE's long pages (docs/benchmarks.md, "Long given documents")."""

    def __init__(self, db: sqlite_utils.Database | None, docs: Sequence[GivenDoc],
                 passages: Sequence[StoredPassage] | None = None) -> None:
        """The passages of ``docs`` read from ``db``, or ``passages`` already read: a Ray worker
        gets an answer's given passages with the answer and opens no database (``db`` None,
        core/pipeline/cluster.py)."""
        if passages is None:
            if not docs or db is None:
                raise InputError("no given documents")
            ids = [d.document_id for d in docs]
            rows = db.execute(
                f"SELECT id FROM passages WHERE document_id IN ({','.join('?' * len(ids))}) ORDER BY document_id, idx",
                ids,
            ).fetchall()
            found = sq.get_passages(db, [r[0] for r in rows])
            passages = [found[r[0]] for r in rows]
        self.db, self.docs, self.passages = db, list(docs), list(passages)
        if not self.passages:
            raise InputError("the given documents hold no text to check against")

    def search(self, query: str, k: int = 0, mode: str = GIVEN_MODE, sources: Any = None, expansion: Any = None,
               mark_sentences: bool = True, rank_sentences: bool = False) -> list[Hit]:
        """Every given passage (or a long set's best, see the class), ranked by its best sentence's
        share of the query's content words (that sentence is the ranking itself, so it is always
        marked). ``rank_sentences`` is accepted and ignored: a given document has every sentence
        judged (:func:`given_verifier`)."""
        candidates = list(enumerate(self.passages))
        if len(candidates) > LONG_GIVEN_PASSAGES:
            bm25 = bm25_scores(query, [f"{p.title}\n{p.text}" for p in self.passages])
            best_first = sorted(range(len(bm25)), key=lambda i: (-bm25[i], i))
            candidates = [candidates[i] for i in sorted(best_first[:LONG_GIVEN_KEEP])]
        q = set(content_words(query))
        scored = []
        for pos, p in candidates:
            overlaps = [len(q & set(content_words(s))) for s in p.sentence_texts()]
            best = max(range(len(overlaps)), key=overlaps.__getitem__) if overlaps else None
            share = (max(overlaps) / len(q)) if overlaps and q else 0.0
            scored.append((share, pos, p, best))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [
            Hit(p, rank, share, {GIVEN_MODE: share}, {GIVEN_MODE: rank}, best)
            for rank, (share, _, p, best) in enumerate(scored, start=1)
        ]


class WordPieceTerms:
    """The grounding guard's subject terms cut into word pieces, as the verifier cuts evidence
    (``\\w+``): "Feb." → "feb". Without it a sentence copied from a given document can fail the
    guard on its own date ("Friday (Feb. 13)"). Used for given documents only: over a knowledge
    source the learned verdicts were fitted with whole-token terms, and the pieces let passages
    about other people that mention "Harry S. Truman" decide his claims (measured; see
    docs/benchmarks.md, grounding). One-letter pieces ("S.") name nothing and are left out."""

    def __init__(self, terms: Callable[[str], set[str]]) -> None:
        self.terms = terms

    def __call__(self, claim: str) -> set[str]:
        return {w for t in self.terms(claim) for w in re.findall(r"\w+", t) if len(w) > 1}


def given_verifier(verifier: Verifier) -> Verifier:
    """``verifier`` as given documents need it (a shallow copy; the caller's is left as it is):

    - every candidate unit judged — no pruning, no early stop. Against a knowledge source the
      verifier judges only the few sentences that share the most of the claim's words
      (``Thresholds.judge_sentences`` / ``judge_passages`` / ``early_stop``); a given document is
      the claim's one source, and the unit that grounds it often paraphrases it (the
      LLM-AggreFact protocol scores every chunk). Pruned, Factcheck-GPT grounding BAcc fell
      from .715 to .658 (docs/benchmarks.md).
    - :class:`WordPieceTerms` as the grounding guard (no guard, no change).
    """
    out = copy.copy(verifier)
    out.t = dataclasses.replace(verifier.t, judge_sentences=0, judge_passages=0, early_stop=1.0)
    terms = verifier.subject_terms
    if terms is not None and not isinstance(terms, WordPieceTerms):
        out.subject_terms = WordPieceTerms(terms)
    return out


class GivenPipeline(Pipeline):
    """A :class:`~core.pipeline.Pipeline` whose evidence is the given documents: runs are
    stored, streamed, cached, resumed and scored exactly like runs over a knowledge source."""

    def __init__(self, db: sqlite_utils.Database, decomposer: Any, verifier: Verifier, docs: Sequence[GivenDoc],
                 *, use_cache: bool = True, language_guard: LanguageGuard | None = None) -> None:
        searcher = GivenSearcher(db, docs)
        super().__init__(db, decomposer, searcher, given_verifier(verifier), sources=None, k=len(searcher.passages),  # type: ignore[arg-type]
                         mode=GIVEN_MODE, use_cache=use_cache, language_guard=language_guard)
        self.docs = list(docs)

    def config(self) -> dict[str, Any]:
        config = super().config()
        config["against"] = against_config(self.docs)
        return config

    def _manifests(self) -> list[dict]:
        """No embedder: nothing is retrieved."""
        return [self.verifier.nli.ref.manifest(), *self._splitting_manifests()]

    def manifest_key(self) -> str:
        """Config (with the documents' hashes), grounding and the verifier's weights."""
        from store import cache

        if self._manifest_key is None:
            self._manifest_key = cache.key_of({
                "config": {k: v for k, v in self.config().items() if k != "against"},
                "documents": sorted(d.sha256 for d in self.docs),
                "grounding": getattr(self.verifier, "subject_terms", None) is not None,
                "models": [self.verifier.nli.ref.manifest()],
            })
        return self._manifest_key


# --------------------------------------------------------------------------- one claim, no run


@dataclass
class TextJudgement:
    """A claim text (≥ 1 sentences) judged against given documents: one verdict per claim
    sentence; ``score`` = min over the sentences of the P(entailment) that decided."""

    sentences: list[str]
    verdicts: list[ClaimVerdict]
    verifier: Verifier

    @property
    def score(self) -> float:
        return min(entailment_score(v, self.verifier) for v in self.verdicts)

    @property
    def supported(self) -> bool:
        return all(v.label == "supported" for v in self.verdicts)


def entailment_score(verdict: ClaimVerdict, verifier: Verifier, kinds: Callable[[Any], bool] | None = None) -> float:
    """The largest P(entailment) among the judgements the verdict was decided on (grounded
    units; sentence sets only when no single unit decides, as :meth:`Verifier.decide_staged`)
    — the number compared with the support threshold. ``kinds`` picks the units instead
    (the aggregation ablations of ``eval grounding``)."""
    grounded = [j for j in verdict.judgements if j.grounded]
    if kinds is not None:
        js = [j for j in grounded if kinds(j)]
    else:
        singles = [j for j in grounded if j.unit.kind != "set"]
        js = singles if verifier._decides(singles) else grounded
    return max((float(j.probs[ENTAIL]) for j in js), default=0.0)


def judge_text(
    text: str, searcher: GivenSearcher, verifier: Verifier, splitter: SentenceSplitter, always_sets: bool = False,
) -> TextJudgement:
    """Judge ``text`` against every passage of the given documents, sentence by sentence —
    the same search and verifier calls a ``check --against`` run makes per claim."""
    verifier = given_verifier(verifier)
    spans = splitter.split([text])[0] or [(0, len(text))]
    sentences = [text[s:e] for s, e in spans if text[s:e].strip()] or [text.strip()]
    verdicts = []
    for s in sentences:
        hits = searcher.search(s)
        verdicts.append(verifier.verify(s, passage_evidence(hits), always_sets=always_sets))
    return TextJudgement(sentences, verdicts, verifier)


def verify_given(workbench: Any, db: sqlite_utils.Database, options: Any, docs: Sequence[DocumentRecord],
                 claim: str) -> ClaimResult:
    """One claim against given documents as one stored run (``claimscope verify --against``): the
    documents stored first, then every passage judged as a ``check --against`` run judges a claim
    (:func:`given_verifier`). The claim is taken whole, as ``verify`` takes it over a knowledge
    source: no decomposer. Why a command of its own: a fact-checker with one claim and the
    documents it came with wants one verdict and its evidence, not an answer's claims."""
    if not claim.strip():  # before any document is stored
        raise InputError("the claim is empty")
    if not docs:
        raise InputError("give at least one document to check against")
    s = workbench.settings
    stored = store_given(db, docs, workbench.splitter(), s.chunk_words, s.chunk_overlap)
    searcher = GivenSearcher(db, stored)
    return verify_claim(db, searcher, given_verifier(workbench.verifier(options)), claim,  # type: ignore[arg-type]
                        k=len(searcher.passages), mode=GIVEN_MODE, against=against_config(stored))


# --------------------------------------------------------------------------- building


def given_pipeline(
    workbench: Any, db: sqlite_utils.Database, options: Any, *, docs: Sequence[DocumentRecord] | None = None,
    stored: Sequence[GivenDoc] | None = None,
) -> GivenPipeline:
    """The pipeline of a run against given documents, from a :class:`~core.workbench.Workbench`
    and its :class:`~core.workbench.RunOptions` (decomposer, verifier, thresholds, grounding):
    new documents (``docs``, stored first) or a stored run's (``stored``)."""
    if stored is None:
        if not docs:
            raise InputError("give at least one document to check against")
        s = workbench.settings
        stored = store_given(db, docs, workbench.splitter(), s.chunk_words, s.chunk_overlap)
    return GivenPipeline(db, workbench.decomposer(options.decomposer), workbench.verifier(options), stored,
                         language_guard=workbench.language_guard() if options.english_only else None)
