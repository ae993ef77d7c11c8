"""Answers with ``[n]`` citations (the ExpertQA format, seed 002 §3.8): parse the markers
and the reference list, and give every claim the citations its sentence carried.

Markers accepted: ``[1]``, ``[1][2]``, ``[1, 2]``, ``[1-3]`` / ``[1–3]`` (ranges expand).
They are removed from the text before decomposition (they would confuse the parser and the
verifier) and the claims' spans are mapped back onto the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.decompose.base import Claim, Decomposer, trimmed
from core.markdown import markdown_to_prose

_MARKER = re.compile(r"\s*\[(\d+(?:\s*[-–,]\s*\d+)*)\]")
_REFERENCE = re.compile(r"^\s*\[(\d+)\]\s*(.+?)\s*$")
MAX_RANGE = 50  # "[1-5000]" is not a citation


@dataclass(frozen=True)
class Marker:
    span: tuple[int, int]  # in the original text, including the leading whitespace removed with it
    ids: tuple[int, ...]


def parse_marker_ids(inner: str) -> tuple[int, ...] | None:
    """"1, 2" → (1, 2); "1-3" → (1, 2, 3); None for something that is no citation."""
    ids: list[int] = []
    for part in re.split(r"\s*,\s*", inner.strip()):
        if re.fullmatch(r"\d+", part):
            ids.append(int(part))
            continue
        m = re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part)
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi < lo or hi - lo > MAX_RANGE:
            return None
        ids.extend(range(lo, hi + 1))
    return tuple(dict.fromkeys(i for i in ids if i > 0)) or None


def find_markers(text: str) -> list[Marker]:
    out = []
    for m in _MARKER.finditer(text):
        ids = parse_marker_ids(m.group(1))
        if ids:
            out.append(Marker((m.start(), m.end()), ids))
    return out


def parse_references(lines: list[str]) -> dict[int, str]:
    """``["[1] https://…", "[2] Some title"]`` → {1: "https://…", 2: "Some title"}."""
    refs = {}
    for line in lines:
        m = _REFERENCE.match(line)
        if m:
            refs.setdefault(int(m.group(1)), m.group(2))
    return refs


def strip_markers(text: str) -> tuple[str, list[Marker], list[int]]:
    """The text without markers, the markers, and for each clean character its original offset."""
    markers = find_markers(text)
    clean, offsets, pos = [], [], 0
    for mk in markers:
        clean.append(text[pos : mk.span[0]])
        offsets.extend(range(pos, mk.span[0]))
        pos = mk.span[1]
    clean.append(text[pos:])
    offsets.extend(range(pos, len(text)))
    offsets.append(len(text))  # one past the end
    return "".join(clean), markers, offsets


@dataclass(frozen=True)
class CitedClaim:
    claim: Claim  # span refers to the original (cited) text
    citations: tuple[int, ...]


def decompose_cited(text: str, decomposer: Decomposer, sentence_ends: list[int] | None = None) -> list[CitedClaim]:
    """Decompose an answer as a reader reads it: a Markdown answer's layout becomes prose first
    (core/markdown.py), then its ``[n]`` markers are taken out; each claim keeps the
    markers of the sentence it came from (markers after the claim's span, up to the end of its
    sentence) and its span in the original text."""
    prose = markdown_to_prose(text)
    md = prose.text
    clean, markers, offsets = strip_markers(md)
    claims = decomposer.decompose(clean)
    out = []
    for c in claims:
        # a span without the whitespace around it (a parsed sentence's span can end with its line
        # break, and the sentence end would then be looked for in the next line)
        lo, hi = trimmed(clean, *c.span)
        start, end = offsets[lo], offsets[hi] if hi < len(offsets) else len(md)
        # the claim's sentence ends at the next sentence-final punctuation after its span (clean text)
        stop_clean = _sentence_end(clean, hi)
        stop = offsets[stop_clean] if stop_clean < len(offsets) else len(md)
        # markers that belong to this sentence: inside the claim span or after it up to the sentence end,
        # including markers placed right after the final period
        cited = [mk for mk in markers if start <= mk.span[0] <= _after_trailing(md, stop, markers)]
        ids = tuple(dict.fromkeys(i for mk in cited for i in mk.ids))
        out.append(CitedClaim(replace(c, span=prose.span(start, end, len(text))), ids))
    return out


def _sentence_end(clean: str, pos: int) -> int:
    m = re.compile(r"[.!?](?=\s|$)").search(clean, max(0, pos - 1))
    return m.end() if m else len(clean)


def _after_trailing(text: str, stop: int, markers: list[Marker]) -> int:
    """Extend the sentence end over markers that follow the final punctuation ("… end. [3]")."""
    end = stop
    for mk in markers:
        if mk.span[0] <= end + 1 and mk.span[1] > end:
            end = mk.span[1]
    return end
