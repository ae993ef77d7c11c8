"""The verify stage's shared records: the verdict thresholds, defined once.

Every other place that needs a threshold default (the settings, the run options, the CLI)
reads it from :class:`Thresholds`, so a re-fitted value changes in one line.
"""

from __future__ import annotations

from dataclasses import dataclass

SENTENCE_CHOICES = ("lexical", "retrieval")  # Thresholds.sentence_choice


@dataclass(frozen=True)
class Thresholds:
    """Verdict thresholds. Defaults chosen on dev data: ``claimscope eval verdicts`` on
    Climate-FEVER claims (fitted on a seed-0 half, 153 claims; held-out macro-F1 over the
    four verdicts 0.367 vs 0.283 with ICAT's plain 0.5 / 0.5 and conflict 0.8;
    benchmarks/results/verdicts_climate_fever.json). ICAT's own score keeps P > 0.5."""

    support: float = 0.60
    refute: float = 0.65
    conflict: float = 0.65
    temperature: float = 1.0  # applied to the NLI probabilities before the thresholds
    max_set_size: int = 3  # seed 003: ≤ 3 evidence sentences per judgement
    set_candidates: int = 5  # sentences considered for multi-sentence sets
    # Pair pruning (issue 18: most judged pairs cannot decide). Sentences sent to the
    # cross-encoder per claim, the best first by ``sentence_choice``; 0 = every sentence of
    # every retrieved passage.
    judge_sentences: int = 8
    # How those sentences are chosen: "retrieval" (the retrieval mode's evidence-sentence
    # ranking, core.retrieve.searcher.Searcher.rank_evidence_sentences: stored sentence vectors +
    # BM25 over the pool + passage rank; falls back to lexical where the passages carry no such
    # ranks, e.g. a BM25-only mode) or "lexical" (the share of the claim's content words in the
    # sentence and its title, ties by passage rank). "retrieval" measured better: rationale
    # recall@8 of the judged sentences .690/.665/.834 -> .736/.679/.840 (SciFact / Climate-FEVER /
    # WiCE dev), SciFact-150 verdicts .489 -> .494 macro-F1, same time (docs/benchmarks.md).
    sentence_choice: str = "retrieval"
    # Whole passages judged per claim (the best by the lexical score); 0 = every passage.
    judge_passages: int = 3
    # Early stop: the first half of the ranked units is judged first; when a grounded unit
    # there entails above this probability (and none contradicts above ``conflict``) the rest
    # is not judged. 1.0 = off.
    early_stop: float = 0.9

    def __post_init__(self) -> None:
        if self.sentence_choice not in SENTENCE_CHOICES:
            raise ValueError(f"sentence_choice must be one of {SENTENCE_CHOICES}, got {self.sentence_choice!r}")
