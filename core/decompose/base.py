"""Claim decomposition: input text → claims, each with the character span it came from.

One protocol, several implementations. ``sentence`` (every sentence a claim, spaCy
sentence boundaries) is the baseline decomposition level of ExpertQA (seed 002 §3.2:
answers split into sentence claims).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from models.nlp import SentenceSplitter


@dataclass(frozen=True)
class Claim:
    idx: int
    text: str
    span: tuple[int, int]  # characters of the input the claim came from
    checkable: bool = True
    note: str | None = None  # why it is not checkable: question, reference, conversational, fragment, abstention, opinion, advice
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


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved inwards past the whitespace around ``text[start:end]`` (a parsed
    sentence's span can begin or end with a line break, or with a marker blanked before parsing)."""
    end = min(end, len(text))
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def code_hash(*files: str) -> str:
    """sha256 of the named source files (``__file__`` of the modules whose code decides a
    decomposer's claims), for the stage cache's key: an upgraded claimscope never serves a
    decomposition an earlier version of that code made (0.37 ms for rules.py, 65 KB: read it once
    per decomposer, not per check)."""
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).read_bytes())
    return h.hexdigest()[:16]
