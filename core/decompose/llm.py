"""The ``llm`` decomposer: atomic facts from a local LLM, guarded against invention.

Prompt: FActScore / ICAT style (seed 004 §5.5: "give all the mentioned atomic fact
sentences, one per line … decontextualized with resolved pronouns … self-explanatory";
seed 002 §3.6: "Segment the given sentence into individual facts", few-shot Sentence →
Facts). Each fact comes in the two forms of seed 003's DnD decomposition (§4.2 step 4):
``fact`` as it reads in its sentence (contextualised) and ``standalone`` (decontextualised,
pronouns resolved). The answer is grammar-constrained JSON (models/llm.py), one list item
per fact — the JSON analogue of "one fact per line".

The answer is processed sentence by sentence (spaCy sentences), so each claim keeps the
character span of its source sentence; the sentence's context (the answer's first sentence
and the one before it) is shown so pronouns can be resolved. Both are fenced as data.

Guards (models.md §4.3: SmolLM2-135M copies few-shot facts and invents others):
- **invented claims are dropped** — see :func:`invented_words`: a standalone claim is kept
  only if every content word (lower-cased word tokens minus stop words) occurs in the source
  sentence or its context, after light suffix normalisation ("appeared" ~ "appear", "films"
  ~ "film"), and every number occurs there exactly;
- a fact must carry a content word that only its own sentence has (not the context):
  measured, SmolLM2 restates the context's first fact under later sentences;
- a "fact" of fewer than 3 words is dropped (measured: SmolLM2 emits bare titles such as
  "The Abyss" as facts);
- duplicates are merged (same content words, any order or case);
- check-worthiness comes from the rules module (questions, references, a chat answer's frame,
  fragments, abstentions, opinions, advice are kept whole and marked not checkable, never sent
  to the LLM);
- a fact that states without its "not" what its sentence negates is dropped
  (:func:`lost_negation`);
- fallback to ``rules``: when the LLM cannot run (load failure, prompt too long, unusable
  output) or nothing it wrote for a checkable sentence survives the guard, that sentence's
  claims come from the rules decomposer, with a ``note`` saying so, and a line is added to
  :attr:`LLMDecomposer.warnings` for the caller to show.

A claim's ``text`` is the standalone form; ``context`` holds the contextualised form (the
source sentence itself is ``input[span]``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.decompose import fields as fields_module
from core.decompose import rules
from core.decompose.base import Claim, Decomposer, code_hash, trimmed
from core.decompose.fields import is_field_line, value_is_clause
from core.decompose.rules import ItemReader, answer_subject, check_worthiness, is_lead_in, past_tense, states_something
from core.text import STOPWORDS, words
from models import nlp as nlp_module
from models.llm import FENCE_RULE, LLMOutputError, Message, fence
from models.registry import ModelError

MAX_FACTS = 6
FIELD_NOTE = "a field line, read by the rules decomposer"
MIN_WORDS = 3  # a "fact" of fewer words is a bare name ("The Abyss"), not a claim
FACT_SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array", "minItems": 1, "maxItems": MAX_FACTS,
            "items": {
                "type": "object",
                "properties": {
                    "fact": {"type": "string", "minLength": 3, "maxLength": 240},
                    "standalone": {"type": "string", "minLength": 3, "maxLength": 240},
                },
                "required": ["fact", "standalone"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}

SYSTEM = (
    "You split a sentence into atomic facts. " + FENCE_RULE + " "
    "Give every fact the sentence states, one per item, each as short as possible: "
    "'fact' as it reads in the sentence, 'standalone' decontextualised with pronouns resolved "
    "(don't use 'he', 'she', 'it', 'this' or 'that': name the actual person or thing) so it is "
    "self-explanatory without any context. Use only words from the sentence and its context."
)
# Few-shot pairs (seed 002 §3.6 / FActScore style): invented people and places, so a copied
# example fact can never pass the invented-claim guard on real input.
_SHOTS = (
    ("Tom Brennan is a Welsh potter.",
     "Brennan was born in 1962 in Cardiff and studied ceramics in Leeds.",
     [("Brennan was born in 1962.", "Tom Brennan was born in 1962."),
      ("Brennan was born in Cardiff.", "Tom Brennan was born in Cardiff."),
      ("Brennan studied ceramics in Leeds.", "Tom Brennan studied ceramics in Leeds.")]),
    ("The Varna Bridge opened in 1931.",
     "It is 340 metres long, and it crosses the Ros River.",
     [("It is 340 metres long.", "The Varna Bridge is 340 metres long."),
      ("It crosses the Ros River.", "The Varna Bridge crosses the Ros River.")]),
)

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_JSON_STR = r'"(?:[^"\\]|\\.)*"'
_ITEM = re.compile(r'\{\s*"fact"\s*:\s*' + _JSON_STR + r'\s*,\s*"standalone"\s*:\s*' + _JSON_STR + r"\s*\}")
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    """Light suffix stripping: enough to match "appeared"/"appear", "films"/"film"."""
    for suf in _SUFFIXES:
        if len(word) - len(suf) >= 3 and word.endswith(suf):
            return word[: -len(suf)]
    return word


def invented_words(claim: str, source: str) -> list[str]:
    """Words of ``claim`` that its ``source`` (sentence + context) does not contain.

    The rule: every number in the claim must occur in the source as the same number; every
    other content word (``core.text.words`` minus ``STOPWORDS``) must occur in the source
    exactly, or with the same light stem (:func:`_stem`). A claim with any such word is
    invented: the paraphrase cost (e.g. "many" for "numerous" is dropped) is accepted so that
    a swapped entity, date or predicate never gets through.
    """
    src_words = set(words(source))
    src_stems = {_stem(w) for w in src_words}
    src_numbers = set(_NUMBER.findall(source))
    missing = []
    for n in _NUMBER.findall(claim):
        if n not in src_numbers:
            missing.append(n)
    for w in words(claim):
        if w in STOPWORDS or w.isdigit() or w in src_words or _stem(w) in src_stems:
            continue
        if _NUMBER.fullmatch(w):
            continue  # numbers were checked above
        missing.append(w)
    return missing


# words that negate what follows them; "n't" is matched on the token ("didn't", "wasn’t")
_NEGATIONS = frozenset(["not", "never", "no", "neither", "nor", "cannot"])
# a cue followed by these is no negation of the next word: "not only X but also Y", "no longer"
# (the governed word comes after it), "no doubt", "no less than"
_NOT_NEGATING = frozenset(["only", "just", "merely", "doubt", "less"])
_SKIP_AFTER_CUE = frozenset(["longer", "ever", "once", "yet", "even"])
_TOKEN = re.compile(r"\w+(?:['’]t\b)?|[^\w\s]")  # words, and each punctuation mark (a clause's edge)


def _is_negation(token: str) -> bool:
    return token in _NEGATIONS or token.endswith(("n't", "n’t"))


def lost_negation(claim: str, sentence: str) -> bool:
    """Whether ``claim`` states without its negation what ``sentence`` negates: "He never won a
    second Nobel Prize." → "He won a Nobel Prize." The guard of :func:`invented_words` only
    looks for words a claim adds; a claim that drops a "not" adds none, and says the opposite
    of its sentence — the worst error a decomposer can hand a fact-checker. The word a cue
    negates is the first content word after it, within four words ("was not born" → born,
    "did not attend" → attend, "neither a doctor nor a lawyer" → doctor, lawyer); the claim
    lost the negation when it has that word (or its light stem) and no negation cue of its
    own. The word must follow its cue inside the clause (no punctuation between them) and not be
    a name ("neither the Grand Dauphin nor Philip's brother could be displaced" negates the verb,
    not Philip). "not only …" and "no doubt" negate nothing."""
    if any(_is_negation(t) for t in _TOKEN.findall(claim.lower())):
        return False
    stems = {_stem(w) for w in words(claim) if w not in STOPWORDS}
    raw = _TOKEN.findall(sentence)
    toks = [t.lower() for t in raw]
    for i, tok in enumerate(toks):
        if not _is_negation(tok) or (i + 1 < len(toks) and toks[i + 1] in _NOT_NEGATING):
            continue
        for j in range(i + 1, min(i + 5, len(toks))):
            nxt = toks[j]
            if not nxt[0].isalnum() or raw[j][0].isupper():
                break  # the clause ends, or a name: "neither X nor Philip's brother could …" negates the verb
            if nxt in STOPWORDS or nxt in _SKIP_AFTER_CUE or _is_negation(nxt):
                continue
            if _stem(nxt) in stems or nxt in stems:
                return True
            break
    return False


def _key(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(text) if w not in STOPWORDS)


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().strip("-•*,;: ").strip()
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:]


class LLMDecomposer:
    """FActScore/ICAT-style LLM decomposition with DnD forms (see module docstring)."""

    name = "llm"

    def __init__(
        self, llm, nlp_factory: Callable[[], object] | None = None,
        fallback_factory: Callable[[], Decomposer] | None = None, max_tokens: int = 200,
    ) -> None:
        """``llm`` is a models.llm.LLM (or anything with ``generate_json`` and ``ref``);
        ``nlp_factory`` a spaCy pipeline with tagger and parser (sentences, check-worthiness);
        ``fallback_factory`` builds the rules decomposer, only if it is needed."""
        self.llm = llm
        self.max_tokens = max_tokens
        self._nlp_factory = nlp_factory or _default_nlp
        self._nlp = None
        self._fallback_factory = fallback_factory or _default_fallback
        self._fallback: Decomposer | None = None
        self.warnings: list[str] = []  # messages of the last decompose() call, for the caller
        self._code = code_hash(__file__, rules.__file__, fields_module.__file__, nlp_module.__file__)  # read once: the cache key asks for it on every check

    @property
    def identity(self) -> dict:
        """This code (its prompt and shots) and the rules fallback's, for the stage cache's key
        (see core.decompose.base.code_hash); the model's manifest is keyed already."""
        return {"code": self._code, "max_tokens": self.max_tokens}

    def _rules(self) -> Decomposer:
        if self._fallback is None:
            self._fallback = self._fallback_factory()
        return self._fallback

    def prompt(self, sentence: str, context: str) -> list[Message]:
        msgs: list[Message] = [("system", SYSTEM)]
        for ctx, sent, facts in _SHOTS:
            msgs.append(("user", _user_turn(sent, ctx)))
            body = ", ".join(f'{{"fact": "{f}", "standalone": "{s}"}}' for f, s in facts)
            msgs.append(("assistant", f'{{"facts": [{body}]}}'))
        msgs.append(("user", _user_turn(sentence, context)))
        return msgs

    def facts(self, sentence: str, context: str) -> list[tuple[str, str]]:
        """(contextualised, standalone) pairs the LLM writes for one sentence (unfiltered).
        An answer cut off by the token limit keeps the facts it completed (the grammar
        guarantees each completed item is a well-formed object)."""
        try:
            answer = self.llm.generate_json(self.prompt(sentence, context), FACT_SCHEMA, max_tokens=self.max_tokens)
        except LLMOutputError as exc:
            done = [json.loads(m.group(0)) for m in _ITEM.finditer(exc.raw)]
            if not done:
                raise
            answer = {"facts": done}
        try:
            return [(str(f["fact"]), str(f["standalone"])) for f in answer["facts"]]
        except (TypeError, KeyError) as exc:
            raise LLMOutputError(f"the model's answer lacks facts ({exc})") from exc

    def decompose(self, text: str) -> list[Claim]:
        self.warnings = []
        if self._nlp is None:
            self._nlp = self._nlp_factory()
        sents = list(self._nlp(text).sents)

        def context(i: int) -> str:
            return " ".join(s.text.strip() for s in ([sents[0]] if i > 1 else []) + sents[max(0, i - 1) : i])

        return walk_sentences(text, sents, context, self._sentence_claims, self._rules, self.warnings).claims

    def _sentence_claims(self, sentence: str, context: str, span: tuple[int, int],
                         seen: set[frozenset[str]]) -> list[Claim]:
        """The guarded claims of one sentence; SentenceFailure when none is usable."""
        try:
            pairs = self.facts(sentence, context)
        except ModelError as exc:
            raise SentenceFailure(f"llm unavailable: {exc}", broken=True) from exc
        except LLMOutputError as exc:
            raise SentenceFailure(f"llm output unusable: {exc}") from exc
        source = sentence + " " + context
        own = _key(sentence) - _key(context)  # what only this sentence says
        kept: list[Claim] = []
        for contextual, standalone in pairs:
            standalone = _tidy(standalone)
            key = _key(standalone)
            if (len(words(standalone)) < MIN_WORDS or key in seen or invented_words(standalone, source)
                    or lost_negation(standalone, sentence)):
                continue
            if own and not key & own:
                continue  # only restates the context: not a fact of this sentence
            seen.add(key)
            ctx_form = _tidy(contextual)
            if invented_words(ctx_form, source):
                ctx_form = sentence
            kept.append(Claim(0, standalone, span, context=ctx_form))
        if not kept:
            raise SentenceFailure("llm wrote no claim faithful to the sentence")
        return kept


class SentenceFailure(Exception):
    """No usable claim for one sentence; ``broken``: the model itself failed, so every later
    sentence goes straight to the fallback too."""

    def __init__(self, message: str, broken: bool = False) -> None:
        super().__init__(message)
        self.broken = broken


@dataclass
class Walk:
    """What a walk over an answer's sentences produced."""

    claims: list[Claim]
    checkable: int = 0  # sentences sent to the model (or to the fallback once it broke)
    fallbacks: int = 0  # of those, the sentences the rules decomposer covered
    fields: int = 0  # of those, field lines ("Born: 1879"), read by the rules decomposer


def walk_sentences(
    text: str, sents: list, context: Callable[[int], str],
    sentence_claims: Callable[[str, str, tuple[int, int], set[frozenset[str]]], list[Claim]],
    fallback: Callable[[], Decomposer], warnings: list[str],
) -> Walk:
    """The per-sentence walk the LLM decomposers share (FActScore §3.1: one sentence at a time,
    with what came before as context): uncheckable sentences become non-checkable claims (as
    the rules decomposer marks them); each checkable one goes to ``sentence_claims``, and where
    that fails, the rules decomposer's claims for the same span stand in, with a note and a
    warning, so a sentence is never silently lost."""
    rules_claims: list[Claim] | None = None
    walk = Walk([])
    seen: set[frozenset[str]] = set()
    broken: str | None = None
    items = ItemReader(answer_subject(sents[0].doc), past_tense(sents[0].doc)) if sents else ItemReader(None, False)
    for i, sent in enumerate(sents):
        start, end = trimmed(text, sent.start_char, sent.end_char)
        if start >= end:
            continue
        completed = items.complete(sent)  # a list item read as a person does (rules.py)
        sentence = completed or text[start:end]
        if completed is None:
            subj = [t for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.head == sent.root]
            reason = check_worthiness(sentence, sent.root.tag_, bool(subj), states_something(sent), is_lead_in(sent))
            items.read(sent, reason)
            if reason:
                walk.claims.append(Claim(len(walk.claims), sentence, (start, end), checkable=False, note=reason))
                continue
        walk.checkable += 1
        if is_field_line(sentence) and not value_is_clause(sent):  # "Born: 14 March 1879, Ulm": read exactly, not written by a model (fields.py)
            if rules_claims is None:
                rules_claims = fallback().decompose(text)
            read = [replace(c, note=FIELD_NOTE) for c in rules_claims if start <= c.span[0] < end and c.checkable]
            if read:
                walk.fields += 1
                seen.update(_key(c.text) for c in read)
                walk.claims.extend(read)
                continue
        failure = broken
        kept: list[Claim] = []
        if failure is None:
            try:
                kept = sentence_claims(sentence, context(i), (start, end), seen)
            except SentenceFailure as exc:
                failure = str(exc)
                if exc.broken:
                    broken = failure
        if failure is not None:
            walk.fallbacks += 1
            if rules_claims is None:
                rules_claims = fallback().decompose(text)
            kept = [replace(c, note=f"{failure}; rules decomposer used")
                    for c in rules_claims if start <= c.span[0] < end and c.checkable]
            for c in kept:
                seen.add(_key(c.text))
            warnings.append(f"sentence {i + 1}: {failure}; rules decomposer used")
        walk.claims.extend(kept)
    walk.claims = [replace(c, idx=i) for i, c in enumerate(walk.claims)]
    return walk


def _user_turn(sentence: str, context: str) -> list:
    parts: list = []
    if context:
        parts += ["Context:\n", fence("CONTEXT", context), "\n"]
    parts += ["Sentence:\n", fence("SENTENCE", sentence), "\nList the atomic facts of the sentence as JSON."]
    return parts


def _default_nlp():
    from models.nlp import load_spacy

    return load_spacy(disable=["lemmatizer", "ner"])  # without torch (models/nlp.py)


def _default_fallback() -> Decomposer:
    from core.decompose.rules import RulesDecomposer

    return RulesDecomposer()
