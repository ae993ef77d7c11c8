"""Structured support (PeopleProfiles, seed 003): how well a document's lead is grounded in
its body, and its body in the cited sources.

Input: JSON with ``lead`` (a string or a list of sentences), ``body`` (sections, each
``{"title": …, "sentences": […]}`` with ``[n]`` citation markers, or a list of sentences)
and ``sources`` (``{"1": "text" | {"text": …, "url": …}}``; a source without text is
unavailable). See :func:`parse_document`.

1. **Internal support**: each lead claim is verified against the body sentences (every
   sentence, section passages, and sets of ≤ 3 sentences: seed 003 §4.2 step 5, "choose ≤ 3
   evidence sentences"); its evidence set B = the sentences of the deciding unit.
2. **External support**: each body claim is verified against the sentences of the sources
   its sentence cites. Body claims of uncited sentences get no score (NULL).
3. **Signed score** s ∈ [−1, 1] = P(entail) − P(contradict) of the deciding evidence
   (the verifier's support; seed 003 §4.3 scale, unsupported ⇔ s ≤ 0).
4. **Propagation** (seed 003 §4.4, exact): per body sentence b with body claims c_1..c_m,
   score(b) = mean_i s_i or Π_i max(s_i, 0) (clipping for the product only); the lead
   claim's overall score aggregates score(b) over B by mean or by product (product: negative
   sentence scores clipped to 0 there too, [derived]). Four combinations. A lead claim whose
   evidence sentences carry no scored citation does not ground out: NULL, not 0. Body
   sentences in B without a score are left out of the aggregate [derived].
5. **Share unsupported** = claims with s ≤ threshold (0) over scored claims, for lead
   claims (paper: 19.3 % on dev) and body claims (26.5 %).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.decompose.base import Decomposer
from core.decompose.citations import find_markers, strip_markers
from core.errors import InputError
from core.verify.verifier import PassageEvidence, Verifier
from models.nlp import SentenceSplitter

RULES = ("mean", "product")
UNSUPPORTED_AT = 0.0  # seed 003 §4.3: unsupported ⇔ score ≤ 0


# --------------------------------------------------------------------------- propagation (pure)


def sentence_score(scores: Sequence[float], rule: str) -> float | None:
    """score(b) from its body claims' scores: mean, or Π max(s, 0) (§4.4). None when b has
    no scored claim (it does not ground out)."""
    if rule not in RULES:
        raise InputError(f"unknown propagation rule {rule!r} (mean or product)")
    if not scores:
        return None
    if rule == "mean":
        return sum(scores) / len(scores)
    return math.prod(max(s, 0.0) for s in scores)


def propagate(evidence: Sequence[Sequence[float]], sentence_rule: str = "mean", set_rule: str = "mean") -> float | None:
    """A lead claim's overall score from its evidence set B (per body sentence b, the scores
    of b's body claims): score(b) by ``sentence_rule``, then over B by ``set_rule``. NULL
    (None) when no b in B has a scored claim."""
    per_b = [v for v in (sentence_score(s, sentence_rule) for s in evidence) if v is not None]
    if not per_b:
        return None
    if set_rule not in RULES:
        raise InputError(f"unknown propagation rule {set_rule!r} (mean or product)")
    return sum(per_b) / len(per_b) if set_rule == "mean" else math.prod(max(v, 0.0) for v in per_b)


def all_propagations(evidence: Sequence[Sequence[float]]) -> dict[str, float | None]:
    """The four combinations, keyed ``sentence-set`` (e.g. ``product-mean``)."""
    return {f"{a}-{b}": propagate(evidence, a, b) for a in RULES for b in RULES}


def share_unsupported(scores: Sequence[float | None], at: float = UNSUPPORTED_AT) -> float | None:
    """Claims with a score ≤ ``at`` over claims with a score (None when none has one)."""
    scored = [s for s in scores if s is not None]
    return sum(s <= at for s in scored) / len(scored) if scored else None


# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class BodySentence:
    id: int  # position in the whole body
    section: int
    text: str  # markers stripped
    citations: tuple[int, ...]


@dataclass(frozen=True)
class StructuredDoc:
    lead: str
    body: list[BodySentence]
    sections: list[str]
    sources: dict[int, str | None]


def _sentences(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return value
    raise InputError(f"{where} must be a string or a list of strings")


def parse_document(obj: Any, where: str = "document") -> StructuredDoc:
    """Validate the JSON document (see the module docstring); errors name the field."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object with lead, body and sources")
    if "lead" not in obj or "body" not in obj:
        raise InputError(f"{where}: needs the fields 'lead' and 'body'")
    lead = " ".join(_sentences(obj["lead"], f"{where}: 'lead'"))
    body_raw = obj["body"]
    if not isinstance(body_raw, list) or not body_raw:
        raise InputError(f"{where}: 'body' must be a non-empty list of sections or sentences")
    if all(isinstance(s, str) for s in body_raw):
        body_raw = [{"title": "", "sentences": body_raw}]
    body, titles = [], []
    for k, sec in enumerate(body_raw):
        if not isinstance(sec, dict) or "sentences" not in sec:
            raise InputError(f"{where}: body section {k + 1} needs 'sentences'")
        titles.append(str(sec.get("title") or ""))
        for s in _sentences(sec["sentences"], f"{where}: body section {k + 1} 'sentences'"):
            ids = tuple(dict.fromkeys(i for m in find_markers(s) for i in m.ids))
            body.append(BodySentence(len(body), k, " ".join(strip_markers(s)[0].split()), ids))
    raw_sources = obj.get("sources") or {}
    if isinstance(raw_sources, list):
        raw_sources = {str(s.get("id", i + 1)) if isinstance(s, dict) else str(i + 1): s for i, s in enumerate(raw_sources)}
    if not isinstance(raw_sources, dict):
        raise InputError(f"{where}: 'sources' must be an object {{id: text}} or a list")
    sources: dict[int, str | None] = {}
    for key, val in raw_sources.items():
        try:
            n = int(str(key).strip("[] "))
        except ValueError:
            raise InputError(f"{where}: source id {key!r} is not a number") from None
        text = val.get("text") if isinstance(val, dict) else val
        sources[n] = text.strip() if isinstance(text, str) and text.strip() else None
    return StructuredDoc(lead, body, titles, sources)


def load_document(path: str | Path) -> StructuredDoc:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file", path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path, exc.lineno) from None
    return parse_document(obj, str(path))


# --------------------------------------------------------------------------- verification


@dataclass
class BodyClaim:
    sentence: int  # BodySentence.id
    text: str
    citations: tuple[int, ...]
    score: float | None  # None: uncited, or no cited source available
    label: str | None
    evidence: str | None = None  # the deciding source text


@dataclass
class LeadClaim:
    idx: int
    text: str
    score: float
    label: str
    evidence_sentences: tuple[int, ...]  # B: body sentence ids of the deciding unit
    propagated: dict[str, float | None] = field(default_factory=dict)

    @property
    def grounds_out(self) -> bool:
        return any(v is not None for v in self.propagated.values())


@dataclass
class StructuredReport:
    lead: list[LeadClaim]
    body: list[BodyClaim]
    unsupported_lead: float | None
    unsupported_body: float | None
    grounded_out: float | None  # share of lead claims that ground out (paper: 18 %)
    mean_propagated: dict[str, float | None]  # over the lead claims that ground out


def _claims(text: str, decomposer: Decomposer | None, splitter: SentenceSplitter) -> list[str]:
    if decomposer is not None:
        return [c.text for c in decomposer.decompose(text) if c.checkable]
    return [text[s:e] for s, e in splitter.split([text])[0]]


def _deciding_sentences(verdict, passages: Sequence[PassageEvidence], first_id: dict[int, int]) -> tuple[int, ...]:
    """B for a lead claim: the deciding unit's sentences (a passage unit: its ≤ 3 sentences
    that entail most), as body sentence ids."""
    d = verdict.deciding
    if d is None:
        return ()
    pid = d.unit.passage_id
    if d.unit.kind == "sentence":
        return (first_id[pid] + d.unit.sentences[0],)
    if d.unit.kind == "set":
        return _set_ids(d, passages, first_id)
    sents = [j for j in verdict.judgements if j.unit.kind == "sentence" and j.unit.passage_id == pid]
    sents.sort(key=lambda j: -j.probs[0])
    return tuple(sorted(first_id[pid] + j.unit.sentences[0] for j in sents[:3]))


def _set_ids(d, passages: Sequence[PassageEvidence], first_id: dict[int, int]) -> tuple[int, ...]:
    """Body ids of a set unit's sentences (matched by text: a set can span sections)."""
    ids = []
    rest = d.unit.text
    for p in passages:
        for i, s in enumerate(p.sentences):
            if s and s in rest:
                ids.append(first_id[p.passage_id] + i)
    return tuple(sorted(set(ids)))[:3]


def verify_document(
    doc: StructuredDoc, verifier: Verifier, splitter: SentenceSplitter, decomposer: Decomposer | None = None,
    unsupported_at: float = UNSUPPORTED_AT,
) -> StructuredReport:
    """Internal and external support, propagation and shares (module docstring)."""
    body_claims: list[BodyClaim] = []
    source_ev: dict[int, PassageEvidence] = {}
    for n, text in doc.sources.items():
        if text:
            source_ev[n] = PassageEvidence(n, n, tuple(text[s:e] for s, e in splitter.split([text])[0]), text)
    for b in doc.body:
        for text in _claims(b.text, decomposer, splitter):
            ev = [source_ev[n] for n in b.citations if n in source_ev]
            if not ev:
                body_claims.append(BodyClaim(b.id, text, b.citations, None, None))
                continue
            v = verifier.verify(text, ev)
            body_claims.append(BodyClaim(b.id, text, b.citations, v.support, v.label,
                                         v.deciding.unit.text if v.deciding else None))
    by_sentence: dict[int, list[float]] = {}
    for c in body_claims:
        if c.score is not None:
            by_sentence.setdefault(c.sentence, []).append(c.score)
    passages, first_id = [], {}
    for k in range(len(doc.sections)):
        sents = [b for b in doc.body if b.section == k]
        if sents:
            first_id[k] = sents[0].id
            passages.append(PassageEvidence(k, k, tuple(b.text for b in sents), " ".join(b.text for b in sents),
                                            doc.sections[k]))
    lead_claims = []
    for i, text in enumerate(_claims(doc.lead, decomposer, splitter)):
        v = verifier.verify(text, passages)
        B = _deciding_sentences(v, passages, first_id)
        lc = LeadClaim(i, text, v.support, v.label, B)
        lc.propagated = all_propagations([by_sentence.get(b, []) for b in B])
        lead_claims.append(lc)
    grounded = [c for c in lead_claims if c.grounds_out]
    means = {
        k: (sum(c.propagated[k] for c in grounded if c.propagated[k] is not None) / len(grounded)) if grounded else None
        for k in all_propagations([])
    }
    return StructuredReport(
        lead=lead_claims, body=body_claims,
        unsupported_lead=share_unsupported([c.score for c in lead_claims], unsupported_at),
        unsupported_body=share_unsupported([c.score for c in body_claims], unsupported_at),
        grounded_out=len(grounded) / len(lead_claims) if lead_claims else None,
        mean_propagated=means,
    )
