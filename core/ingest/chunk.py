"""Chunking documents into passages on sentence boundaries.

ICAT (seed 004 §5.4) retrieves snippets of at most 128 words with 32 words of overlap
(stride 96, whitespace tokens). claimscope keeps those limits but cuts on sentence
boundaries, so each passage is a run of whole sentences and evidence can later be cited
sentence by sentence:
- a passage takes consecutive sentences while the total stays ≤ ``max_words`` words;
- the next passage starts at the earliest sentence of the previous passage such that the
  sentences it repeats hold ≤ ``overlap`` words (and always moves forward);
- a single sentence longer than ``max_words`` is cut into word windows of ``max_words``
  with ``overlap`` words overlap, exactly as ICAT's whitespace windows.
"""

from __future__ import annotations

import re

from store.records import PassageRecord

Span = tuple[int, int]
_NON_SPACE = re.compile(r"\S+")


def _word_count(text: str, span: Span) -> int:
    return len(text[span[0] : span[1]].split())


def _split_long_sentence(text: str, span: Span, max_words: int, overlap: int) -> list[Span]:
    """Cut one over-long sentence into word windows (stride = max_words - overlap)."""
    tokens = [(m.start() + span[0], m.end() + span[0]) for m in _NON_SPACE.finditer(text[span[0] : span[1]])]
    stride = max(1, max_words - overlap)
    pieces = []
    for start in range(0, len(tokens), stride):
        window = tokens[start : start + max_words]
        pieces.append((window[0][0], window[-1][1]))
        if start + max_words >= len(tokens):
            break
    return pieces


def chunk(text: str, sentences: list[Span], max_words: int = 128, overlap: int = 32) -> list[PassageRecord]:
    """Passages of ``text`` given its sentence spans (document-relative character offsets)."""
    if max_words < 1 or not 0 <= overlap < max_words:
        raise ValueError("need max_words ≥ 1 and 0 ≤ overlap < max_words")
    units: list[Span] = []
    for span in sentences:
        if _word_count(text, span) > max_words:
            units.extend(_split_long_sentence(text, span, max_words, overlap))
        elif span[1] > span[0]:
            units.append(span)
    counts = [_word_count(text, u) for u in units]
    passages: list[PassageRecord] = []
    i = 0
    while i < len(units):
        j, total = i, 0
        while j < len(units) and (total + counts[j] <= max_words or j == i):
            total += counts[j]
            j += 1
        spans = units[i:j]
        start, end = spans[0][0], spans[-1][1]
        passages.append(PassageRecord(len(passages), text[start:end], start, end, i, list(spans)))
        if j >= len(units):
            break
        # Overlap: step back over trailing sentences holding at most `overlap` words.
        nxt, back = j, 0
        while nxt - 1 > i and back + counts[nxt - 1] <= overlap:
            nxt -= 1
            back += counts[nxt]
        i = nxt
    return passages
