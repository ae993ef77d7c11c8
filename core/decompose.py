"""Claim decomposition: input text → claims, each with the character span it came from.

One protocol, several implementations. ``sentence`` (every sentence a claim, spaCy
sentence boundaries) is the baseline decomposition level of ExpertQA (seed 002 §3.2:
answers split into sentence claims).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from models.nlp import SentenceSplitter


@dataclass(frozen=True)
class Claim:
    idx: int
    text: str
    span: tuple[int, int]  # characters of the input the claim came from
    checkable: bool = True
    note: str | None = None  # why it is not checkable: question, abstention, opinion, advice
    context: str | None = None  # the source sentence, when the claim text was rewritten


class Decomposer(Protocol):
    name: str

    def decompose(self, text: str) -> list[Claim]: ...


class SentenceDecomposer:
    """Each sentence of the input is one claim (its span is the sentence itself)."""

    name = "sentence"

    def __init__(self, splitter: SentenceSplitter) -> None:
        self._splitter = splitter

    def decompose(self, text: str) -> list[Claim]:
        (spans,) = self._splitter.split([text])
        return [Claim(i, text[s:e], (s, e)) for i, (s, e) in enumerate(spans)]


DECOMPOSERS = ("rules", "sentence", "llm")


def make_decomposer(name: str, splitter_factory, llm_spec: str | None = None) -> Decomposer:
    """``rules`` (default: deterministic atomic claims), ``sentence``, or ``llm`` (a GGUF model,
    ``llm_spec``: ``embedded`` or a path; core/decompose_llm.py)."""
    from core.errors import InputError

    if name == "sentence":
        return SentenceDecomposer(splitter_factory())
    if name == "rules":
        from core.decompose_rules import RulesDecomposer

        return RulesDecomposer()
    if name == "llm":
        from core.decompose_llm import LLMDecomposer
        from models.llm import load_llm

        return LLMDecomposer(load_llm(llm_spec))
    raise InputError(f"unknown decomposer {name!r} (available: {', '.join(DECOMPOSERS)})")
