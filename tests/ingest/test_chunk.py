"""Chunker: ≤ 128 words, ≤ 32 words overlap, whole sentences, offsets that cut the text exactly."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.ingest.chunk import chunk


def spans_of(sentences: list[str]) -> tuple[str, list[tuple[int, int]]]:
    text, spans = "", []
    for s in sentences:
        if text:
            text += " "
        spans.append((len(text), len(text) + len(s)))
        text += s
    return text, spans


def sentence(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n)) + "."


def test_short_document_is_one_passage():
    text, spans = spans_of([sentence(10, "a"), sentence(12, "b")])
    ps = chunk(text, spans)
    assert len(ps) == 1
    assert ps[0].text == text and ps[0].sentences == spans


def test_passages_respect_limits_and_overlap_on_sentence_boundaries():
    sents = [sentence(20, chr(97 + i)) for i in range(15)]  # 300 words, 20 per sentence
    text, spans = spans_of(sents)
    ps = chunk(text, spans, 128, 32)
    assert len(ps) > 2
    for p in ps:
        assert len(p.text.split()) <= 128
        assert p.text == text[p.char_start : p.char_end]
        assert all(text[s:e] in sents for s, e in p.sentences)
    for a, b in itertools.pairwise(ps):
        shared = set(a.sentences) & set(b.sentences)
        overlap_words = sum(len(text[s:e].split()) for s, e in shared)
        assert 0 < overlap_words <= 32  # one 20-word sentence fits in the 32-word overlap
        assert b.char_start > a.char_start
    assert ps[-1].char_end == len(text)


def test_overlong_sentence_is_cut_into_icat_windows():
    words = [f"w{i}" for i in range(300)]
    text = " ".join(words)
    ps = chunk(text, [(0, len(text))], 128, 32)
    got = [p.text.split() for p in ps]
    assert got[0] == words[0:128]
    assert got[1] == words[96:224]  # stride 96 = 128 - 32
    assert got[-1][-1] == "w299"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=150), min_size=1, max_size=30))
def test_every_word_is_covered_and_limits_hold(lengths):
    sents = [sentence(n, f"s{i}_") for i, n in enumerate(lengths)]
    text, spans = spans_of(sents)
    ps = chunk(text, spans, 128, 32)
    covered = set()
    for p in ps:
        assert 1 <= len(p.text.split()) <= 128
        assert p.text == text[p.char_start : p.char_end]
        covered.update(m.start() + p.char_start for m in re.finditer(r"\S+", p.text))
    assert covered == {m.start() for m in re.finditer(r"\S+", text)}
