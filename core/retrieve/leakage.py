"""The leakage audit of a query expansion (seed 000 §3.3; seeds.md §1.4, "exact").

Does the LLM's pseudo-document already *contain* the evidence? Seed 000 finds that query
expansion helps mostly on such "matched" claims — the gain is knowledge leakage, not
hypothetical reasoning — and that unmatched claims often fall below the unexpanded
baseline. The algorithm, step by step:

1. segment each generated document into sentences (the paper: spaCy ``en_core_web_lg``;
   here: the installed English pipeline);
2. drop every sentence s with ROUGE-2(s, claim) ≥ 0.95 — a restatement of the claim, not
   knowledge (the paper used rouge-score 0.1.2 and does not name the variant; we use the
   F-measure, seeds.md [derived], with rouge-score's tokenisation and no stemming);
3. label every (evidence e, generated sentence s) pair with NLI, **premise = evidence,
   hypothesis = generated sentence**, as entailment / neutral / contradiction (argmax);
4. the claim is *matched* if any pair is entailment; no sentence left → unmatched.

The premises are the gold evidence sentences in benchmark mode (``eval leakage``); in a run
they are the retrieved evidence the verifier judged, so there "matched" means the expansion
restates what was retrieved (seeds.md §1.4 step 6) — the TUI flags exactly that.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from models.nli import LABELS

ECHO_THRESHOLD = 0.95  # seed 000 §3.3: ROUGE-2(s, claim) ≥ 0.95 → the sentence restates the claim
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """rouge-score 0.1.2's default tokenizer: lower-case, every non-alphanumeric run is a
    separator, no stemming."""
    return [t for t in _NON_ALNUM.sub(" ", text.lower()).split() if t]


def rouge2_f(candidate: str, reference: str) -> float:
    """ROUGE-2 F-measure: clipped bigram overlap; P = overlap / candidate bigrams,
    R = overlap / reference bigrams, F = 2PR / (P + R); 0 when either has no bigram."""
    def bigrams(toks: list[str]) -> Counter:
        return Counter(pairwise(toks))

    c, r = bigrams(rouge_tokens(candidate)), bigrams(rouge_tokens(reference))
    if not c or not r:
        return 0.0
    overlap = sum((c & r).values())
    if overlap == 0:
        return 0.0
    p, rec = overlap / sum(c.values()), overlap / sum(r.values())
    return 2 * p * rec / (p + rec)


@dataclass(frozen=True)
class GeneratedSentence:
    doc_index: int
    sentence_index: int  # within its document, counting dropped sentences too
    text: str
    rouge2: float  # against the claim

    @property
    def echoes_claim(self) -> bool:
        return self.rouge2 >= ECHO_THRESHOLD


@dataclass(frozen=True)
class Premise:
    """One evidence text the generated sentences are checked against; ``ref`` is whatever
    identifies it to the caller (an evidence row id, a corpus doc:sentence id)."""

    ref: object
    text: str


@dataclass(frozen=True)
class PairLabel:
    premise: Premise
    sentence: GeneratedSentence
    label: str  # entailment | neutral | contradiction
    p_entailment: float


@dataclass(frozen=True)
class LeakageResult:
    matched: bool
    sentences: tuple[GeneratedSentence, ...]  # every generated sentence, echoes included
    pairs: tuple[PairLabel, ...]  # every judged pair (echoes excluded)

    @property
    def kept(self) -> list[GeneratedSentence]:
        return [s for s in self.sentences if not s.echoes_claim]

    @property
    def entailed(self) -> list[PairLabel]:
        return [p for p in self.pairs if p.label == "entailment"]


def generated_sentences(documents: Sequence[str], claim: str, splitter) -> list[GeneratedSentence]:
    """Step 1–2 inputs: every sentence of every document with its ROUGE-2 against the claim."""
    out = []
    for d, (doc, spans) in enumerate(zip(documents, splitter.split(documents), strict=True)):
        for i, (a, b) in enumerate(spans):
            text = doc[a:b].strip()
            if text:
                out.append(GeneratedSentence(d, i, text, rouge2_f(text, claim)))
    return out


def pair_label(probs, min_entailment: float = 0.0) -> str:
    """The NLI label of one pair: the argmax (the paper's classifier reading); with
    ``min_entailment`` > 0 an argmax entailment whose P(entailment) falls below it counts as
    neutral. A small local NLI model often puts entailment on top at P ≈ 0.4 for sentences
    that merely share a topic (measured on SciFact dev: docs/benchmarks.md), so runs use the
    verifier's own support threshold and ``eval leakage`` reports both readings."""
    label = LABELS[int(probs.argmax())]
    if label == "entailment" and float(probs[LABELS.index("entailment")]) < min_entailment:
        return "neutral"
    return label


def audit(
    documents: Sequence[str], claim: str, premises: Sequence[Premise], splitter, nli, *, batch_size: int = 32,
    min_entailment: float = 0.0,
) -> LeakageResult:
    """Steps 1–4 for one claim's expansion (see the module docstring; ``min_entailment``:
    :func:`pair_label`)."""
    sentences = generated_sentences(documents, claim, splitter)
    kept = [s for s in sentences if not s.echoes_claim]
    premises = [p for p in premises if p.text.strip()]
    pairs_in = [(p, s) for p in premises for s in kept]
    if not pairs_in:
        return LeakageResult(False, tuple(sentences), ())
    probs = nli.predict([(p.text, s.text) for p, s in pairs_in], batch_size=batch_size)
    pairs = tuple(
        PairLabel(p, s, pair_label(row, min_entailment), float(row[LABELS.index("entailment")]))
        for (p, s), row in zip(pairs_in, probs, strict=True)
    )
    return LeakageResult(any(x.label == "entailment" for x in pairs), tuple(sentences), pairs)
