"""Accuracy of context usage (ACU): does a generative verifier move towards the evidence?

Seed 001 (DRUID, Hagström et al.) §5.2, Eq. 1–2; definitions and checks in
``../shared/docs/seeds.md`` §2.3. A model answers True / None / False for a claim twice:
with the claim only (C) and with the claim plus one evidence piece (C, E). For each answer
token t the change in probability is rescaled by the room it had to move (Eq. 1), signed by
the direction the evidence stance makes desirable (Table D), and summed (Eq. 2):

* ``ΔP(t) = (P(t|C,E) − P(t|C)) / (1 − P(t|C))`` if the probability rose, else
  ``(P(t|C,E) − P(t|C)) / P(t|C)``; ΔP ∈ [−1, 1] (:func:`delta_p`).
* ``ACU = Σ_t D(t, stance) · ΔP(t)``. Eq. 2 prints a 1/|T| factor, but every number the
  paper reports is the plain SUM in [−3, 3] (Figure 6's caption gives ±3 as the extremes,
  and Table 15 row 1 recomputes to 1.53 with the sum vs the printed 1.51; seeds.md §2.3
  "Scale caveat"). :class:`ContextUsage` therefore stores ``acu_sum`` as the headline value,
  comparable with the paper's tables, and ``acu_mean = acu_sum / 3`` only as a secondary one.
* Context repulsion: ACU < 0, the probabilities moved away from the evidence stance (§5.3).
* Memory conflict: the claim-only prediction and the evidence stance are both decisive
  (True vs refutes, or False vs supports) and disagree; "None" on either side is never a
  conflict (§5.3 and the Table 21 caption).

The probabilities come from next-token log-probabilities at the answer position, as
:mod:`models.llm_judge` reads its labels: each answer word is scored with and without a
leading space ([repo]: the DRUID code scores both variants), the probabilities of the
distinct first tokens of a word's variants are summed, and the three words are renormalised
to sum to 1 ([derived]: the paper's examples sum to ≈ 1 over T).

Prompts are the paper's (Tables 12–14, App. J) in their True / False / None answer-word form
(the Pythia prompts; Llama's 3-shot evidence prompt answers Support / Refute instead). The
claim, the claimant and the evidence are untrusted data: they go in as :class:`Fenced` parts
so nothing inside them can fake a chat turn or end its fence (models/llm.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import InputError
from models.llm import FENCE_RULE, Fenced, Message, Part

if TYPE_CHECKING:
    from models.llm import LLM

# ------------------------------------------------------------------ stances and directions

SUPPORTS = "supports"
INSUFFICIENT_SUPPORTS = "insufficient-supports"
INSUFFICIENT_NEUTRAL = "insufficient-neutral"
INSUFFICIENT_CONTRADICTORY = "insufficient-contradictory"
INSUFFICIENT_REFUTES = "insufficient-refutes"
REFUTES = "refutes"

# DRUID's six-way evidence stance, in the paper's order (seed 001 App. M.1; Table 22's rows read bottom-up).
STANCES = (
    SUPPORTS, INSUFFICIENT_SUPPORTS, INSUFFICIENT_NEUTRAL, INSUFFICIENT_CONTRADICTORY, INSUFFICIENT_REFUTES, REFUTES,
)
# Table 22's row order (refutes first), used by reports so they read like the paper.
TABLE22_ORDER = (
    REFUTES, INSUFFICIENT_REFUTES, INSUFFICIENT_CONTRADICTORY, INSUFFICIENT_NEUTRAL, INSUFFICIENT_SUPPORTS, SUPPORTS,
)
STANCES_3 = ("supports", "insufficient", "refutes")

# The answer tokens T = {True, None, False} (Eq. 1); dict keys everywhere.
ANSWERS = ("True", "None", "False")

# Table D (seeds.md §2.3, derived from the arrows of seed 001 Table 22): the desirable sign of
# ΔP(t) for each evidence stance. Every ACU value in Table 22 reproduces with it.
DIRECTION: dict[str, dict[str, int]] = {
    REFUTES: {"False": +1, "None": -1, "True": -1},
    INSUFFICIENT_REFUTES: {"False": +1, "None": +1, "True": -1},
    INSUFFICIENT_CONTRADICTORY: {"False": -1, "None": +1, "True": -1},
    INSUFFICIENT_NEUTRAL: {"False": -1, "None": +1, "True": -1},
    INSUFFICIENT_SUPPORTS: {"False": -1, "None": +1, "True": +1},
    SUPPORTS: {"False": -1, "None": -1, "True": +1},
}

# The decisive answer each decisive stance calls for (memory conflict only looks at these two).
_DECISIVE_STANCE_ANSWER = {SUPPORTS: "True", REFUTES: "False"}

# Labels accepted by normalise_stance: key = lower case with "_" and runs of space/"-" as "-".
_STANCE_ALIASES: dict[str, str] = {
    **{s: s for s in STANCES},
    # 3-way names (the collapse) and their inverse: plain "insufficient" is the neutral case.
    "insufficient": INSUFFICIENT_NEUTRAL,
    # common dataset labels (FEVER, Climate-FEVER, VitaminC, SciFact, NLI)
    "support": SUPPORTS, "supported": SUPPORTS, "entailment": SUPPORTS, "entails": SUPPORTS, "entail": SUPPORTS,
    "refute": REFUTES, "refuted": REFUTES, "contradict": REFUTES, "contradicts": REFUTES,
    "contradiction": REFUTES, "contradicted": REFUTES,
    "not-enough-info": INSUFFICIENT_NEUTRAL, "not-enough-information": INSUFFICIENT_NEUTRAL,
    "nei": INSUFFICIENT_NEUTRAL, "neutral": INSUFFICIENT_NEUTRAL, "noinfo": INSUFFICIENT_NEUTRAL,
    "insufficient-contradicting": INSUFFICIENT_CONTRADICTORY, "insufficient-support": INSUFFICIENT_SUPPORTS,
    "insufficient-refute": INSUFFICIENT_REFUTES,
}


def collapse(stance: str) -> str:
    """The 3-way stance (supports / insufficient / refutes) of a six-way one (seeds.md §2.1 item 1)."""
    stance = normalise_stance(stance)
    return stance if stance in (SUPPORTS, REFUTES) else "insufficient"


def normalise_stance(text: str) -> str:
    """A six-way DRUID stance from any accepted spelling.

    Accepted: the six stances, the 3-way names (``insufficient`` → ``insufficient-neutral``,
    whose direction row asks for "None", the answer an insufficient piece calls for) and the
    usual dataset labels (SUPPORTS / SUPPORT / ENTAILMENT, REFUTES / CONTRADICT /
    CONTRADICTION, NOT_ENOUGH_INFO / NEI / NEUTRAL); case, ``_`` and spaces are ignored.
    Anything else raises :class:`InputError`: guessing a stance would silently flip ACU's sign.
    """
    if not isinstance(text, str):
        raise InputError(f"stance must be a string, got {type(text).__name__}")
    key = "-".join(text.strip().lower().replace("_", " ").replace("-", " ").split())
    stance = _STANCE_ALIASES.get(key)
    if stance is None:
        raise InputError(
            f"unknown stance {text!r} (expected one of {', '.join(STANCES)}; the 3-way 'insufficient'; "
            "or SUPPORTS / REFUTES / NOT_ENOUGH_INFO / NEI / CONTRADICT)"
        )
    return stance


def stance_from_nli(probs: Sequence[float]) -> str:
    """A stance from the project's NLI verifier output, for evidence with no annotated stance.

    ``probs`` is in ``models.nli.LABELS`` order (entailment, neutral, contradiction); the
    argmax maps entailment → supports, contradiction → refutes and neutral →
    insufficient-neutral (an NLI model has no finer "insufficient" grades). Ties go to the
    earlier label, as numpy's argmax."""
    values = [float(p) for p in probs]
    if len(values) != 3 or not all(math.isfinite(p) for p in values):
        raise ValueError(f"expected 3 finite probabilities (entailment, neutral, contradiction), got {values}")
    best = max(range(3), key=lambda i: (values[i], -i))
    return (SUPPORTS, INSUFFICIENT_NEUTRAL, REFUTES)[best]


# ------------------------------------------------------------------ Eq. 1 and Eq. 2


def delta_p(p_c: float, p_ce: float, eps: float = 1e-9) -> float:
    """Eq. 1 of seed 001 §5.2: the change P(t|C) → P(t|C,E), rescaled by the room to move.

    A rise is divided by 1 − P(t|C) (the most it could rise), a fall by P(t|C) (the most it
    could fall), so ΔP ∈ [−1, 1] whatever the starting point. Both denominators are floored
    at ``eps`` ([derived], seeds.md §2.3): P(t|C) can be exactly 0 or 1, and the numerator
    is then at most the denominator, so the guard never pushes the value outside [−1, 1]."""
    for name, p in (("p_c", p_c), ("p_ce", p_ce)):
        if not (math.isfinite(p) and -1e-6 <= p <= 1 + 1e-6):
            raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    p_c, p_ce = min(1.0, max(0.0, p_c)), min(1.0, max(0.0, p_ce))
    diff = p_ce - p_c
    if p_ce >= p_c:
        return diff / max(1.0 - p_c, eps)
    return diff / max(p_c, eps)


def _prediction(probs: Mapping[str, float]) -> str:
    """The argmax answer; ties resolve in ANSWERS order (True, None, False)."""
    return max(ANSWERS, key=lambda t: (probs[t], -ANSWERS.index(t)))


def is_memory_conflict(claim_only_prediction: str, stance: str) -> bool:
    """Seed 001 §5.3 / Table 21: the parametric (claim-only) prediction and the evidence
    stance are both decisive and disagree. Only True vs refutes and False vs supports count;
    a "None" prediction and any insufficient-* stance never do."""
    wanted = _DECISIVE_STANCE_ANSWER.get(normalise_stance(stance))
    return wanted is not None and claim_only_prediction in ("True", "False") and claim_only_prediction != wanted


@dataclass(frozen=True)
class ContextUsage:
    """ACU of one (claim, evidence, stance) sample (seed 001 §5.2 Eq. 1–2; seeds.md §2.3).

    ``p_claim`` = P(t|C), ``p_evidence`` = P(t|C,E) and ``delta`` = ΔP(t), each a dict over
    "True" / "None" / "False". ``acu_sum`` is on the paper's reported scale [−3, 3];
    ``acu_mean`` = acu_sum / 3 is Eq. 2 as printed, kept only as a secondary value."""

    p_claim: dict[str, float]
    p_evidence: dict[str, float]
    stance: str
    delta: dict[str, float]
    acu_sum: float
    acu_mean: float
    repulsion: bool
    memory_conflict: bool

    @property
    def claim_prediction(self) -> str:
        """The claim-only (parametric) answer: argmax of P(t|C)."""
        return _prediction(self.p_claim)

    @property
    def evidence_prediction(self) -> str:
        """The answer with the evidence: argmax of P(t|C,E)."""
        return _prediction(self.p_evidence)

    def as_dict(self) -> dict[str, Any]:
        return {
            "p_claim": dict(self.p_claim),
            "p_evidence": dict(self.p_evidence),
            "stance": self.stance,
            "delta": dict(self.delta),
            "acu_sum": self.acu_sum,
            "acu_mean": self.acu_mean,
            "repulsion": self.repulsion,
            "memory_conflict": self.memory_conflict,
            "claim_prediction": self.claim_prediction,
            "evidence_prediction": self.evidence_prediction,
        }


def _check_probs(name: str, probs: Mapping[str, float]) -> dict[str, float]:
    missing = [t for t in ANSWERS if t not in probs]
    if missing:
        raise ValueError(f"{name} lacks {missing}: expected probabilities for {', '.join(ANSWERS)}")
    return {t: float(probs[t]) for t in ANSWERS}


def context_usage(p_claim: Mapping[str, float], p_with_evidence: Mapping[str, float], stance: str) -> ContextUsage:
    """ACU of one sample from its two probability triples (pure; seed 001 §5.2 Eq. 1–2).

    The sum over t of D(t, stance) · ΔP(t) (Table D, :data:`DIRECTION`) is the headline
    ``acu_sum`` in [−3, 3]; repulsion is ``acu_sum < 0``; memory conflict compares the
    claim-only argmax with the stance (:func:`is_memory_conflict`)."""
    stance = normalise_stance(stance)
    pc = _check_probs("p_claim", p_claim)
    pe = _check_probs("p_with_evidence", p_with_evidence)
    delta = {t: delta_p(pc[t], pe[t]) for t in ANSWERS}
    acu = sum(DIRECTION[stance][t] * delta[t] for t in ANSWERS)
    return ContextUsage(
        p_claim=pc, p_evidence=pe, stance=stance, delta=delta, acu_sum=acu, acu_mean=acu / len(ANSWERS),
        repulsion=acu < 0, memory_conflict=is_memory_conflict(_prediction(pc), stance),
    )


# ------------------------------------------------------------------ prompts (seed 001 Tables 12–14)

PROMPT_VERSION = "druid-001-true-none-false-v1"

SYSTEM = FENCE_RULE  # the paper has no system prompt; ours only says that fenced text is data

# Claim only (Table 12), 3-shot and 0-shot; the 3-shot wording is the Pythia row (True/False/None).
CLAIM_INSTRUCTION_3SHOT = "Are the following claims True or False? Answer None if you are not sure or cannot answer."
CLAIM_INSTRUCTION_0SHOT = "Is the following claim True or False? Answer None if you are not sure or cannot answer."
# Claim + evidence: the True/False/None 3-shot prompt (Pythia, printed under Table 14 in the seed
# text) and the shared 0-shot prompt; Llama's 3-shot prompt (Table 13) answers Support/Refute.
EVIDENCE_INSTRUCTION_3SHOT = (
    "Are the claims True or False based on the accompanying evidence? If you are not sure or cannot answer, say None."
)
EVIDENCE_INSTRUCTION_0SHOT = (
    "Based on the provided evidence, is the claim True or False? If you are not sure or cannot answer, say None."
)


@dataclass(frozen=True)
class Shot:
    """One worked example of the 3-shot prompts (trusted text, laid out like the query)."""

    claimant: str
    claim: str
    evidence: str
    answer: str
    claim_only: str | None = None  # the claim in the claim-only prompt when it differs there


_BIDEN = (
    "\u201cOne quarter\u201d of today\u2019s $31.4 trillion federal debt \u201cwas accumulated in the four years "
    "of my predecessor,\u201d Donald Trump."
)
SHOTS = (
    Shot(
        "Joe Biden", _BIDEN,
        "Biden's number is accurate; about one-fourth of the total debt incurred to date came on Trump's watch. "
        "However, assigning debt to a particular president is tricky, because so much of the spending was approved "
        "by decades-old, bipartisan legislation that set the parameters for Social Security and Medicare. A different "
        "calculation shows more debt stemming from former President Barack Obama, with whom Biden served as vice "
        "president.",
        "True",
    ),
    Shot(
        "Viral post",
        "the new coronavirus has HIV proteins that indicate it was genetically modified in a laboratory.",
        "Microbiologists say the spike proteins found in the new coronavirus are different from the ones found in "
        "HIV. [...] There is no evidence to suggest the coronavirus was genetically modified.",
        "False",
        claim_only="5G causes cancer.",  # the Pythia claim-only prompt's second example (Table 12)
    ),
    Shot(
        "Sara Daniels", "Blackpink released the single 'You me too' in 2026.",
        "Blackpink released their album 'Born Pink' in 2022.", "None",
    ),
)


def _block(claim: str, evidence: str | None, claimant: str | None, answer: str | None) -> list[Part]:
    """One "Claimant / Claim / Evidence / Answer" block, lines joined by newlines. The paper
    quotes the claim and the evidence; here fences take the place of the quotes (the claimant
    is fenced too: it is dataset text, and unfenced text is tokenised with control tokens on).
    ``answer`` None leaves the Answer line out; "" writes the bare cue "Answer:"."""
    lines: list[list[Part]] = []
    if claimant:
        lines.append(["Claimant: ", Fenced("CLAIMANT", claimant)])
    lines.append(["Claim: ", Fenced("CLAIM", claim)])
    if evidence is not None:
        lines.append(["Evidence: ", Fenced("EVIDENCE", evidence)])
    if answer is not None:
        lines.append([f"Answer: {answer}".rstrip()])
    parts: list[Part] = []
    for i, line in enumerate(lines):
        if i:
            parts.append("\n")
        parts += line
    return parts


def build_messages(
    claim: str, evidence: str | None = None, claimant: str | None = None, *, shots: int = 3, answer_cue: bool = True,
) -> list[Message]:
    """Chat messages for the claim-only (``evidence is None``; Table 12) or claim + evidence
    (Tables 13–14) prompt, 0- or 3-shot.

    One user message holds the instruction, the worked examples and the query, as the paper's
    single-text prompt does; the answer is the first token of the assistant's turn. When the
    claim has no claimant the Claimant lines are dropped — the examples' too ([derived]: the
    paper omits "the 'Claimant' lines" for datasets without claimants, and one layout for
    examples and query is what few-shot prompting relies on). ``answer_cue=False`` leaves out
    the final "Answer:" for base models without a chat template, whose plain layout
    (``LLM.render``) appends it itself."""
    if shots not in (0, 3):
        raise ValueError(f"shots must be 0 or 3 (the paper's prompts), got {shots}")
    claimant = (claimant or "").strip() or None
    with_evidence = evidence is not None
    if with_evidence:
        instruction = EVIDENCE_INSTRUCTION_3SHOT if shots else EVIDENCE_INSTRUCTION_0SHOT
    else:
        instruction = CLAIM_INSTRUCTION_3SHOT if shots else CLAIM_INSTRUCTION_0SHOT
    parts: list[Part] = [instruction, "\n\n"]
    for shot in SHOTS[:shots]:
        shot_claim = shot.claim if with_evidence else (shot.claim_only or shot.claim)
        parts += _block(shot_claim, shot.evidence if with_evidence else None, shot.claimant if claimant else None,
                        shot.answer)
        parts.append("\n\n")
    parts += _block(claim, evidence, claimant, "" if answer_cue else None)
    return [("system", SYSTEM), ("user", parts)]


# ------------------------------------------------------------------ scoring with a local LLM

# Each answer word with and without a leading space ([repo]); a chat model starts its turn
# without a space, a base model after "Answer:" with one.
ANSWER_VARIANTS: dict[str, tuple[str, ...]] = {t: (t, f" {t}") for t in ANSWERS}


class ContextUsageScorer:
    """P(True / None / False) with and without evidence from a local LLM, and their ACU.

    ``llm`` needs ``next_token_logprobs(messages, candidates)``, ``candidate_token(text)`` and
    ``manifest()`` (``models.llm.LLM``). Claim-only probabilities are cached per (claim,
    claimant) on this object: one claim usually has several evidence pieces (≤ 5 in DRUID),
    and P(t|C) does not depend on them."""

    def __init__(self, llm: LLM, shots: int = 3) -> None:
        if shots not in (0, 3):
            raise ValueError(f"shots must be 0 or 3 (the paper's prompts), got {shots}")
        self.llm = llm
        self.shots = shots
        self._claim_cache: dict[tuple[str, str | None], dict[str, float]] = {}
        self._candidates: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def _answer_candidates(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(candidate strings, the answer word each stands for): one string per distinct first
        token. " True" and "True" may share a token (then it is scored once, not twice);
        two different words sharing a token would make the probabilities meaningless."""
        if self._candidates is None:
            owner: dict[int, str] = {}
            strings: list[str] = []
            words: list[str] = []
            for word in ANSWERS:
                for variant in ANSWER_VARIANTS[word]:
                    tok = self.llm.candidate_token(variant)
                    if tok in owner:
                        if owner[tok] != word:
                            raise ValueError(
                                f"answer words {owner[tok]!r} and {word!r} share a first token ({tok}) in this model"
                            )
                        continue
                    owner[tok] = word
                    strings.append(variant)
                    words.append(word)
            self._candidates = (tuple(strings), tuple(words))
        return self._candidates

    def messages(self, claim: str, evidence: str | None = None, claimant: str | None = None) -> list[Message]:
        cue = getattr(self.llm, "has_chat_template", True)
        return build_messages(claim, evidence, claimant, shots=self.shots, answer_cue=bool(cue))

    def probabilities(self, claim: str, evidence: str | None = None, claimant: str | None = None) -> dict[str, float]:
        """P(t|C) (``evidence is None``) or P(t|C,E) over t ∈ {True, None, False}, summing to 1.

        Per word, the probabilities of its variants' distinct first tokens are summed; the
        three sums are renormalised (seeds.md §2.3 [repo] and [derived])."""
        key = (claim, (claimant or "").strip() or None)
        if evidence is None and key in self._claim_cache:
            return dict(self._claim_cache[key])
        strings, words = self._answer_candidates()
        logprobs = [float(x) for x in self.llm.next_token_logprobs(self.messages(claim, evidence, claimant), strings)]
        top = max(logprobs)
        mass = dict.fromkeys(ANSWERS, 0.0)
        for word, lp in zip(words, logprobs, strict=True):
            mass[word] += math.exp(lp - top)
        total = sum(mass.values())
        probs = {t: mass[t] / total for t in ANSWERS}
        if evidence is None:
            self._claim_cache[key] = dict(probs)
        return probs

    def score(self, claim: str, evidence: str, stance: str, claimant: str | None = None) -> ContextUsage:
        """ACU of one (claim, evidence) pair with its annotated (or NLI-derived) stance."""
        stance = normalise_stance(stance)
        p_claim = self.probabilities(claim, None, claimant)
        p_evidence = self.probabilities(claim, evidence, claimant)
        return context_usage(p_claim, p_evidence, stance)

    def manifest(self) -> dict[str, Any]:
        return {**self.llm.manifest(), "shots": self.shots, "prompt_version": PROMPT_VERSION,
                "answer_variants": {t: list(v) for t, v in ANSWER_VARIANTS.items()}}
