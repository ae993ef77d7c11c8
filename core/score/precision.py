"""Factual precision (FActScore; ICAT's factuality, seed 004 §5.3 and §6.5): supported claims
over checkable claims, as pure functions over claim verdicts.

Abstentions are counted apart, as FActScore does: an answer with no checkable claim gets no
precision (``None``, not 0) and is left out of the batch mean, which is reported beside the
share of answers that responded ("% responding").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

VERDICT_LABELS = ("supported", "refuted", "not_enough_info", "conflicting")


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
    note: str | None = None  # why not checkable: "abstention", "question", "fragment", "opinion", "advice"…


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


def run_outcomes(results: Sequence[Mapping]) -> list[ClaimOutcome]:
    """``store.runs.run_results`` rows → :class:`ClaimOutcome` (checkable, verdict, note)."""
    return [ClaimOutcome(bool(r["checkable"]), r.get("verdict"), r.get("note")) for r in results]
