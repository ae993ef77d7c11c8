"""ICAT, as pure functions over claim verdicts (factual precision: core/score/precision.py).

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
verifier. The run-level helpers that read and write the ``scores`` table live in
core/pipeline/stored.py (kind ``icat`` keeps aspects and alignment in its detail JSON).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from core.errors import InputError

MAX_ASPECTS = 10  # ICAT-A: "up to 10" subtopics (seed 004 §5.5)
EMBED_THRESHOLD = 0.4  # cosine, claim ↔ "query: aspect" (all-MiniLM-L6-v2); see align_by_embedding
ASPECT_ORIGINS = ("user", "llm", "source")
ICAT_KIND = "icat"


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


# --------------------------------------------------------------------------- the LLM as a JSON generator


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
