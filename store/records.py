"""Records stored in the database, as plain dataclasses.

They live in ``store`` (not ``core``) because the store must not import the pipeline;
``core`` re-uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceInfo:
    id: int
    name: str
    format: str
    path: str | None
    attribution: str | None
    licence: str | None
    chunk_words: int
    chunk_overlap: int
    n_documents: int
    n_passages: int
    index_seconds: float | None
    updated_at: str


@dataclass
class DocumentRecord:
    """One document of a knowledge source, as parsed from its file (no database ids)."""

    ext_id: str
    title: str
    text: str
    url: str | None = None
    date: str | None = None
    meta: dict | None = None
    # Sentence character spans in ``text`` if the format gives them (SciFact does).
    sentences: list[tuple[int, int]] | None = None


@dataclass
class PassageRecord:
    """A chunk of a document: at most ``chunk_words`` words on sentence boundaries."""

    idx: int
    text: str
    char_start: int
    char_end: int
    first_sentence: int  # index of its first sentence in the document
    # (start, end) of each sentence, relative to the document text
    sentences: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class StoredPassage:
    """A passage as read back for retrieval and display."""

    id: int
    document_id: int
    source: str
    doc_ext_id: str
    title: str
    url: str | None
    text: str
    char_start: int
    sentences: tuple[tuple[int, int], ...]  # document-relative spans

    def sentence_texts(self) -> list[str]:
        """The passage's sentences, cut from its own text."""
        return cut_sentences(self.text, self.char_start, self.sentences)


@dataclass(frozen=True)
class DocumentLayout:
    """A stored document's length in words (whitespace-separated, as ``str.split`` counts) and
    the start offsets of its sentences, in order (the union of its passages' sentence spans)."""

    words: int
    sentence_starts: tuple[int, ...]


def cut_sentences(text: str, char_start: int, spans: Sequence[Sequence[int]]) -> list[str]:
    """A passage's sentences from its text: ``spans`` are document-relative, the passage starts
    at ``char_start`` of its document. One function, so the sentences embedded at index time
    (core/ingest/index.py) are character for character the ones a search scores."""
    return [text[s - char_start : e - char_start] for s, e in spans]
