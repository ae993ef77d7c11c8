"""Answer-level scores from the research, as pure functions over claim verdicts.

* **Factual precision** (FActScore; ICAT's factuality, seed 004 §5.3 and §6.5): supported
  claims over checkable claims. Abstentions are counted apart, as FActScore does: an answer
  with no checkable claim gets no precision (``None``, not 0) and is left out of the batch
  mean, which is reported beside the share of answers that responded ("% responding").
* **ICAT** (seed 004 §5.3): factuality S_fact = |V(C_r, K)| / |C_r|, coverage
  S_cov = |⋃_{c ∈ V} T(c) ∩ T(q)| / |T(q)| where **only supported (grounded) claims count**,
  and ICAT_β = (1 + β²)·F·C / (β²·F + C), β = 1 by default, 0 when F = C = 0. Dataset
  level: the macro mean of per-response values (repo), reported beside F of the means,
  each labelled (seed 004 §5.3).
* **Aspects** T(q): a user list; the LLM with the ICAT-A prompt (≤ 10, most important
  first; seed 004 §5.5); or the aspect labels a knowledge source carries (ICAT-M, §5.2).
* **Alignment** claim → aspects T(c): the LLM (ICAT-S/A prompt, constrained JSON, output
  validated: unknown aspect or fact ids are rejected, §5.5 parsing rules), the source's
  labels (ICAT-M: the deciding document's aspect labels), or — the offline default —
  embeddings: a claim covers its most similar aspect (cosine of all-MiniLM-L6-v2 vectors of
  the claim and "query: aspect") when that cosine is ≥ ``EMBED_THRESHOLD`` = 0.4 [derived;
  see :func:`align_by_embedding`].

Everything here recomputes from stored rows: changing β or the aspect list never re-runs the
verifier. Run-level helpers at the end read and write the ``scores`` table (kind ``icat``
keeps aspects and alignment in its detail JSON, so no schema change is needed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from core.errors import InputError

VERDICT_LABELS = ("supported", "refuted", "not_enough_info", "conflicting")
MAX_ASPECTS = 10  # ICAT-A: "up to 10" subtopics (seed 004 §5.5)
EMBED_THRESHOLD = 0.4  # cosine, claim ↔ "query: aspect" (all-MiniLM-L6-v2); see align_by_embedding
ASPECT_ORIGINS = ("user", "llm", "source")
ICAT_KIND = "icat"


# --------------------------------------------------------------------------- factual precision


def factual_precision(labels: Sequence[str]) -> float:
    """Supported claims over checkable claims: FActScore's factual precision and ICAT's
    factuality S_fact = |V(C_r, K)| / |C_r| (seed 004 §5.3); 0 when there is no claim
    (ICAT's convention; :func:`answer_precision` gives FActScore's ``None`` instead)."""
    return sum(label == "supported" for label in labels) / len(labels) if labels else 0.0


@dataclass(frozen=True)
class ClaimOutcome:
    """What a score needs of one claim: checkable or not (and why), and its verdict."""

    checkable: bool
    verdict: str | None  # one of VERDICT_LABELS; None while not verified
    note: str | None = None  # why not checkable: "abstention", "question", "opinion", "advice"…


@dataclass(frozen=True)
class AnswerPrecision:
    """FActScore for one answer. ``precision`` is None when the answer has no verified
    checkable claim (it abstained, or only said uncheckable things): FActScore scores only
    responding answers and reports the abstention rate apart (FActScore §3.3; seed 002 §3.5)."""

    precision: float | None
    supported: int
    checkable: int  # checkable claims with a verdict: the denominator
    pending: int  # checkable claims not verified yet (left out until they are)
    abstentions: int  # claims noted "abstention" ("I'm sorry, I cannot…")
    not_checkable: int  # every claim that is not checkable, abstentions included
    verdicts: dict[str, int]

    @property
    def abstained(self) -> bool:
        return self.precision is None


def answer_precision(claims: Iterable[ClaimOutcome]) -> AnswerPrecision:
    claims = list(claims)
    labels = [c.verdict for c in claims if c.checkable and c.verdict]
    pending = sum(1 for c in claims if c.checkable and not c.verdict)
    supported = labels.count("supported")
    return AnswerPrecision(
        precision=supported / len(labels) if labels else None,
        supported=supported,
        checkable=len(labels),
        pending=pending,
        abstentions=sum(1 for c in claims if not c.checkable and c.note == "abstention"),
        not_checkable=sum(1 for c in claims if not c.checkable),
        verdicts={v: labels.count(v) for v in VERDICT_LABELS},
    )


@dataclass(frozen=True)
class BatchPrecision:
    """Over a batch of answers (FActScore's reporting): ``mean`` = macro mean of per-answer
    precision over the answers that responded; ``responding`` = their share; ``micro`` =
    all supported / all checkable claims (labelled apart: long answers weigh more)."""

    mean: float | None
    micro: float | None
    responding: float
    answers: int
    abstained: int


def batch_precision(answers: Sequence[AnswerPrecision]) -> BatchPrecision:
    scored = [a.precision for a in answers if a.precision is not None]
    checkable = sum(a.checkable for a in answers)
    return BatchPrecision(
        mean=sum(scored) / len(scored) if scored else None,
        micro=sum(a.supported for a in answers) / checkable if checkable else None,
        responding=len(scored) / len(answers) if answers else 0.0,
        answers=len(answers),
        abstained=len(answers) - len(scored),
    )


# --------------------------------------------------------------------------- ICAT


def check_beta(beta: float) -> float:
    """β ≥ 0 and finite (β = 0 reduces ICAT_β to factuality; larger β weighs coverage more)."""
    if not isinstance(beta, int | float) or not math.isfinite(beta) or beta < 0:
        raise InputError(f"beta must be a finite number ≥ 0, got {beta!r}")
    return float(beta)


def icat_beta(factuality: float, coverage: float, beta: float = 1.0) -> float:
    """ICAT_β = (1 + β²)·F·C / (β²·F + C); 0 when the denominator is 0 (seed 004 §5.3)."""
    b2 = check_beta(beta) ** 2
    den = b2 * factuality + coverage
    return (1 + b2) * factuality * coverage / den if den > 0 else 0.0


def coverage(claim_aspects: Iterable[Iterable[int]], aspect_ids: Iterable[int]) -> float:
    """S_cov = |⋃ T(c) ∩ T(q)| / |T(q)| over the **supported** claims' aspect sets (the caller
    passes only those); 0 when T(q) is empty (seed 004 §5.3)."""
    tq = set(aspect_ids)
    if not tq:
        return 0.0
    covered = set().union(*[set(a) for a in claim_aspects]) & tq
    return len(covered) / len(tq)


@dataclass(frozen=True)
class Aspect:
    """One element of T(q). Ids are 1-based, as in ICAT's prompts."""

    id: int
    text: str
    origin: str = "user"  # "user" | "llm" | "source"


@dataclass(frozen=True)
class ICATScore:
    factuality: float
    coverage: float
    icat: float
    beta: float
    claims: int  # |C_r|: checkable claims with a verdict
    supported: int  # |V(C_r, K)|
    aspects: int  # |T(q)|
    covered: tuple[int, ...]  # aspect ids covered by supported claims
    gaps: tuple[int, ...]  # aspect ids no supported claim covers


def icat_score(
    supported: Sequence[bool], alignment: Mapping[int, Iterable[int]], aspects: Sequence[Aspect], beta: float = 1.0
) -> ICATScore:
    """ICAT for one response. ``supported[i]``: claim i is in V(C_r, K); ``alignment``: claim
    index → aspect ids T(c). Aligned but unsupported claims never count (seed 004 §5.3)."""
    ids = [a.id for a in aspects]
    grounded = [set(alignment.get(i, ())) for i, ok in enumerate(supported) if ok]
    f = sum(supported) / len(supported) if supported else 0.0
    c = coverage(grounded, ids)
    covered = set().union(*grounded) & set(ids) if grounded else set()
    return ICATScore(
        factuality=f, coverage=c, icat=icat_beta(f, c, beta), beta=float(beta), claims=len(supported),
        supported=sum(supported), aspects=len(ids), covered=tuple(sorted(covered)),
        gaps=tuple(i for i in ids if i not in covered),
    )


@dataclass(frozen=True)
class BatchICAT:
    """Macro means of per-response values (the repo's dataset score) and, labelled apart,
    ICAT_β of the mean factuality and mean coverage (seed 004 §5.3 check on Table 3)."""

    factuality: float
    coverage: float
    icat_macro: float
    icat_of_means: float
    beta: float
    responses: int


def batch_icat(scores: Sequence[ICATScore], beta: float = 1.0) -> BatchICAT:
    if not scores:
        return BatchICAT(0.0, 0.0, 0.0, 0.0, float(beta), 0)
    n = len(scores)
    f = sum(s.factuality for s in scores) / n
    c = sum(s.coverage for s in scores) / n
    macro = sum(icat_beta(s.factuality, s.coverage, beta) for s in scores) / n
    return BatchICAT(f, c, macro, icat_beta(f, c, beta), float(beta), n)


@dataclass(frozen=True)
class CoverageCell:
    aligned: bool  # the claim was aligned to the aspect
    counts: bool  # aligned and the claim is supported: it covers the aspect


@dataclass(frozen=True)
class CoverageMatrix:
    """Aspects × claims, for the TUI's coverage view: which supported claim covers which
    aspect, which aligned claims do not count (unsupported), and the gaps."""

    aspects: tuple[Aspect, ...]
    claims: tuple[str, ...]
    cells: tuple[tuple[CoverageCell, ...], ...]  # [aspect][claim]
    gaps: tuple[int, ...]


def coverage_matrix(
    aspects: Sequence[Aspect], claims: Sequence[str], supported: Sequence[bool], alignment: Mapping[int, Iterable[int]]
) -> CoverageMatrix:
    sets = {i: set(alignment.get(i, ())) for i in range(len(claims))}
    cells = tuple(
        tuple(CoverageCell(a.id in sets[i], a.id in sets[i] and bool(supported[i])) for i in range(len(claims)))
        for a in aspects
    )
    gaps = tuple(a.id for a, row in zip(aspects, cells, strict=True) if not any(c.counts for c in row))
    return CoverageMatrix(tuple(aspects), tuple(claims), cells, gaps)


# --------------------------------------------------------------------------- aspects


def aspects_from_list(texts: Iterable[str], origin: str = "user") -> list[Aspect]:
    """User (or source) aspects: stripped, empty ones dropped, duplicates (case-insensitive)
    kept once, numbered 1.. in the given order."""
    if origin not in ASPECT_ORIGINS:
        raise InputError(f"unknown aspect origin {origin!r} (one of {', '.join(ASPECT_ORIGINS)})")
    seen: dict[str, str] = {}
    for t in texts:
        t = " ".join(str(t).split())
        if t and t.lower() not in seen:
            seen[t.lower()] = t
    return [Aspect(i, t, origin) for i, t in enumerate(seen.values(), start=1)]


def aspects_from_source_labels(doc_labels: Iterable[Iterable[str]]) -> list[Aspect]:
    """ICAT-M's T(q) when no list is given: every aspect label carried by the documents
    (``documents.meta["aspects"]``), in first-seen order (seed 004 §5.2)."""
    return aspects_from_list((label for labels in doc_labels for label in labels), origin="source")


class JSONGenerator(Protocol):
    """The LLM runtime as ICAT needs it: one user turn, temperature 0, output constrained to
    a JSON schema (seed 004 §5.5 decoding). May return parsed JSON or the raw text."""

    def generate_json(self, prompt: str, schema: dict) -> Any: ...


def aspects_prompt(query: str) -> str:
    """ICAT-A's aspect prompt, verbatim (repo string; seed 004 §5.5)."""
    return (
        f'given this query "{query}" generate all the possible subtopics or related queries from most '
        'important to least, up to 10, one in each line with this jsonl format {"topic": ...}, '
        "nothing else in your response"
    )


ASPECTS_SCHEMA = {
    "type": "array", "maxItems": MAX_ASPECTS,
    "items": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
}


def _json_items(raw: Any, key: str) -> list[Any]:
    """Constrained output (a list, or {"items": [...]}) as is; raw text line by line, keeping
    only lines that start with ``{"<key>":`` and parse (the repo's rule, §5.5)."""
    if isinstance(raw, dict):
        raw = next((v for v in raw.values() if isinstance(v, list)), [raw])
    if isinstance(raw, list):
        return raw
    items = []
    for line in str(raw).splitlines():
        line = line.strip()
        if not line.startswith(f'{{"{key}":'):
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return items


def parse_aspects(raw: Any) -> list[Aspect]:
    """The LLM's aspects: objects with a non-empty string ``topic``, at most 10 (§5.5)."""
    texts = [it["topic"] for it in _json_items(raw, "topic") if isinstance(it, dict) and isinstance(it.get("topic"), str)]
    return aspects_from_list(texts, origin="llm")[:MAX_ASPECTS]


def generate_aspects(llm: JSONGenerator, query: str) -> list[Aspect]:
    """ICAT-A: T(q) generated by the LLM from the query alone (no ground truth in the prompt:
    the repo's leak, seed 004 §5.7, is avoided)."""
    return parse_aspects(llm.generate_json(aspects_prompt(query), ASPECTS_SCHEMA))


# --------------------------------------------------------------------------- alignment


@dataclass
class Alignment:
    """claim index → aspect ids, how it was made, and any rejected LLM output."""

    claim_aspects: dict[int, set[int]]
    method: str  # "llm" | "embedding" | "source"
    rejected: list[str] = field(default_factory=list)
    raw: Any = None

    def to_json(self) -> dict:
        return {
            "claim_aspects": {str(k): sorted(v) for k, v in sorted(self.claim_aspects.items())},
            "method": self.method, "rejected": self.rejected, "raw": self.raw,
        }

    @classmethod
    def from_json(cls, d: Mapping) -> Alignment:
        return cls({int(k): set(v) for k, v in d.get("claim_aspects", {}).items()}, d.get("method", "?"),
                   list(d.get("rejected", [])), d.get("raw"))


class AlignmentOutputError(ValueError):
    """The LLM's alignment referred to aspects or facts that do not exist (strict mode)."""


def alignment_prompt(query: str, aspects: Sequence[Aspect], facts: Sequence[str]) -> str:
    """ICAT-S/A alignment prompt (repo wording, condensed in seed 004 §5.5): the query, the
    numbered aspects, then the numbered **supported** facts. Only the query text goes in —
    never a ground-truth record (§5.7)."""
    topics = "\n".join(f"{a.id} : {a.text}" for a in aspects)
    numbered = "\n".join(f"{i} : {f}" for i, f in enumerate(facts, start=1))
    return (
        f'given this query "{query}", the following list of subtopics:\n{topics}\n\n'
        "return the subtopics that are covered in the given text below with a list of facts, mention each "
        "subtopic only once with a list of fact numbers for each subtopic, the fact numbers should reference "
        'the most relevant facts that support the subtopic, use this jsonl format {"topic_id": ..., '
        '"evidence": [fact_number, ...]}, nothing else in your response\n\n'
        f"facts:\n{numbered}"
    )


def alignment_schema(n_aspects: int, n_facts: int) -> dict:
    """The constrained output: at most one entry per aspect, at most every fact per entry —
    bounded, so a small model cannot loop until it runs out of tokens."""
    return {
        "type": "array", "maxItems": n_aspects,
        "items": {
            "type": "object",
            "properties": {"topic_id": {"type": "integer"},
                           "evidence": {"type": "array", "items": {"type": "integer"}, "maxItems": n_facts}},
            "required": ["topic_id", "evidence"],
        },
    }


def validate_alignment(raw: Any, aspect_ids: Sequence[int], n_facts: int, strict: bool = False) -> Alignment:
    """Apply ICAT's parsing rules strictly (seed 004 §5.5): an entry is kept only if its
    ``topic_id`` is a known aspect id not seen before and its ``evidence`` list holds at
    least one valid fact number (1..n_facts: the facts listed in the prompt, i.e. the
    supported claims — not all claims, the repo's bug §5.7). Invalid fact numbers inside a
    kept entry are dropped. Every rejection is recorded; ``strict`` raises on the first.
    Returns fact index (0-based) → aspect ids."""
    known = set(aspect_ids)
    out: dict[int, set[int]] = {}
    rejected: list[str] = []
    seen: set[int] = set()

    def reject(why: str) -> None:
        if strict:
            raise AlignmentOutputError(why)
        rejected.append(why)

    for item in _json_items(raw, "topic_id"):
        if not isinstance(item, dict):
            reject(f"not an object: {item!r}")
            continue
        tid, evidence = item.get("topic_id"), item.get("evidence")
        if isinstance(tid, str) and tid.strip().isdigit():
            tid = int(tid)
        if not isinstance(tid, int) or isinstance(tid, bool) or tid not in known:
            reject(f"unknown aspect id {tid!r}")
            continue
        if tid in seen:
            reject(f"aspect id {tid} repeated")
            continue
        if not isinstance(evidence, list) or not evidence:
            reject(f"aspect {tid}: empty or missing evidence")
            continue
        good = [n for n in evidence if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= n_facts]
        bad = [n for n in evidence if n not in good]
        if bad:
            reject(f"aspect {tid}: unknown fact numbers {bad}")
        if not good:
            continue
        seen.add(tid)
        for n in good:
            out.setdefault(n - 1, set()).add(tid)
    return Alignment(out, "llm", rejected, raw if isinstance(raw, str | list | dict) else str(raw))


def align_llm(
    llm: JSONGenerator, query: str, aspects: Sequence[Aspect], claims: Sequence[str], supported: Sequence[bool],
    strict: bool = False,
) -> Alignment:
    """ICAT-S/A: the LLM maps the supported claims to aspects; indices are mapped back to
    the response's claim indices."""
    idx = [i for i, ok in enumerate(supported) if ok]
    if not idx or not aspects:
        return Alignment({}, "llm")
    raw = llm.generate_json(alignment_prompt(query, aspects, [claims[i] for i in idx]), alignment_schema(len(aspects), len(idx)))
    al = validate_alignment(raw, [a.id for a in aspects], len(idx), strict)
    al.claim_aspects = {idx[k]: v for k, v in al.claim_aspects.items()}
    return al


def align_by_embedding(
    encode: Callable[[list[str]], np.ndarray], aspects: Sequence[Aspect], claims: Sequence[str],
    query: str | None = None, threshold: float = EMBED_THRESHOLD,
) -> Alignment:
    """The offline default rule [derived]: each claim covers the one aspect whose text —
    prefixed with the query, "q: a" — is most similar to it (cosine of L2-normalised
    all-MiniLM-L6-v2 vectors), when that cosine is at least ``threshold`` (0.4).

    Why this rule: bare aspect phrases barely resemble claims ("Marie Curie was born in
    Warsaw" ↔ "early life and education": cosine 0.08), so a fixed cosine cut-off on them
    fails; prefixed with the query, the claims' best aspect was right for 11 of 12 claims on
    two hand-made examples (Curie, Paris; the miss: "born in Warsaw" → "death and legacy"),
    and an off-topic claim ("The Eiffel Tower is in Paris." under Curie) stays below 0.2.
    No human coverage labels exist here (ICAT's TREC judgements are not public, seed 004
    §5.6), so this is a rough stand-in for the paper's LLM alignment, one aspect per claim.
    Every claim is aligned, supported or not, so coverage can be recomputed when verdicts
    change; coverage itself counts only supported claims."""
    if not aspects or not claims:
        return Alignment({}, "embedding")
    texts = [f"{query}: {a.text}" if query else a.text for a in aspects]
    vecs = np.asarray(encode(texts + list(claims)), dtype=np.float32)
    sims = vecs[len(aspects):] @ vecs[: len(aspects)].T
    out = {}
    for i, row in enumerate(sims):
        best = int(np.argmax(row))
        if row[best] >= threshold:
            out[i] = {aspects[best].id}
    return Alignment(out, "embedding", raw={"threshold": threshold, "query": query,
                                            "similarities": np.round(sims, 4).tolist()})


def align_by_source_labels(claim_doc_labels: Mapping[int, Iterable[str]], aspects: Sequence[Aspect]) -> Alignment:
    """ICAT-M (seed 004 §5.2): a supported claim covers every aspect its deciding document
    (the first entailing one) is labelled with. Labels match aspect texts case-insensitively."""
    by_text = {a.text.lower(): a.id for a in aspects}
    out = {}
    for i, labels in claim_doc_labels.items():
        ids = {by_text[x.lower()] for x in labels if x.lower() in by_text}
        if ids:
            out[i] = ids
    return Alignment(out, "source")


# --------------------------------------------------------------------------- runs (stored rows)


def run_outcomes(results: Sequence[Mapping]) -> list[ClaimOutcome]:
    """``store.runs.run_results`` rows → :class:`ClaimOutcome` (checkable, verdict, note)."""
    return [ClaimOutcome(bool(r["checkable"]), r.get("verdict"), r.get("note")) for r in results]


def icat_from_detail(detail: Mapping, results: Sequence[Mapping], beta: float | None = None) -> dict:
    """Recompute ICAT from a stored ``icat`` detail (aspects + alignment, by claim idx) and
    the run's current verdicts; no model call. Claims = the checkable, verified ones."""
    aspects = [Aspect(**a) for a in detail.get("aspects", [])]
    beta = check_beta(detail.get("beta", 1.0) if beta is None else beta)
    alignment = Alignment.from_json(detail.get("alignment", {}))
    rows = [r for r in results if r["checkable"] and r.get("verdict")]
    supported = [r["verdict"] == "supported" for r in rows]
    by_pos = {pos: alignment.claim_aspects.get(r["idx"], set()) for pos, r in enumerate(rows)}
    s = icat_score(supported, by_pos, aspects, beta)
    out = dict(detail)  # inputs (aspects, alignment, query) stay; computed values beside them
    out.update(factuality=s.factuality, coverage=s.coverage, icat=s.icat, beta=s.beta, n_claims=s.claims,
               n_supported=s.supported, n_aspects=s.aspects, covered=list(s.covered), gaps=list(s.gaps))
    return out


def icat_detail(query: str | None, aspects: Sequence[Aspect], alignment: Alignment, results: Sequence[Mapping],
                beta: float = 1.0) -> dict:
    """The ``icat`` score detail for a run: inputs (aspects, alignment by claim idx, β) and
    the computed values. ``alignment`` is indexed by position in ``results``; stored by idx."""
    by_idx = Alignment({results[i]["idx"]: s for i, s in alignment.claim_aspects.items()}, alignment.method,
                       alignment.rejected, alignment.raw)
    base = {"query": query, "aspects": [asdict(a) for a in aspects], "alignment": by_idx.to_json(),
            "beta": check_beta(beta)}
    return icat_from_detail(base, results)


def run_scores(results: Sequence[Mapping], stored: Mapping[str, Mapping]) -> dict[str, tuple[float | None, dict]]:
    """Every score kind computable for a run from its stored rows: ``factual_precision``
    always; ``icat`` when aspects and an alignment were stored for it. kind → (value, detail)."""
    fp = answer_precision(run_outcomes(results))
    detail = {
        "factual_precision": fp.precision,
        "claims": len(results), "checkable": sum(1 for r in results if r["checkable"]),
        "verdicts": fp.verdicts, "supported": fp.supported, "verified": fp.checkable, "pending": fp.pending,
        "abstentions": fp.abstentions, "not_checkable": fp.not_checkable, "abstained": fp.abstained,
    }
    out: dict[str, tuple[float | None, dict]] = {"factual_precision": (fp.precision, detail)}
    icat = (stored.get(ICAT_KIND) or {}).get("detail")
    if icat and icat.get("aspects") is not None:
        d = icat_from_detail(icat, results)
        out[ICAT_KIND] = (d["icat"], d)
    return out


# --------------------------------------------------------------------------- runs (database)


class LLMJSONAdapter:
    """models.llm.LLM (chat messages) → :class:`JSONGenerator` (one user turn, greedy,
    schema-constrained; seed 004 §5.5 decoding: temperature 0, up to 2048 new tokens)."""

    def __init__(self, llm: Any, max_tokens: int = 2048) -> None:
        self.llm, self.max_tokens = llm, max_tokens

    def generate_json(self, prompt: str, schema: dict) -> Any:
        """An unusable answer (cut off) becomes a model error: one line, exit 5 in the CLI.

        The prompt carries the user's query and the answer's claims (untrusted text) in the
        repo's verbatim ICAT wording, so they are neutralised rather than fenced: no chat-turn
        marker or fence run written in them survives (models.llm.neutralise), and the output
        is schema-constrained, so nothing in them can end the turn or the JSON early."""
        from models.llm import LLMOutputError, neutralise
        from models.registry import ModelError

        try:
            return self.llm.generate_json([("user", neutralise(prompt))], schema, max_tokens=self.max_tokens)
        except LLMOutputError as exc:
            raise ModelError(f"the LLM's ICAT answer is unusable: {exc}") from exc


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
    :meth:`core.pipeline.Pipeline.score` calls recompute it from the stored alignment."""
    from store import runs as rq
    from store.db import write_tx

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
