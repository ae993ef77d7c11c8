"""The ``atomic`` decomposer: FActScore-style atomic facts from a LoRA fine-tune of SmolLM2.

FActScore (Min et al. 2023, §3.1; seed 004 §5.5) breaks each sentence of a generation into
atomic facts, "short sentences conveying one piece of information", written by InstructGPT
and edited by people. This decomposer learns that task: a LoRA adapter over the embedded
SmolLM2-135M-Instruct GGUF, trained by ``models/train_decomposer.py`` on FActScore's human
atomic facts (every dev topic since session 8; the recipe was measured by topic folds first),
FEVERFact validation and FActScore's demonstrations,
and applied by llama.cpp at load (``models/decomposer/atomic-lora.gguf``, ``models/atomic.py``) —
or, once ``make install`` has merged it into the base (``models/atomic_merge.py``), that merge.

Per sentence (spaCy sentences, as the ``llm`` decomposer): the prompt holds the sentence and
its context (the answer's first sentence and the one before it), both fenced as untrusted
data; the answer is one fact per "- " line, decoded greedily, seeded, in 32-token prompt
blocks like every other call of the runtime (models/llm.py).

The guard (no invented facts; issue 17 item 4) is the ``llm`` decomposer's: a fact is kept
only if every content word and number occurs in its sentence or context
(:func:`core.decompose.llm.invented_words`), it carries a content word of its own sentence
(not only the context's), has at least 3 words and is no duplicate; and it must not state
without its "not" what the sentence negates (:func:`core.decompose.llm.lost_negation`, session
30: "he never won a second Nobel Prize" had become "He won a Nobel Prize."). :attr:`stats`
counts how often each part fires, over the life of the object.

A checkable sentence for which no fact survives gets the rules decomposer's claims, with a
note, as in ``llm``.

A relaxation was measured and not adopted (docs/benchmarks.md, "Session 13: the guard's
relation words"): ``relation_words=RELATION_WORDS`` lets the words people write to spell out
what a sentence only implies ("released" for "the film X (1926)", "died" for "(1867-1934)",
"called", the possessive's "s" …) occur in a fact without occurring in its source; every entity,
number and other content word must still be there. 14.5 % of the facts people wrote fail the
strict guard, mostly for these words, but an adapter that never saw the answers rarely writes
them: fold 2 gained .003 F1 (95 % interval [.000, .006]), FEVERFact .007 ([−.001, .018]).

Decoding stops once a line of the answer occurs a third time (:func:`models.atomic.repeats`):
greedy decoding of this small model sometimes loops on one fact until ``max_tokens``; the loop
adds nothing (facts are deduplicated) but costs time and leaves a cut-off last line. (Not at
the first repeat: the model sometimes restates a fact and then writes new ones.)

The sentences of one answer are independent calls (each prompt holds text of the answer, never
another call's facts), so :meth:`AtomicDecomposer._prefetch` asks for them together
(``models.llm.LLM.generate_many``: decoded as parallel sequences where this machine's kernels
give each the answer it gets alone, checked and recorded; else one by one). The facts are the
same; on 20 FActScore answers the time was 0.71 of one by one (docs/benchmarks.md, "Batched
decoding").

**Complement** (on by default): the model writes fewer facts than people (2.6 per sentence
against 4.4 on held-out FActScore answers), and pushing it to write more (a negative bias on
the end-of-turn token) gave facts the guard drops as invented, not matched ones. So to each
sentence the model decomposed, the rules decomposer's claims for the same sentence are added
when no kept fact of that sentence already says much the same thing (word-set Jaccard below
``COMPLEMENT_JACCARD`` with every one of them). Measured on held-out FActScore answers
(docs/benchmarks.md, "The trained decomposer"): recall up, precision down, F1 up; the
threshold was chosen on PerplexityAI dev answers, not on the reported files.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import replace

from core.decompose import fields as fields_module
from core.decompose import llm as llm_module
from core.decompose import rules
from core.decompose.base import Claim, Decomposer, code_hash
from core.decompose.llm import (
    MIN_WORDS,
    SentenceFailure,
    _default_fallback,
    _default_nlp,
    _key,
    _tidy,
    invented_words,
    lost_negation,
    walk_sentences,
)
from core.decompose.rules import Topic, answer_subject, paragraph_topics
from core.text import words
from models import nlp as nlp_module
from models.atomic import context_of, messages, parse_answer, repeats
from models.llm import LLMOutputError
from models.registry import ModelError

COMPLEMENT_JACCARD = 0.3  # chosen on PerplexityAI dev held-out topics (0.3-0.7 within .007 F1)
COMPLEMENT_NOTE = "rules decomposer: a fact the trained model did not write"
_OPENING_PRONOUN = re.compile(r"(He|She|His|Her|It|Its)\s")
# an opening "It" that stands for nothing: "It is known that …", "It is important to …", "It was
# not until …" (rules.py reads the parse for the same; a model's fact is matched as written)
_EXPLETIVE_IT = re.compile(r"It (?:is|was|has been|had been|seems|seemed|appears|appeared)\b(?: \w+){0,3}? (?:that|to|until)\b")
# Words a fact may add to its sentence with relation_words=RELATION_WORDS (measured, not the default:
# module docstring): the relations people name when they spell out an apposition, a parenthesis or a
# possessive, the top words of the human facts the strict guard drops (FActScore dev folds 0-1:
# released 32, called 20, title 9, s 8, died 6, located 5, named 5), with their noun forms.
# Surface forms: invented_words returns words as written.
RELATION_WORDS = frozenset({"called", "named", "name", "titled", "title", "born", "birth", "died", "death",
                            "released", "located", "s"})


def resolve_pronoun(fact: str, topic: Topic | None) -> str:
    """``fact`` with an opening "He" / "She" (or "His" / "Her") replaced by the answer's
    subject (its possessive), and an opening "It" / "Its" when the subject is a thing, as the
    ``rules`` decomposer resolves them; unchanged without a subject, and for an "It" that stands
    for nothing ("It is known that …"). Why: FActScore's annotators keep the pronoun because
    FActScore retrieves from the topic's own page, but claimscope retrieves each claim from a
    whole corpus, so "She discovered polonium." has to say who."""
    m = _OPENING_PRONOUN.match(fact) if topic else None
    if m is None:
        return fact
    if m[1] in ("It", "Its") and (not topic.thing or _EXPLETIVE_IT.match(fact)):
        return fact
    if m[1] in ("He", "She", "His", "Her") and not topic.named:
        return fact
    if topic.gender and m[1] in ("He", "His", "She", "Her") and (m[1] in ("He", "His")) != (topic.gender == "he"):
        return fact  # "He died in 1906." in an answer about Marie Curie is her husband's
    named = topic.name if m[1] in ("He", "She", "It") else f"{topic.name}'s"
    return named + fact[len(m[1]):]


class _Remembered:
    """A decomposer whose claims for the last text it read are given again from memory: one
    ``decompose`` of the atomic decomposer asks the ``rules`` fallback for the same answer up to
    three times (the walk that finds the model's sentences, the walk's fallback, the complement)."""

    def __init__(self, inner: Decomposer) -> None:
        self.inner = inner
        self._last: tuple[str, list[Claim]] | None = None

    def decompose(self, text: str) -> list[Claim]:
        if self._last is None or self._last[0] != text:
            self._last = (text, self.inner.decompose(text))
        return list(self._last[1])

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def _overlap(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' lower-cased word sets."""
    x, y = set(words(a)), set(words(b))
    return len(x & y) / len(x | y) if x or y else 0.0


class AtomicDecomposer:
    """Trained FActScore-style decomposition, guarded (see module docstring)."""

    name = "atomic"

    def __init__(
        self, llm, nlp_factory: Callable[[], object] | None = None,
        fallback_factory: Callable[[], Decomposer] | None = None, max_tokens: int = 160,
        complement: bool = True, resolve_pronouns: bool = True,
        relation_words: frozenset[str] = frozenset(), end_bias: float = 0.0, split_longer: int = 0,
        negation_guard: bool = True, batch_sentences: bool = True,
    ) -> None:
        """``llm`` is a models.llm.LLM loaded with the adapter (``lora_path``); ``complement``
        adds the rules decomposer's claims the model did not cover; ``resolve_pronouns`` names
        the answer's subject where a fact opens with its pronoun; ``relation_words`` may occur
        in a fact without occurring in its source (empty, the default: the strict guard; module
        docstring); ``end_bias`` lowers the end-of-answer logit once a fact has begun, so the
        model writes more of its facts (models.llm.LLM.generate; 0: greedy as trained);
        ``split_longer`` > 0 gives each fact of at least that many words back to the model as a
        sentence, and its facts replace it when there are two or more (:meth:`split_long`);
        ``negation_guard`` drops a fact that states without its "not" what the sentence negates
        (:func:`core.decompose.llm.lost_negation`; False only to measure it); ``batch_sentences``
        lets the model decode an answer's sentences together (:meth:`_prefetch`; the facts are
        the same, only the time changes)."""
        self.llm = llm
        self.end_bias = end_bias
        self.split_longer = split_longer
        self.max_tokens = max_tokens
        self.complement = complement
        self.resolve_pronouns = resolve_pronouns
        self.relation_words = relation_words
        self.negation_guard = negation_guard
        self.batch_sentences = batch_sentences
        self._prefetched: dict[tuple[str, str], str] = {}  # (sentence, context) -> answer, during decompose()
        # (sentence, fact) the negation guard dropped, the latest 100 (read by benchmarks/atomic_paired_f1.py)
        self.dropped_negation: deque[tuple[str, str]] = deque(maxlen=100)
        self._nlp_factory = nlp_factory
        self._nlp = None
        self._fallback_factory = fallback_factory or _default_fallback
        self._fallback: Decomposer | None = None
        self.warnings: list[str] = []
        # written / kept / dropped_invented / dropped_negation / dropped_context_only / dropped_short / duplicates;
        # kept_by_relation_words (kept facts the strict guard would have dropped);
        # sentences / fallback_sentences / field_lines (read by rules); complement (claims added from the rules decomposer);
        # batched_sentences / unbatched_sentences (prefetched by LLM.generate_many together / one by one)
        self.stats: Counter[str] = Counter()
        # read once: the cache key asks for it on every check; llm.py holds the guard, models/nlp.py
        # the sentence boundaries
        self._code = code_hash(__file__, rules.__file__, fields_module.__file__, llm_module.__file__, nlp_module.__file__)

    @property
    def identity(self) -> dict:
        """What decides the claims besides the text and the model (whose manifest the stage cache
        keys on already): this code, the rules complement's and the settings (see
        core.decompose.base.code_hash)."""
        return {"code": self._code, "complement": self.complement,
                "resolve_pronouns": self.resolve_pronouns, "relation_words": sorted(self.relation_words),
                "end_bias": self.end_bias, "split_longer": self.split_longer, "max_tokens": self.max_tokens,
                "negation_guard": self.negation_guard}

    def facts(self, sentence: str, context: str) -> list[str]:
        """The facts the model writes for one sentence (unfiltered)."""
        raw = self._prefetched.get((sentence, context))
        if raw is None:
            extra = {"end_bias": self.end_bias} if self.end_bias else {}
            raw = self.llm.generate(messages(sentence, context), max_tokens=self.max_tokens, stop_when=repeats, **extra)
        return parse_answer(raw)

    def split_long(self, facts: list[str], context: str) -> list[str]:
        """One more pass over the facts of ``split_longer`` words or more: the model, given such a
        fact as its sentence (same context), often splits it as people do ("He was drafted fifth
        overall in the 1965 NFL Draft by the Dallas Cowboys." is three facts in FActScore), and
        one-to-one matching lets a coarse fact count once. Its facts replace the long one when
        there are two or more; the guard then judges them against the original sentence."""
        out: list[str] = []
        for fact in facts:
            parts = self.facts(fact, context) if len(fact.split()) >= self.split_longer else []
            if len(parts) >= 2:
                self.stats["split_long"] += 1
                out += parts
            else:
                out.append(fact)
        return out

    def keep(self, facts: list[str], sentence: str, context: str, seen: set[frozenset[str]]) -> list[str]:
        """The guard: the facts that state only what the sentence (and context) say."""
        source = sentence + " " + context
        own = _key(sentence) - _key(context)
        out = []
        for fact in facts:
            self.stats["written"] += 1
            fact = _tidy(fact)
            key = _key(fact)
            invented = invented_words(fact, source)
            if len(words(fact)) < MIN_WORDS:
                self.stats["dropped_short"] += 1
            elif any(w not in self.relation_words for w in invented):
                self.stats["dropped_invented"] += 1
            elif self.negation_guard and lost_negation(fact, sentence):
                self.stats["dropped_negation"] += 1
                self.dropped_negation.append((sentence, fact))
            elif own and not key & own:
                self.stats["dropped_context_only"] += 1
            elif key in seen:
                self.stats["duplicates"] += 1
            else:
                seen.add(key)
                out.append(fact)
                self.stats["kept"] += 1
                self.stats["kept_by_relation_words"] += bool(invented)
        return out

    def decompose(self, text: str) -> list[Claim]:
        self.warnings = []
        if self._nlp is None:
            self._nlp = self._sentence_nlp()
        doc = self._nlp(text)
        sents = list(doc.sents)

        def context(i: int) -> str:
            return context_of(sents[0].text, sents[i - 1].text) if i else ""

        fallback = _Remembered(self._fallback_instance())
        try:
            if self.batch_sentences and not self.end_bias and hasattr(self.llm, "generate_many"):
                self._prefetch(text, sents, context, fallback)
            walk = walk_sentences(text, sents, context, self._sentence_claims, lambda: fallback, self.warnings)
        finally:
            self._prefetched = {}
        self.stats["sentences"] += walk.checkable
        self.stats["fallback_sentences"] += walk.fallbacks
        self.stats["field_lines"] += walk.fields
        claims = self._resolved(walk.claims, self._topics(text, doc)) if self.resolve_pronouns else walk.claims
        if not self.complement:
            return claims
        return self._complemented(text, claims, fallback)

    def _prefetch(self, text: str, sents: list, context: Callable[[int], str], fallback: Decomposer) -> None:
        """The model's answers for every sentence the walk will give it, decoded together
        (models.llm.LLM.generate_many: the answers each call gives alone, checked on this
        machine, or made one by one where that check fails). Which sentences those are is read
        by walking the answer once without the model (:func:`walk_sentences` decides: not
        checkable, a field line, …). Where a prompt cannot be made, nothing is prefetched and
        each sentence calls the model on its own, failing or not as it would."""
        calls: list[tuple[str, str]] = []

        def record(sentence: str, ctx: str, _span, _seen) -> list[Claim]:
            calls.append((sentence, ctx))
            raise SentenceFailure("recorded")

        walk_sentences(text, sents, context, record, lambda: fallback, [])
        calls = list(dict.fromkeys(calls))
        if len(calls) < 2:
            return
        try:
            answers = self.llm.generate_many([messages(s, c) for s, c in calls], max_tokens=self.max_tokens,
                                             stop_when=repeats)
        except (LLMOutputError, ModelError):
            return
        self.stats["batched_sentences" if self.llm.batched_calls else "unbatched_sentences"] += len(calls)
        self._prefetched = dict(zip(calls, answers, strict=True))

    def _topics(self, text: str, doc) -> list[tuple[int, Topic | None]]:
        """Who or what the answer is about, from where on (:func:`core.decompose.rules.paragraph_topics`:
        its subject, then a paragraph that opens with another person), read with the ``rules``
        decomposer's whole pipeline: its NER tells a person from a thing, which the sentence
        pipeline here skips. Without one, the subject is taken for a person (he / she)."""
        nlp = getattr(self._fallback_instance(), "nlp", None)
        if nlp is not None:
            return paragraph_topics(nlp(text))
        subject = answer_subject(doc)
        return [(0, Topic(subject) if subject else None)]

    def _resolved(self, claims: list[Claim], topics: list[tuple[int, Topic | None]]) -> list[Claim]:
        """The model's facts with an opening pronoun of whom their paragraph is about named
        (:func:`resolve_pronoun`); a fact that then says what an earlier one of its sentence
        says is dropped as a duplicate. Fallback claims come from ``rules``, resolved already."""
        out: list[Claim] = []
        seen: set[tuple[tuple[int, int], frozenset[str]]] = set()
        for c in claims:
            if c.checkable and c.note is None:
                topic = next(t for start, t in reversed(topics) if start <= c.span[0])  # topics[0] starts at 0
                text = resolve_pronoun(c.text, topic)
                if text != c.text:
                    self.stats["pronouns_resolved"] += 1
                    c = replace(c, text=text)
                key = (c.span, _key(c.text))
                if key in seen:
                    self.stats["duplicates"] += 1
                    continue
                seen.add(key)
            out.append(c)
        return [replace(c, idx=i) for i, c in enumerate(out)]

    def _complemented(self, text: str, claims: list[Claim], fallback: Decomposer | None = None) -> list[Claim]:
        """``claims`` plus, after each sentence the model decomposed, the rules claims of that
        sentence (from ``fallback``, default the rules fallback) that no kept fact of it covers
        (Jaccard < COMPLEMENT_JACCARD)."""
        model_spans = {c.span for c in claims if c.checkable and c.note is None}
        if not model_spans:
            return claims
        extra: dict[tuple[int, int], list[Claim]] = {}
        for rc in (fallback or self._fallback_instance()).decompose(text):
            span = next((s for s in model_spans if s[0] <= rc.span[0] < s[1]), None)
            if span is None or not rc.checkable:
                continue
            own = [c.text for c in claims if c.span == span]  # the model's facts only: rules claims are distinct already
            if all(_overlap(rc.text, t) < COMPLEMENT_JACCARD for t in own):
                extra.setdefault(span, []).append(replace(rc, note=COMPLEMENT_NOTE))
                self.stats["complement"] += 1
        out: list[Claim] = []
        for i, c in enumerate(claims):
            out.append(c)
            last = i + 1 == len(claims) or claims[i + 1].span != c.span
            if last and c.span in extra:
                out += extra.pop(c.span)
        return [replace(c, idx=i) for i, c in enumerate(out)]

    def _sentence_claims(self, sentence: str, context: str, span: tuple[int, int],
                         seen: set[frozenset[str]]) -> list[Claim]:
        """The guarded facts of one sentence; SentenceFailure when none is usable."""
        try:
            facts = self.facts(sentence, context)
            if self.split_longer:
                facts = self.split_long(facts, context)
        except (LLMOutputError, ModelError) as exc:
            raise SentenceFailure(f"atomic decomposer unusable: {exc}", broken=isinstance(exc, ModelError)) from exc
        kept = [Claim(0, f, span, context=sentence) for f in self.keep(facts, sentence, context, seen)]
        if not kept:
            raise SentenceFailure("atomic decomposer wrote no fact faithful to the sentence")
        return kept

    def _sentence_nlp(self):
        """The spaCy pipeline that splits sentences: the ``rules`` decomposer's own when it is
        the fallback (it is loaded anyway, for the complement and the fallback; its parser
        gives the same sentences, the lemmatizer and NER it adds run after the parser), so a
        process loads spaCy once; else the ``llm`` decomposer's."""
        if self._nlp_factory is not None:
            return self._nlp_factory()
        nlp = getattr(self._fallback_instance(), "nlp", None)
        return nlp if nlp is not None else _default_nlp()

    def _fallback_instance(self) -> Decomposer:
        if self._fallback is None:
            self._fallback = self._fallback_factory()
        return self._fallback
