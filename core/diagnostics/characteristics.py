"""Per claim–evidence "context characteristics" of seed 001 §4.1 (DRUID; App. G–H; Table 10).

The paper measures, for every (claim, evidence) pair, properties that may explain whether a
model uses the evidence: similarity (Jaccard, claim overlap, verbatim repetition), difficulty
(Flesch reading ease, lengths), implicitness (claim entity overlap), references to external
sources, uncertainty (hedge words and hedging discourse markers, Islam et al. 2020), source
reliability (MBFC lists), verdict words ("true" / "false"), fact-check sources and leakage
(published after the claim). claimscope computes them per evidence passage so a reviewer can
sort and filter evidence by them; :meth:`Characteristics.flags` names the notable ones.

Not here: perplexity (needs a causal LM per evidence; a separate, optional step) and the
"gold source" flag (needs the original fact-check article's URL, which only a DRUID import has).

Where the paper leaves details open, the DRUID code ([repo], copenlu/context-utilisation-for-RAG,
src/property_detection/) decides; where claimscope differs from it, the docstring says so and
why. Everything here is deterministic and offline; the data files live in ``core/diagnostics/data/`` and
are loaded with :mod:`importlib.resources` (package data).

**Tokeniser.** One word tokeniser, :func:`words`, serves Jaccard, claim overlap and "repeats
claim": maximal runs of letters/digits, keeping internal apostrophes and hyphens ("don't",
"covid-19", "obama's" are one word each), lower-cased, with ’ read as '. Punctuation and
special characters (a lone "-", "—", quotes, brackets, "_") are never words, as App. G asks.
[repo] used NLTK ``word_tokenize`` and dropped punctuation tokens; we use a regex because NLTK
is not a claimscope dependency and its tokeniser models would have to be downloaded at run
time. The difference is small and deliberate: NLTK splits clitics ("don't" → "do" + "n't",
"Obama's" → "Obama" + "'s"), which turns "'s" and "n't" into shared "words" between any two
texts; the regex keeps them attached.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from models.llm import FENCE_RULE, LLM, Fenced, LLMOutputError, Message

# ------------------------------------------------------------------ words (App. G)

# Letters/digits, with internal ' ’ - joining runs: "don't", "covid-19". "_" is a special
# character, not a letter, hence [^\W_].
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


def words(text: str) -> list[str]:
    """The text's words in order, lower-cased, ’ read as ' (see the module docstring)."""
    return [m.group().lower().replace("’", "'") for m in _WORD.finditer(text or "")]


def word_set(text: str) -> frozenset[str]:
    """W(·) of App. G: the set of unique lower-cased words."""
    return frozenset(words(text))


def jaccard(claim: str, evidence: str) -> float:
    """J(C, E) = |W(C) ∩ W(E)| / |W(C) ∪ W(E)| (seed 001 App. G, Eq. 3). 0.0 when both texts
    have no words ([repo]'s NLTK ``jaccard_distance`` would divide by zero)."""
    c, e = word_set(claim), word_set(evidence)
    union = c | e
    return len(c & e) / len(union) if union else 0.0


def claim_overlap(claim: str, evidence: str) -> float:
    """"Claim-evidence overlap" (seed 001 §4.1): |W(C) ∩ W(E)| / |W(C)|, the share of the
    claim's unique words found in the evidence. 0.0 for a claim without words."""
    c = word_set(claim)
    return len(c & word_set(evidence)) / len(c) if c else 0.0


def normalise(text: str) -> str:
    """Lower-cased words joined by single spaces: punctuation removed, whitespace collapsed."""
    return " ".join(words(text))


def repeats_claim(claim: str, evidence: str) -> bool:
    """"Repeats claim" (seed 001 §4.1): the normalised claim occurs in the normalised evidence,
    on whole words ("cat sat" is not repeated by "concat sat"). [repo] compared the joined NLTK
    tokens as plain substrings, so a claim could match inside a longer word."""
    c = normalise(claim)
    return bool(c) and f" {c} " in f" {normalise(evidence)} "


# ------------------------------------------------------------------ Flesch reading ease

# Flesch (1948) as textstat computes it for English (textstat 0.7.13, backend/metrics).
FLESCH_BASE, FLESCH_SENTENCE_LENGTH, FLESCH_SYLLABLES_PER_WORD = 206.835, 1.015, 84.6
_TS_NONCONTRACTION_APOSTROPHE = re.compile(r"'(?![tsd]|ve|ll|re)")
_TS_PUNCTUATION = re.compile(r"[^\w\s']")
_TS_SENTENCE = re.compile(r"\b[^.!?]+[.!?]*")


def _textstat_words(text: str) -> list[str]:
    # textstat's list_words(rm_punctuation=True): apostrophes survive only in contractions
    return _TS_PUNCTUATION.sub("", _TS_NONCONTRACTION_APOSTROPHE.sub("", text)).split()


def _textstat_sentences(text: str) -> int:
    # textstat's count_sentences: a "sentence" of at most 2 words is not counted; at least 1
    found = _TS_SENTENCE.findall(text)
    return max(1, len(found) - sum(1 for s in found if len(_textstat_words(s)) <= 2))


def hyphenator() -> Any:
    """A pyphen en_US hyphenator (its dictionary ships inside the package: no download)."""
    import pyphen

    return pyphen.Pyphen(lang="en_US")


def flesch(text: str, hyph: Any | None = None) -> float | None:
    """Flesch reading ease of the text (seed 001 §4.1 "Difficult to understand"):
    206.835 − 1.015·(words/sentences) − 84.6·(syllables/words); higher is easier (DRUID
    evidence: 53.54 ± 16.60, Table 10). None when the text has no words.

    [repo] called ``textstat.flesch_reading_ease``. We reproduce textstat's English word and
    sentence counting exactly but count syllables with pyphen alone: textstat 0.7.13 looks
    words up in CMUdict first and, when NLTK's copy of CMUdict is missing, *downloads it at run
    time* (``nltk.download('cmudict')``), which claimscope must never do (and it drags in
    NLTK). textstat itself falls back to pyphen for words CMUdict lacks, and older textstat
    releases used pyphen only, so this is textstat's own fallback path. Not rounded."""
    ws = _textstat_words(text or "")
    if not ws:
        return None
    hyph = hyph or hyphenator()
    syllables = sum(len(hyph.positions(w.lower())) + 1 for w in ws)
    return (
        FLESCH_BASE
        - FLESCH_SENTENCE_LENGTH * len(ws) / _textstat_sentences(text)
        - FLESCH_SYLLABLES_PER_WORD * syllables / len(ws)
    )


# ------------------------------------------------------------------ data files


def read_list(text: str, *, inline_comments: bool = False) -> list[str]:
    """Entries of a data file: one a line, stripped; blank lines and lines starting with '#'
    skipped; with ``inline_comments`` also everything after a '#'."""
    out = []
    for line in text.splitlines():
        if inline_comments:
            line = line.split("#", 1)[0]
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def data_text(name: str) -> str:
    """A file shipped in ``core/diagnostics/data/`` (package data, so it works from a wheel too)."""
    return resources.files("core.diagnostics").joinpath("data", name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ phrase matching

# Whole-word boundaries consistent with :func:`words`: a match may not start or end inside a
# word, nor next to an apostrophe/hyphen that joins it to one ("well" is not in "well-known").
_BEFORE = r"(?<!\w)(?<!\w['\-])"
_AFTER = r"(?!\w)(?!['\-]\w)"
_PHRASE_SEP = r"(?:\s*,\s*|\s+)"  # "sorry , but" in a lexicon matches "sorry, but" and "sorry but"


def _match_text(text: str) -> str:
    """The form lexicons are matched against: lower-case, ’ as '."""
    return (text or "").lower().replace("’", "'")


def inflections(word: str) -> frozenset[str]:
    """A word and its regular inflections (-s/-es/-d/-ed/-ing, e-drop, y→ies/ied, doubled final
    consonant). A stand-in for the lemma matching [repo] did with stanza; forms that are not
    English words are harmless because they never occur."""
    forms = {word, word + "s", word + "es", word + "d", word + "ed", word + "ing"}
    if word.endswith("e"):
        forms.add(word[:-1] + "ing")
    if len(word) > 2 and word.endswith("y") and word[-2] not in "aeiou":
        forms |= {word[:-1] + "ies", word[:-1] + "ied"}
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdfglmnprt]", word):
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return frozenset(forms)


def phrase_pattern(phrase: str, *, inflect: bool = False) -> re.Pattern[str]:
    """A case-folded whole-word pattern for a lexicon phrase (match it against
    ``_match_text(text)``). Single words get their inflections when ``inflect``."""
    parts = [p for p in re.split(r"[\s,]+", phrase.strip().lower().replace("’", "'")) if p]
    if not parts:
        raise ValueError("empty phrase")
    if inflect and len(parts) == 1:
        body = "(?:" + "|".join(re.escape(f) for f in sorted(inflections(parts[0]), key=len, reverse=True)) + ")"
    else:
        body = _PHRASE_SEP.join(re.escape(p) for p in parts)
    return re.compile(_BEFORE + body + _AFTER)


@dataclass(frozen=True)
class PhraseLexicon:
    """A list of phrases, each with its compiled whole-word pattern."""

    entries: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...] = field(repr=False)

    @classmethod
    def of(cls, entries: Iterable[str], *, inflect: bool = False) -> PhraseLexicon:
        uniq = tuple(dict.fromkeys(e.strip().lower() for e in entries if e.strip()))
        return cls(uniq, tuple(phrase_pattern(e, inflect=inflect) for e in uniq))

    def matches(self, text: str) -> list[tuple[str, re.Match[str]]]:
        """(entry, match) for every occurrence, in ``_match_text(text)`` coordinates."""
        t = _match_text(text)
        return [(e, m) for e, p in zip(self.entries, self.patterns, strict=True) for m in p.finditer(t)]


def _first_seen(found: Iterable[tuple[int, str]]) -> tuple[str, ...]:
    """Unique labels ordered by where they first occur."""
    first: dict[str, int] = {}
    for pos, label in found:
        if label not in first or pos < first[label]:
            first[label] = pos
    return tuple(sorted(first, key=lambda k: (first[k], k)))


# ------------------------------------------------------------------ hedging (Islam et al. 2020)

# [repo]'s HedgeDetector.is_true_hedge_term (after Islam et al.'s reference code) keeps some
# hedge words only in certain syntactic contexts, read from a stanza dependency parse. Without
# a parser we approximate each rule from the neighbouring words:
#   first_person  "I/we (do not) (…ly) believe": [repo] needs the verb as the sentence root
#                 with "I"/"we" as its subject ("we believe", not "experts believe");
#   not_in        "think" not followed by a preposition/complementiser (stanza tag IN; [repo]
#                 thereby also drops "think that", which we reproduce);
#   clause        "assume" with a clausal complement: followed by "that" or a subject pronoun
#                 ("assume they are…", not "assume the role");
#   not_to        "suppose" not as "supposed to";
#   to            "tend" with an infinitive ("tends to");
#   to_or_that    "appear" with a complement ("appears to", "it appears that"; not "appeared
#                 in court");
#   not_than      "rather" not in "rather than".
# Entries without a rule count wherever they occur, as in [repo] (including "sure", which
# [repo] keeps without Islam et al.'s negation check). [repo] checked only the first occurrence
# of a word in a sentence; we accept any occurrence that passes its rule.
HEDGE_RULES: dict[str, str] = {
    **dict.fromkeys(["feel", "suggest", "believe", "consider", "doubt", "guess", "hope"], "first_person"),
    "think": "not_in",
    "assume": "clause",
    "suppose": "not_to",
    "tend": "to",
    "appear": "to_or_that",
    "rather": "not_than",
}
_IN_WORDS = (
    "about|above|across|after|against|along|among|around|as|at|before|behind|below|beneath|beside|between|beyond|by|"
    "despite|during|for|from|if|in|inside|into|like|near|of|off|on|onto|out|outside|over|since|than|that|through|"
    "throughout|till|toward|towards|under|unless|until|upon|whether|while|with|within|without"
)
_NEXT = {
    "not_in": re.compile(rf"\s+(?:{_IN_WORDS})(?![\w'])"),
    "clause": re.compile(r"\s+(?:that|it|he|she|they|we|you|i|there)(?![\w'])"),
    "to": re.compile(r"\s+to(?![\w'])"),
    "to_or_that": re.compile(r"\s+(?:to|that)(?![\w'])"),
    "not_than": re.compile(r"\s+than(?![\w'])"),
}
_FIRST_PERSON_BEFORE = re.compile(r"(?<![\w'])(?:i|we)\s+(?:(?:do|did)\s+not\s+|(?:don't|didn't)\s+)?(?:[a-z]+ly\s+)?\Z")


def _hedge_rule_ok(rule: str | None, text: str, m: re.Match[str]) -> bool:
    if rule is None:
        return True
    if rule == "first_person":
        return _FIRST_PERSON_BEFORE.search(text, 0, m.start()) is not None
    if rule == "not_to":
        return _NEXT["to"].match(text, m.end()) is None
    follows = _NEXT[rule].match(text, m.end()) is not None
    return not follows if rule.startswith("not_") else follows


@dataclass(frozen=True)
class Lexicons:
    """The three cue lists of the text characteristics, loaded once per owner (no globals)."""

    hedge_words: PhraseLexicon
    discourse_markers: PhraseLexicon
    source_cues: SourceCues

    @classmethod
    def load(cls) -> Lexicons:
        return cls(
            PhraseLexicon.of(read_list(data_text("hedge_words.txt")), inflect=True),
            PhraseLexicon.of(read_list(data_text("hedge_discourse_markers.txt"))),
            SourceCues.parse(read_list(data_text("external_source_cues.txt"))),
        )


def hedges(text: str, lexicons: Lexicons | None = None) -> tuple[str, ...]:
    """Hedge words of Islam et al. (2020) in the text (seed 001 §4.1 "Uncertain", "Contains
    hedging"; 36.54 % of DRUID evidence), as lexicon entries ("suggests" → "suggest") in order
    of first occurrence. Whole words, case-insensitive, inflections included, context rules of
    :data:`HEDGE_RULES` applied."""
    lex = lexicons or Lexicons.load()
    t = _match_text(text)
    return _first_seen(
        (m.start(), e) for e, m in lex.hedge_words.matches(text) if _hedge_rule_ok(HEDGE_RULES.get(e), t, m)
    )


def hedge_discourse_markers(text: str, lexicons: Lexicons | None = None) -> tuple[str, ...]:
    """Hedging discourse markers of Islam et al. (2020) in the text (seed 001 §4.1 "Contains
    hedging discourse"; 52.33 % of DRUID evidence): multi-word markers on word boundaries,
    case-insensitive, in order of first occurrence."""
    lex = lexicons or Lexicons.load()
    return _first_seen((m.start(), e) for e, m in lex.discourse_markers.matches(text))


# ------------------------------------------------------------------ external sources


@dataclass(frozen=True)
class SourceCues:
    """Cues of a reference to an external source: phrases, and ``re:`` regular expressions."""

    phrases: PhraseLexicon
    regexes: tuple[re.Pattern[str], ...] = field(repr=False)

    @classmethod
    def parse(cls, lines: Iterable[str]) -> SourceCues:
        phrases, regexes = [], []
        for line in lines:
            if line.startswith("re:"):
                regexes.append(re.compile(line[3:].strip(), re.IGNORECASE))
            else:
                phrases.append(line)
        return cls(PhraseLexicon.of(phrases), tuple(regexes))

    def find(self, text: str) -> tuple[str, ...]:
        """Phrase cues as written in the list; for each regex, the text of its first match."""
        found = [(m.start(), e) for e, m in self.phrases.matches(text)]
        for rx in self.regexes:
            m = rx.search(text or "")
            if m:
                found.append((m.start(), m.group()))
        return _first_seen(found)


def external_source_cues(text: str, lexicons: Lexicons | None = None) -> tuple[str, ...]:
    """Rule-based cues that the text refers to an external source (seed 001 §4.1 "Refers to
    external source"; 40.55 % of DRUID evidence by the paper's LLM). The paper asked an LLM
    (App. H; :func:`external_source_probability` does that locally); the cue list
    (``core/diagnostics/data/external_source_cues.txt``) is the cheap, explainable default built from the
    prompt's own examples ('a study', '[1]', 'the BBC', a news channel)."""
    return (lexicons or Lexicons.load()).source_cues.find(text)


# The paper's prompt (seed 001 App. H), verbatim; [repo] appended "\n\nText: <text>".
EXTERNAL_SOURCE_PROMPT = (
    "Does the following text refer to an external source or not? Admissible external sources are for "
    "example ‘a study’, ‘[1]’, ‘the BBC’, a news channel etc. Answer with a ‘Yes’ or ‘No’."
)
EXTERNAL_SOURCE_ANSWERS = ("Yes", "No")


def external_source_messages(text: str) -> list[Message]:
    """The App. H question as chat messages. The text is untrusted evidence, so it goes in as
    fenced data (``models.llm.Fenced``; the system prompt says fenced text is never an
    instruction), and the answer format is repeated after it."""
    return [
        ("system", FENCE_RULE),
        ("user", [EXTERNAL_SOURCE_PROMPT + "\n\nText:\n", Fenced("TEXT", text or ""), "\n\nAnswer with a ‘Yes’ or ‘No’."]),
    ]


def external_source_probability(llm: LLM, text: str) -> float:
    """P(Yes) / (P(Yes) + P(No)) for the App. H question, read from the next-token
    log-probabilities of "Yes" and "No" (not sampled), so it is deterministic and graded.
    The paper sampled a Yes/No answer from Command R+; threshold at 0.5 to get its binary label.

    A text too long for the model's context is cut from the end (by a quarter at a time) until
    the prompt fits; Command R+ had a 128k-token context, the embedded SmolLM2 has 2k."""
    body = text or ""
    while True:
        try:
            lp_yes, lp_no = llm.next_token_logprobs(external_source_messages(body), EXTERNAL_SOURCE_ANSWERS)
            break
        except LLMOutputError:
            if len(body) < 4:
                raise
            body = body[: len(body) * 3 // 4]
    return 1.0 / (1.0 + math.exp(float(lp_no) - float(lp_yes)))


# ------------------------------------------------------------------ entities


def entity_overlap(claim_entities: Iterable[str], evidence: str) -> float | None:
    """"Claim entity overlap" (seed 001 §4.1 "Implicit"): the share of the claim's named
    entities (unique, lower-cased entity text) that occur in the evidence; 0 = maximally
    implicit, 1 = every entity named again (DRUID: 0.56 ± 0.40). None when the claim has no
    entities. An entity "occurs" when its text appears in the lower-cased evidence on word
    boundaries ("obama" is not found in "obamacare"). [repo] ran NER (en_core_web_trf) on the
    evidence too and intersected the two entity sets; matching the text directly needs NER on
    the short claim only and does not miss entities the tagger fails to find in long evidence."""
    ents = {e.strip().lower().replace("’", "'") for e in claim_entities if e and e.strip()}
    if not ents:
        return None
    ev = _match_text(evidence)
    found = sum(1 for e in ents if re.search(_BEFORE + re.escape(e) + _AFTER, ev))
    return found / len(ents)


# ------------------------------------------------------------------ verdict words

_TRUE = re.compile(r"\btrue\b", re.IGNORECASE)
_FALSE = re.compile(r"\bfalse\b", re.IGNORECASE)


def contains_true(text: str) -> bool:
    """The evidence contains the word "true" (seed 001 §4.1 "Additional characteristics"; 4.06 %
    of DRUID evidence): whole word, any case ("untrue" does not count)."""
    return _TRUE.search(text or "") is not None


def contains_false(text: str) -> bool:
    """The evidence contains the word "false" (9.02 % of DRUID evidence); whole word, any case."""
    return _FALSE.search(text or "") is not None


# ------------------------------------------------------------------ source domains

FACTCHECK_FILE = "factcheck_domains.txt"
UNRELIABLE_FILE = "unreliable_domains.txt"
# .gov / .edu hosts, also under a country code (.gov.uk, .edu.au): [repo] never marks them
# unreliable (its is_gov_page / is_edu_page).
_GOV_EDU = re.compile(r"(?:^|\.)(?:gov|edu)(?:\.[a-z]{2})?$")


def url_host(url: str | None) -> str | None:
    """Lower-cased host of a URL (a bare "example.com/x" is read as a URL); None if none."""
    if not url or not url.strip():
        return None
    u = url.strip()
    if "://" not in u:
        u = "//" + u
    try:
        host = urlsplit(u).hostname
    except ValueError:
        return None
    host = (host or "").strip(".").lower()
    return host or None


def domain_of(url: str | None) -> str | None:
    """The evidence URL's host without a leading "www." ("www.politifact.com/x" →
    "politifact.com"). Subdomains are kept ("srilanka.factcrescendo.com"): cutting to the
    registrable domain would need the public-suffix list and would hide which edition it was."""
    host = url_host(url)
    if host is None:
        return None
    return host[4:] if host.startswith("www.") and host.count(".") >= 2 else host


def _domain_entry(line: str) -> tuple[str, str]:
    """(host, path prefix) of a domain-list entry: scheme, "www.", "*." and "/*" dropped."""
    e = line.strip().lower()
    e = re.sub(r"^[a-z]+://", "", e)
    e = re.sub(r"^(?:\*\.|www\.)", "", e)
    host, _, path = e.partition("/")
    return host.strip("."), path.rstrip("*").strip("/")


def _host_suffixes(host: str) -> list[str]:
    labels = host.split(".")
    return [".".join(labels[i:]) for i in range(len(labels))]


def is_gov_or_edu(host: str | None) -> bool:
    return bool(host) and _GOV_EDU.search(host) is not None


@dataclass(frozen=True)
class DomainLists:
    """Fact-check and unreliable site lists (entries as in the data files' headers)."""

    factcheck: tuple[str, ...]
    unreliable: tuple[str, ...]
    _fc: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)
    _un: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_fc", self._index(self.factcheck))
        object.__setattr__(self, "_un", self._index(self.unreliable))

    @staticmethod
    def _index(entries: Iterable[str]) -> dict[str, tuple[str, ...]]:
        idx: dict[str, list[str]] = {}
        for entry in entries:
            host, path = _domain_entry(entry)
            if host:
                idx.setdefault(host, []).append(path)
        return {h: tuple(p) for h, p in idx.items()}

    @staticmethod
    def _matches(url: str | None, idx: dict[str, tuple[str, ...]]) -> bool:
        host = url_host(url)
        if host is None:
            return False
        u = url.strip() if url else ""
        path = urlsplit(u if "://" in u else "//" + u).path.lower().strip("/")
        for suffix in _host_suffixes(host):
            for prefix in idx.get(suffix, ()):
                if not prefix or path == prefix or path.startswith(prefix + "/"):
                    return True
        return False

    def is_factcheck(self, url: str | None) -> bool:
        """The URL's host, or a parent domain of it, is on the fact-check list (with the
        entry's path prefix, if it has one). Seed 001 §4.1 "Fact-check source". [repo] also
        counted any URL containing "fact-check", "factcheck", "politifact" or "misinformation";
        we do not, since any blog post with such a slug would count — list the site instead."""
        return self._matches(url, self._fc)

    def is_unreliable(self, url: str | None) -> bool:
        """On the unreliable list (MBFC questionable / conspiracy-pseudoscience / satire; seed
        001 §4.1 "Unreliable"), and never for .gov/.edu hosts ([repo])."""
        return not is_gov_or_edu(url_host(url)) and self._matches(url, self._un)


def load_domain_lists(user_dir: Path | None = None) -> DomainLists:
    """The fact-check and unreliable site lists. The defaults ship in ``core/diagnostics/data/``; a
    ``factcheck_domains.txt`` or ``unreliable_domains.txt`` in ``user_dir`` REPLACES the
    corresponding default (it does not add to it — copy the default first to extend it).
    '#' comments and blank lines are ignored; entries are lower-cased."""

    def entries(name: str) -> tuple[str, ...]:
        user = Path(user_dir) / name if user_dir is not None else None
        text = user.read_text(encoding="utf-8") if user is not None and user.is_file() else data_text(name)
        return tuple(dict.fromkeys(e.lower() for e in read_list(text, inline_comments=True)))

    return DomainLists(entries(FACTCHECK_FILE), entries(UNRELIABLE_FILE))


# ------------------------------------------------------------------ dates

_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?")


def parse_partial_date(text: str | None) -> tuple[int, ...] | None:
    """An ISO date at year, month or day precision ("2023", "2023-05", "2023-05-17"; a time
    part after "T" or a space is ignored) as (year,), (year, month) or (year, month, day);
    None if it is not a valid date."""
    if not text:
        return None
    m = _DATE.fullmatch(text.strip())
    if not m:
        return None
    parts = tuple(int(g) for g in m.groups() if g is not None)
    try:
        date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError:
        return None
    return parts


def published_after(claim_date: str | None, evidence_date: str | None) -> bool | None:
    """"Published after claim" (seed 001 §4.1; leakage, 50.26 % of DRUID evidence): evidence
    date > claim date, compared at the precision both dates have. None when either date is
    missing or unparseable, and when the dates agree at the common precision but one of them
    is more precise ("2023" vs "2023-05-17" cannot be ordered)."""
    c, e = parse_partial_date(claim_date), parse_partial_date(evidence_date)
    if c is None or e is None:
        return None
    n = min(len(c), len(e))
    if e[:n] != c[:n]:
        return e[:n] > c[:n]
    return False if len(c) == len(e) else None


# ------------------------------------------------------------------ the record

HARD_TO_READ_BELOW = 30.0  # the Flesch scale's "very difficult" band (college graduate)


@dataclass(frozen=True)
class Characteristics:
    """Seed 001 §4.1 characteristics of one claim–evidence pair (Table 10 gives DRUID's
    distribution of each). Lengths are in characters."""

    jaccard: float
    claim_overlap: float
    repeats_claim: bool
    flesch_reading_ease: float | None
    claim_length: int
    evidence_length: int
    entity_overlap: float | None
    hedge_words: tuple[str, ...]
    hedge_discourse_markers: tuple[str, ...]
    refers_to_external_source: bool
    external_source_cues: tuple[str, ...]
    contains_true: bool
    contains_false: bool
    domain: str | None
    factcheck_source: bool
    unreliable_source: bool
    published_after_claim: bool | None

    def flags(self) -> list[str]:
        """Short labels of the notable characteristics, most telling first: verdict words and
        source type predict context usage best in the paper (§5), then the text properties.
        "hard to read" uses the Flesch scale's own band (< 30), not a number from the paper."""
        out = []
        if self.contains_false:
            out.append('says "false"')
        if self.contains_true:
            out.append('says "true"')
        if self.factcheck_source:
            out.append("fact-check site")
        if self.unreliable_source:
            out.append("unreliable source")
        if self.published_after_claim:
            out.append("published after claim")
        if self.repeats_claim:
            out.append("repeats claim")
        if self.refers_to_external_source:
            out.append("cites a source")
        if self.hedge_words:
            out.append("hedging")
        if self.hedge_discourse_markers:
            out.append("hedging discourse")
        if self.entity_overlap == 0.0:
            out.append("none of the claim's entities")
        if self.flesch_reading_ease is not None and self.flesch_reading_ease < HARD_TO_READ_BELOW:
            out.append("hard to read")
        return out

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists) with the same keys as the fields."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


class Characterizer:
    """Computes :class:`Characteristics`; holds the loaded lexicons, domain lists and
    hyphenator so that many pairs are cheap.

    ``entities`` is a named-entity function (e.g. ``models.nlp.SpacyEntities().entities``);
    without it ``entity_overlap`` is None. ``domains`` defaults to :func:`load_domain_lists`."""

    def __init__(
        self, entities: Callable[[str], list[str]] | None = None, domains: DomainLists | None = None,
        lexicons: Lexicons | None = None,
    ) -> None:
        self.entities = entities
        self.domains = domains if domains is not None else load_domain_lists()
        self.lexicons = lexicons if lexicons is not None else Lexicons.load()
        self._hyph: Any | None = None
        self._claim_entities: dict[str, tuple[str, ...]] = {}
        self._results: dict[tuple, Characteristics] = {}

    def claim_entities(self, claim: str) -> tuple[str, ...]:
        """NER on the claim, remembered per claim (a claim is compared with many passages)."""
        if self.entities is None:
            return ()
        if claim not in self._claim_entities:
            if len(self._claim_entities) > 1024:
                self._claim_entities.clear()
            self._claim_entities[claim] = tuple(self.entities(claim))
        return self._claim_entities[claim]

    def characterize(
        self, claim: str, evidence: str, *, url: str | None = None, claim_date: str | None = None,
        evidence_date: str | None = None,
    ) -> Characteristics:
        """The pair's characteristics, remembered per pair: the TUI's inspector asks again for
        every passage each time the cursor returns to a claim (≈ 6–20 ms a pair)."""
        key = (claim, evidence, url, claim_date, evidence_date)
        if key not in self._results:
            if len(self._results) > 4096:
                self._results.clear()
            self._results[key] = self._compute(claim, evidence, url, claim_date, evidence_date)
        return self._results[key]

    def _compute(
        self, claim: str, evidence: str, url: str | None, claim_date: str | None, evidence_date: str | None,
    ) -> Characteristics:
        claim, evidence = claim or "", evidence or ""
        if self._hyph is None:
            self._hyph = hyphenator()
        cues = self.lexicons.source_cues.find(evidence)
        return Characteristics(
            jaccard=jaccard(claim, evidence),
            claim_overlap=claim_overlap(claim, evidence),
            repeats_claim=repeats_claim(claim, evidence),
            flesch_reading_ease=flesch(evidence, self._hyph),
            claim_length=len(claim),
            evidence_length=len(evidence),
            entity_overlap=entity_overlap(self.claim_entities(claim), evidence) if self.entities else None,
            hedge_words=hedges(evidence, self.lexicons),
            hedge_discourse_markers=hedge_discourse_markers(evidence, self.lexicons),
            refers_to_external_source=bool(cues),
            external_source_cues=cues,
            contains_true=contains_true(evidence),
            contains_false=contains_false(evidence),
            domain=domain_of(url),
            factcheck_source=self.domains.is_factcheck(url),
            unreliable_source=self.domains.is_unreliable(url),
            published_after_claim=published_after(claim_date, evidence_date),
        )
