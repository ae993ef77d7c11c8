"""The ``rules`` decomposer: deterministic atomic claims from spaCy's dependency parse.

What it does to each sentence (conservatively: a shape the small parser gets wrong often
is left whole rather than split into wrong claims). Claims are standalone and atomic (seed
004 §3.1); the splits are the ones FActScore's human annotators make most often (measured
by ``claimscope eval decompose --match jaccard``, docs/benchmarks.md):
- coordinated predicates share the subject: "She was born in Warsaw and moved to Paris" →
  "She was born in Warsaw." + "She moved to Paris." (an auxiliary is shared only with a
  conjunct that needs one; an object after the last verb is shared: "has written and
  arranged hundreds of songs");
- coordinated objects split: "discovered radium and polonium" → one claim each; coordinated
  *subjects* never split ("Tom and Jerry met" is one fact), nor names ("Rizzoli & Isles",
  "non-fiction", a quoted title "Fire and Rain"); an "and" after a name with "&" still lists
  ("Johnson & Johnson and Pfizer" → one claim each);
- quoted titles are whole in every claim, marks included, or absent ("for his album "Art and
  Life"", never 'for his album ""'); a list of them gives one claim per title, read off the
  words where the parser mangles it ("including "Matie", "Girls Dem Sugar" and "Who Am I"");
- adverbial clauses become facts of their own, as FActScore's annotators write them: "After
  appearing in commercials, X landed …" / "…, starring in the film Y" → "X appeared in
  commercials." / "X starred in the film Y." (the verb in its sentence's tense); "…, while her mother
  was a professor" → "Her mother was a professor.";
- nationality apart from occupation, each occupation apart: "an American actress and
  singer" → "is American" + "is an actress" + "is a singer"; "a Polish-born physicist" → "was
  Polish-born" + "was a physicist"; a list the parser hangs on its last noun ("a Venezuelan model
  and beauty pageant titleholder") splits the same way; "X is a Y who VP" → + "X VP", also
  where the parser hangs "who" on a place ("a boxer from the United Kingdom who was born …");
- a participle set off by commas is a fact about the subject: "Mount Everest, located in the
  Himalayas, is …" → + "Mount Everest is located in the Himalayas."; "a tower, designed by A and
  completed in 1889" → + "was designed by A" + "was completed in 1889"; "an actress best known
  for Y" → "is an actress" + "is best known for Y";
- "co-starred", "re-released": a hyphenated prefix stays on its word (spaCy splits it off);
- birth and death details one per claim: "born on D in P" → "was born on D" + "was born in
  P", also from "X (born D) is …" and "an actor born in P"; a lifespan "X (1922–1997) was …" →
  "X was born in 1922." + "X died in 1997."; place chains: "in Houston, Texas"
  → "in Houston" + "Houston is in Texas";
- examples: "films such as A and B" → "… films", "… A", "… B", "A is a film", "B is a film";
  names in apposition: "the adult novel, The Intoxicating Life" → both, + "The Intoxicating
  Life is an adult novel";
- coordinated modifiers: "his aggressive and powerful style" → one claim each; a verb with
  several adjuncts (where, when, with whom) → one claim per adjunct;
- appositives and non-restrictive relative clauses become claims of their own: "Curie, a
  physicist, won …" → + "Curie was a physicist."; "his career, which began in 1970" → +
  "His career began in 1970."; "…, where she became a semi-finalist" → + "She became …";
- decontextualisation (standalone claims, what a check needs; ``resolve_pronouns=False``
  keeps the pronouns, FActScore's style): he / she / him / his / her are replaced by the *answer's subject*
  (the proper-noun subject of its first sentences), not by the last name seen: in a bio,
  "She also had recurring roles on …" is about the bio's subject, whichever character was
  named last; a pronoun after the subject's name in the same claim stays. Discourse openers
  ("Overall,", "In addition to his writing,") and "also" point at the rest of the answer and
  are dropped; citation markers ("[1]") are blanked before parsing;
- numbers, dates and qualifiers stay with the words they modify (whole subtrees move).

Check-worthiness (FActScore / VeriScore practice, seeds 002 §6.1.5, 004): questions,
abstentions ("I'm sorry, I cannot…"), opinions ("I think…") and advice ("You should…")
are kept but marked not checkable, with the reason.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from core.decompose import fields as fields_module
from core.decompose.base import Claim, code_hash, trimmed
from core.decompose.fields import date_preposition, read_field, read_lifespan, value_is_clause
from models import nlp as nlp_module
from models.registry import EMBEDDED_SPACY

_ABSTAIN = re.compile(
    r"\b(i'?m sorry|i am sorry|as an ai|as a language model|i (?:cannot|can't|can not|am unable to|"
    r"am not able to|don't have|do not have|couldn't find|could not find)|i'm not able to|"
    r"there is no (?:information|record)|no information (?:is )?available)\b",
    re.IGNORECASE,
)
_OPINION = re.compile(r"^\s*(i think|i believe|i feel|in my (?:opinion|view)|personally|i would say)\b", re.IGNORECASE)
_ADVICE = re.compile(r"\b(you should|you must|you need to|you can|it is (?:recommended|advisable)|we recommend)\b", re.IGNORECASE)
# a chat answer's frame around its content: "I hope this helps!", "Let me know if …", "Sure!",
# "Here are some facts about X:" — nothing in it is about the world
_CONVERSATIONAL = re.compile(
    r"^\W*(?:i hope (?:this|that|it) helps|let me know|feel free|i'?d be (?:happy|glad) to|i am (?:happy|glad) to|"
    r"(?:happy to help|(?:great|good) question|sure|certainly|of course|absolutely)\W*$|"
    r"here(?: is|'s| are) (?:a |an |some |the )?(?:summary|overview|list|breakdown|answer|facts|key|brief|short|few|more)|"
    r"(?:i'?m|i am) (?:glad|happy|delighted) (?:you|that you|to)|thanks? (?:you )?for (?:asking|your question|the question)|"
    r"that'?s an? (?:great|good|interesting|excellent) question)",
    re.IGNORECASE,
)
# a lead-in whose list the Markdown reader made sentences of their own: "Some possible effects are:",
# "… negative effects such as:" end where their complement should be (a person reads the list as it)
_LEAD_IN = re.compile(r"\b(?:is|are|was|were|include|includes|included|including|such as|as follows|the following|"
                      r"following|namely)\s*[.:]$", re.IGNORECASE)
# a lead-in that ends on its preposition ("This can be done by:"), when a line break follows it (is_lead_in)
_LEAD_PREP = re.compile(r"\b(?:by|to|with|for|of|from|like|into|about|through|via)\s*[.:]$", re.IGNORECASE)
# irregular past forms the tagger reads as instructions when a line opens with them ("Won the 1921 Nobel Prize")
_PRETERITES = frozenset({"won", "wrote", "became", "began", "led", "took", "made", "gave", "held", "left",
                         "met", "saw", "sang", "spoke", "taught", "went", "grew", "drew", "rose", "fought",
                         "bought", "brought", "built", "found", "ran", "sold", "told", "stood", "threw",
                         "flew", "broke", "chose", "drove", "fell", "knew", "lost", "paid", "rode", "shot",
                         "sent", "spent", "struck", "swam", "understood", "wore"})
# verbs a line opens with in the passive although an object follows ("Awarded the Nobel Prize in 1903")
_PASSIVE_WITH_OBJECT = frozenset({"awarded", "given", "granted", "offered", "named", "called", "elected", "appointed",
                                  "crowned", "voted", "dubbed", "titled"})
_TOPIC_LABEL = re.compile(r"\s*([A-Z][\w'’-]*(?:[ -][\w'’-]+){0,5}\s*:)\s+(?=\S)")  # "Theory of relativity: …" at a line's start
_LEAD_TAIL = re.compile(r"(?:\s+(?:as follows|the following|following))?\s*[.:]$", re.IGNORECASE)  # what a completed item drops
_URL_ONLY = re.compile(r"^\W*(?:(?:https?://|www\.)\S+\W*)+$", re.IGNORECASE)  # a reference line
_CITATION = re.compile(r"\[\d+(?:[,\s-]+\d+)*\]")
_PRONOUN_SUBJ = {"he", "she"}
_PRONOUN_OBJ = {"him"}
_PRONOUN_POSS = {"his", "her"}
_REL_PRONOUNS = {"which", "who", "that"}
_VAGUE = {"several", "various", "other", "many", "some", "numerous", "different", "multiple", "few", "such"}
_COMPLEMENTS = ("dobj", "attr", "prep", "ccomp", "xcomp", "acomp", "oprd", "dative", "pobj", "prt", "agent")
_SHARED_MODS = ("det", "amod", "nummod", "poss", "predet")
_RELATIONAL_PREPS = {"between", "among", "amongst"}
# verbs that take no object: a place after "X and Y" is theirs too ("lives and works in London")
_INTRANSITIVE = frozenset({"live", "work", "study", "grow", "teach", "perform", "reside", "die", "retire", "settle",
                           "compete", "train", "serve", "tour", "rise", "remain", "stay", "appear", "return"})
_SHARES = {"many", "some", "most", "all", "several", "few", "none", "both", "one", "each", "half"}  # "many of which"
_TIME_MARKS = {"after", "before", "since", "upon", "while"}  # an -ing clause of these is a fact of its own
_CONTRAST = {"while", "whereas", "although", "though"}  # a clause of these, with its own subject, too
# nouns that only count what follows "of": "a number of artists", "a string of hits"
_QUANTITY = {"number", "string", "series", "variety", "range", "host", "couple", "handful", "lot", "dozen",
             "collection", "set", "group", "list", "array", "multitude", "slew", "plethora", "wealth", "majority"}
# a subject whose bracketed years are no life (rules._lifespan): places, events, works, laws, products
_NOT_A_LIFE = frozenset({"GPE", "LOC", "FAC", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT", "NORP", "LANGUAGE", "DATE"})
# what an organisation is called ("Nirvana (1987–1994) was a band"): spaCy's small model tags many a
# person's name ORG, so the noun the sentence predicates decides
_GROUP_NOUNS = frozenset({"company", "airline", "band", "group", "duo", "trio", "organization", "organisation", "party",
                          "firm", "corporation", "club", "team", "newspaper", "magazine", "dynasty", "empire", "kingdom",
                          "state", "republic", "war", "movement", "label", "school", "university", "league", "network",
                          "channel", "series", "show", "brand", "bank", "agency", "era", "period", "project", "program",
                          "programme", "publication", "journal", "studio", "restaurant", "store", "church", "order"})
# nouns that exist to carry a name: in apposition to one, the name is the fact ("the chemical symbol Au")
_NAMING_NOUNS = {"symbol", "name", "nickname", "code", "abbreviation", "acronym", "motto", "slogan", "formula",
                 "designation", "alias", "pseudonym", "ticker", "callsign", "epithet", "moniker"}
# auxiliaries that can stand for a whole predicate left out ("…, but strawberries are not"; _elided)
_ELLIPSIS_AUX = {"be", "do", "have", "can", "could", "will", "would", "shall", "should", "may", "might", "must"}
# "Today, Ada Lovelace Day is celebrated on …": the time of the telling, no fact of its own (_adjuncts)
_NOW = {"today", "now", "currently", "nowadays", "presently"}
# verbs whose "from … to …" with everything around it is one fact (_adjuncts)
_RANGE_VERBS = {"range", "vary", "fluctuate", "span", "extend", "stretch"}
# participles that describe a state, not an event: "X, located in Y," → "X is located in Y" (else "X was designed …")
_STATIVE = {"located", "based", "situated", "headquartered", "known", "named", "called", "considered", "regarded", "made", "composed"}
# what has a release year in brackets (_release_years), and the small words inside a title
_WORKS = frozenset({"film", "movie", "series", "show", "sitcom", "drama", "programme", "program", "album", "single",
                    "song", "record", "book", "novel", "play", "opera", "musical", "game", "role", "credit", "work",
                    "soap", "telenovela", "documentary", "miniseries", "episode", "track", "ep", "title"})
_TITLE_WORDS = frozenset({"a", "an", "the", "and", "of", "in", "on", "to", "for", "with", "at", "from", "by", "or", "&"})
_YEARS = re.compile(r"((?:18|19|20)\d\d)(?:\s*[–—-]\s*((?:18|19|20)\d\d|present))?")
# prefixes spaCy's tokenizer splits off with their hyphen ("co-starred" → "co", "-", "starred")
_HYPHEN_PREFIXES = frozenset({"co", "non", "re", "pre", "self", "ex", "anti", "multi", "semi", "vice", "post", "mid"})


_DISCOURSE = re.compile(
    r"^(overall|in addition(?: to .+)?|additionally|furthermore|moreover|however|aside from .+|apart from .+|besides .+|outside (?:of )?.+|"
    r"since then|in summary|in conclusion|in short|as a result|as such|notably|in fact|indeed|actually|"
    r"interestingly|importantly|of note)$", re.IGNORECASE)
# a label before a colon that opens a sentence of a chat answer ("Note: he never won …"): blanked
# before parsing, like a citation marker, or the parser makes "Note" the sentence's root
_LABEL = re.compile(r"(^|[.!?][\"”’)\]]*\s+)((?:note|n\.b\.|fun fact|answer|short answer|tip|summary|in summary|"
                    r"update|important|key point|bottom line|tl;?dr)\s*:)(?=\s)", re.IGNORECASE)


def _join_prefixes(doc):
    """"co-starred", "co-founder", "self-titled" back into one token. Split, the prefix parses as a
    word of its own ("X is a co-founder and director" → "X is a co- director"); joined, the token
    takes the head word's place in the tree. Also one token: a name with "and" in it ("Bosnia and
    Herzegovina", "Trinidad and Tobago", "Johnson and Johnson"), which the
    parser coordinates like a list ("He was born in Bosnia." + "… in Herzegovina."; FActScore's
    annotators keep such a name whole). Character offsets, hence spans, do not change."""
    spans = [doc[t.i : t.i + 3] for t in doc[:-2] if t.lower_ in _HYPHEN_PREFIXES and doc[t.i + 1].text == "-"
             and not t.whitespace_ and not doc[t.i + 1].whitespace_ and doc[t.i + 2].is_alpha]
    spans += _and_names(doc)
    with doc.retokenize() as retokenizer:
        end = 0
        for span in sorted(spans, key=lambda s: (s.start, -s.end)):
            if span.start >= end:  # "co-co-…": spans may not overlap
                retokenizer.merge(span)
                end = span.end
    return doc


# countries and territories whose names hold an "and" (and Serbia and Montenegro, a state until 2006)
_AND_NAMES = re.compile(
    r"\b(?:Bosnia and Herzegovina|Trinidad and Tobago|Antigua and Barbuda|(?:Saint|St\.) Kitts and Nevis|"
    r"(?:Saint|St\.) Vincent and the Grenadines|S[ãa]o Tom[ée] and Pr[íi]ncipe|Turks and Caicos(?: Islands)?|"
    r"Wallis and Futuna|(?:Saint|St\.) Pierre and Miquelon|Heard Island and McDonald Islands|"
    r"South Georgia and the South Sandwich Islands|Serbia and Montenegro)\b")


def _and_names(doc) -> list[Any]:
    """The spans of names with "and" inside (see :func:`_join_prefixes`): a country of
    :data:`_AND_NAMES`, or a name "X and X" ("Johnson and Johnson"; not "the Premier League and
    League Cup"). The NER's entities are no guide: it reads "Romário and Ronaldinho" and "Best
    Picture and Best" as one organisation as often as "Beauty and the Beast" as one work."""
    out = [s for m in _AND_NAMES.finditer(doc.text) if (s := doc.char_span(m.start(), m.end())) is not None]
    out += [doc[t.i : t.i + 3] for t in doc[:-2] if t.pos_ == "PROPN" and doc[t.i + 1].lower_ == "and"
            and doc[t.i + 2].text == t.text and not (t.i > 0 and doc[t.i - 1].pos_ == "PROPN")
            and not (t.i + 3 < len(doc) and doc[t.i + 3].pos_ == "PROPN")]
    return out


def _amp_joined(tok) -> bool:
    """A conjunct joined by "&" ("Rizzoli & Isles", "Law & Order"): part of one name."""
    head = tok.head
    return any(c.dep_ == "cc" and c.text == "&" and min(head.i, tok.i) < c.i < max(head.i, tok.i) for c in head.children)


def _quoted(tok, other=None) -> bool:
    """Inside quotation marks (with ``other``: inside the same ones): a title ("Fire and Rain")
    is one name, never a list; "Matie", "Who Am I" are two."""
    sent = tok.sent
    marks = [t for t in sent if t.i < tok.i and t.text in ('"', "“", "”")]
    if len(marks) % 2 == 0:
        return False
    if other is None:
        return True
    lo, hi = sorted((tok.i, other.i))
    return _quoted(other) and not any(t.text in ('"', "“", "”") for t in sent.doc[lo + 1 : hi])


def _bracketed_acronym(tok) -> bool:
    """An acronym in brackets right after the words it shortens: "(WHO)", "(NSAIDs)", "(CuAAC)"."""
    doc, i = tok.doc, tok.i
    return (0 < i < len(doc) - 1 and doc[i - 1].text == "(" and doc[i + 1].text == ")"
            and re.fullmatch(r"(?=(?:[a-z]*[A-Z]){2})[A-Za-z&]{2,8}", tok.text) is not None)


def _bracketed_acronyms(sent) -> set[int]:
    """The tokens of a sentence's bracketed acronyms, brackets included: the parser hangs one on a
    word as an appositive ("Non-steroidal anti-inflammatory drugs and rest is NSAIDs.") or leaves it
    in the middle of a list ("at the Massachusetts Institute of Technology MIT"); what it says is
    no fact to check. Blanking them before parsing instead changed other parses (docs/benchmarks.md)."""
    return {j for t in sent if _bracketed_acronym(t) for j in (t.i - 1, t.i, t.i + 1)}


def _place_chain(tok) -> bool:
    """A place after a place with no "and" ("Moradabad, Uttar Pradesh"): where the first one
    lies, not a second item of a list."""
    places = ("GPE", "LOC")
    return (tok.ent_type_ in places and tok.head.ent_type_ in places and not _more_places(tok.doc, tok.i)
            and not any(c.dep_ == "cc" for c in tok.head.children))


def _more_places(doc, i: int) -> bool:
    """Whether another place follows token ``i`` after "and" / "or" (", and the United States"): the
    places before are items of a list ("in Paris, London, and Rome"), not a place and where it lies,
    wherever the parser hangs the "and" ("born in Houston, Texas, and raised …" is still a chain)."""
    j = i + 1 + (i + 1 < len(doc) and doc[i + 1].text == ",")
    if j >= len(doc) or doc[j].lower_ not in ("and", "or"):
        return False
    k = j + 1 + (j + 1 < len(doc) and doc[j + 1].lower_ == "the")
    return k < len(doc) and doc[k].ent_type_ in ("GPE", "LOC")


def _inches(tok) -> bool:
    """A straight double quote right after a number is an inch mark ("He stands at 6'7\""), not a quote."""
    prev = tok.doc[tok.i - 1] if tok.i > 0 else None
    return tok.text == '"' and prev is not None and prev.text[-1:].isdigit() and not prev.whitespace_


def _quote_spans(sent, longest: int = 12) -> list[tuple[int, int]]:
    """(opening mark, closing mark) token indices of each quoted stretch of the sentence, up to
    ``longest`` words inside: a quoted title ("Art and Life", "Fire and Rain") is one name; a
    longer stretch is a quotation, whose words may be split. Straight quotes pair in order
    (an odd count pairs none); curly ones by direction."""
    doc = sent.doc
    straight = [t.i for t in sent if t.text == '"' and not _inches(t)]
    pairs = list(zip(straight[::2], straight[1::2], strict=False)) if len(straight) % 2 == 0 else []
    opened = None
    for t in sent:
        if t.text == "“":
            opened = t.i
        elif t.text == "”" and opened is not None:
            pairs.append((opened, t.i))
            opened = None
    return [(a, b) for a, b in pairs if 0 < b - a - 1 <= longest and not any(doc[j].text == "\n" for j in range(a, b))]


def _whole_quotes(sent, tokens: set[int]) -> set[int]:
    """A claim holds a quoted title whole, marks included, or not at all: the parser hangs
    the marks and the title's words on different heads, so a split or a removed appositive
    left 'for his album ""' or 'His album " is Art and Life'."""
    out = set(tokens)
    for a, b in _quote_spans(sent):
        inside = set(range(a + 1, b))
        if out & inside:
            out |= inside | {a, b}
        else:
            out -= {a, b}
    return out


def _title_list(sent, tokens: set[int]) -> list[set[int]]:
    """The longest run of two or more quoted titles in ``tokens`` separated only by commas,
    "and" / "or" ("including "Matie", "Girls Dem Sugar" and "Who Am I""), one token set per
    title, marks included; [] when there is none. The parser splits such lists badly (titles as
    appositives of each other, a title's last word as a conjunct), so they are read off the
    words, each title a listed item (FActScore §3.1: one fact per item)."""
    doc = sent.doc
    spans = sorted(_quote_spans(sent))
    runs: list[list[tuple[int, int]]] = []
    for a, b in spans:
        if not set(range(a, b + 1)) <= tokens:
            continue
        between = range(runs[-1][-1][1] + 1, a) if runs else range(0)
        depth, glue = 0, True  # a bracket after a title ("Malhação" (2003-2007), …) is part of the glue
        for j in between:
            depth += doc[j].text == "("
            glue = glue and (depth > 0 or doc[j].text in (",", "and", "or", ")"))
            depth -= doc[j].text == ")" and depth > 0
        if runs and glue:
            runs[-1].append((a, b))
        else:
            runs.append([(a, b)])
    best = max(runs, key=len, default=[])
    return [set(range(a, b + 1)) for a, b in best] if len(best) >= 2 else []


def _span_of(titles: list[set[int]]) -> set[int]:
    """The tokens from a list's first title to its last: the titles and the commas and "and"
    between them."""
    return set(range(min(min(t) for t in titles), max(max(t) for t in titles) + 1))


def _title_after_noun(tok) -> bool:
    """A quoted name right after its noun, with no comma ("his album "Art and Life"", "the
    film "That Night""): the noun's name, kept with it, not an appositive claim of its own."""
    doc = tok.doc
    first = min(t.i for t in tok.subtree)
    return (_quoted(tok) and first >= 2 and doc[first - 1].text in ('"', "“")
            and doc[first - 2].i == tok.head.i)


def _conjuncts(first, ok: Callable[[Any], bool], deps: tuple[str, ...] = ("conj",)) -> tuple[list[Any], set[int]]:
    """The items of the list that ``first`` opens, and the tokens inside that list's names.

    A conjunct joined by "&" ("Johnson & Johnson") is part of a name, not an item, but the
    conjuncts hanging off it are items: "Johnson & Johnson and Pfizer" is two companies
    (the parser chains "Pfizer" to the second "Johnson"). ``ok`` says which conjuncts are
    items at all; the second value holds the "&"-joined parts walked through."""
    items: list[Any] = [first]
    parts: set[int] = set()
    todo = [first]
    while todo:
        t = todo.pop(0)
        for c in t.children:
            if c.dep_ not in deps or c in items or c.i in parts:
                continue
            if c.dep_ == "conj" and _amp_joined(c):
                parts.add(c.i)
                todo.append(c)
            elif ok(c):
                items.append(c)
                todo.append(c)
    return items, parts


def _list_glue(items: list[Any], parts: set[int]) -> set[int]:
    """The list's "and" / "or" and commas: those hanging off its items and the "&"-joined name
    parts walked through (an "&" itself is part of a name and stays)."""
    doc = items[0].doc
    return {c.i for t in [*items, *(doc[i] for i in parts)] for c in t.children
            if c.dep_ in ("cc", "punct", "preconj") and c.text != "&"}


# FActScore's annotators write the fact of an adverbial clause as a sentence in the past tense
# ("After appearing in commercials, …" → "She appeared in commercials."); spaCy has no
# inflection, so the past tense is built from the lemma, with the irregular verbs of bios.
_IRREGULAR_PAST = {
    "be": "was", "become": "became", "begin": "began", "break": "broke", "bring": "brought", "build": "built",
    "buy": "bought", "choose": "chose", "come": "came", "do": "did", "draw": "drew", "drive": "drove",
    "fight": "fought", "find": "found", "fly": "flew", "get": "got", "give": "gave", "go": "went",
    "grow": "grew", "have": "had", "hold": "held", "keep": "kept", "know": "knew", "lead": "led",
    "leave": "left", "lose": "lost", "make": "made", "meet": "met", "put": "put", "read": "read",
    "rise": "rose", "run": "ran", "say": "said", "see": "saw", "sell": "sold", "send": "sent", "set": "set",
    "sing": "sang", "sit": "sat", "speak": "spoke", "spend": "spent", "stand": "stood", "take": "took",
    "teach": "taught", "tell": "told", "think": "thought", "throw": "threw", "undergo": "underwent",
    "win": "won", "write": "wrote",
    # beyond bios: what news, science and history answers say ("striking an iceberg", "killing 1,500")
    "arise": "arose", "bear": "bore", "beat": "beat", "bend": "bent", "bind": "bound", "bite": "bit",
    "bleed": "bled", "blow": "blew", "breed": "bred", "broadcast": "broadcast", "burst": "burst",
    "cast": "cast", "catch": "caught", "cling": "clung", "cost": "cost", "creep": "crept", "cut": "cut",
    "deal": "dealt", "dig": "dug", "drink": "drank", "eat": "ate", "fall": "fell", "feed": "fed",
    "feel": "felt", "flee": "fled", "forbid": "forbade", "forecast": "forecast", "foresee": "foresaw",
    "forget": "forgot", "forgive": "forgave", "freeze": "froze", "grind": "ground", "hang": "hung",
    "hear": "heard", "hide": "hid", "hit": "hit", "hurt": "hurt", "lay": "laid", "lend": "lent",
    "let": "let", "light": "lit", "mean": "meant", "mislead": "misled", "overcome": "overcame",
    "overtake": "overtook", "pay": "paid", "quit": "quit", "rebuild": "rebuilt", "ride": "rode",
    "ring": "rang", "rewrite": "rewrote", "seek": "sought", "shake": "shook", "shed": "shed",
    "shine": "shone", "shoot": "shot", "shrink": "shrank", "shut": "shut", "sink": "sank",
    "sleep": "slept", "slide": "slid", "spin": "spun", "split": "split", "spread": "spread",
    "spring": "sprang", "steal": "stole", "stick": "stuck", "sting": "stung", "strike": "struck",
    "strive": "strove", "swear": "swore", "sweep": "swept", "swim": "swam", "swing": "swung",
    "tear": "tore", "understand": "understood", "undertake": "undertook", "uphold": "upheld",
    "wake": "woke", "wear": "wore", "withdraw": "withdrew", "withstand": "withstood",
}


def _past(verb) -> str:
    """The simple past of a verb token ("appearing" → "appeared", "starring" → "starred")."""
    lemma = verb.lemma_.lower()
    if lemma in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[lemma]
    if lemma.endswith("e"):
        return lemma + "d"
    if lemma.endswith("y") and lemma[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lemma[:-1] + "ied"
    if lemma and verb.lower_ == lemma + lemma[-1] + "ing":  # "starring", "stopping": the consonant doubles ("killing" does not)
        return lemma + lemma[-1] + "ed"
    return lemma + "ed"


def _finite(verb, like) -> str:
    """``verb`` (an -ing form) as a finite verb in the tense of the predicate ``like`` it hangs
    on: "X induces Y, resulting in Z" → "X results in Z"; "She starred …, appearing in" →
    "She appeared in" (a present-tense sentence keeps its present: a scientific claim is not
    turned into a past event)."""
    lemma = verb.lemma_.lower()
    if like.tag_ == "VBP":
        return "are" if lemma == "be" else lemma
    if like.tag_ != "VBZ":
        return _past(verb)
    if lemma in ("be", "have", "do", "go"):
        return {"be": "is", "have": "has", "do": "does", "go": "goes"}[lemma]
    if lemma.endswith(("s", "x", "z", "ch", "sh")):
        return lemma + "es"
    if lemma.endswith("y") and lemma[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lemma[:-1] + "ies"
    return lemma + "s"


def _origin(tok) -> bool:
    """A nationality or origin modifier: "American", "English" (spaCy's small model often tags it
    LANGUAGE), "Polish-born"."""
    return tok.ent_type_ in ("NORP", "LANGUAGE") or tok.lower_ == "born"


def _after_comma(sent, i: int) -> bool:
    """Token ``i`` follows a comma, quote marks between allowed: '… the busy "Tijuana Strip," perfecting …',
    'Blacker's first book, "The Transfer," was …'."""
    doc = sent.doc
    j = i - 1
    while j > sent.start and doc[j].text in ('"', "“", "”", "'", "’"):
        j -= 1
    return j >= sent.start and doc[j].text == ","


def _exemplified(marker, head: set[int], climb: bool = True):
    """The noun an "including" / "such as" list gives examples of. The parser hangs the list on
    the nearest noun ("teams in Spain's La Liga, including …", "the editor of several newspapers,
    including …"); the examples belong to the nearest plural noun before them, else (``climb``)
    to the plural noun up the prepositional chain. The kind claims (``climb=False``) stay on the
    noun the list hangs on: "Real Madrid is a team" is a fact nobody writes down (fold 0 F1 .6213
    with the climb, .6225 without)."""
    noun = marker.head
    if noun.tag_ in ("NNS", "NNPS"):
        # "various fashion brands and magazines, including Vogue": the examples are of the nearer noun
        nearer = [c for c in noun.children if c.dep_ == "conj" and c.tag_ in ("NNS", "NNPS") and c.i < marker.i]
        return nearer[-1] if nearer and not climb else noun
    plural = [x for x in noun.subtree if x.i < marker.i and x.i in head and x.tag_ in ("NNS", "NNPS")]
    if plural:
        return plural[-1]
    up = noun if climb else marker
    while up.dep_ == "pobj" and up.head.dep_ == "prep" and up.head.head.pos_ in ("NOUN", "PROPN"):
        up = up.head.head
        if up.tag_ in ("NNS", "NNPS") and up.i in head:
            return up
    return noun


def _ranked(noun) -> bool:
    """The noun is ranked by an ordinal or a superlative ("the third planet", "the closest star",
    "the only known planet", "the most distant moon"): what follows it ("from the Sun") is the
    ranking's reference point."""
    for c in noun.children:
        if c.dep_ not in ("amod", "nummod", "advmod"):
            continue
        if c.tag_ in ("JJS", "RBS") or c.ent_type_ == "ORDINAL" or c.lower_ in ("only", "last", "next"):
            return True
        if any(x.lower_ in ("most", "least") for x in c.children):
            return True
    return False


def _finite_conjuncts_of_infinitives(root) -> list[Any]:
    """Finite verbs the parser joined to an infinitive below the root: in "CRISPR-Cas9 allows
    scientists to edit DNA and was developed by …", "was developed" hangs on "edit", but an
    infinitive has no tense to share: it is the root's conjunct ("CRISPR-Cas9 was developed by …")."""
    out = []
    for x in root.children:
        if x.dep_ not in ("ccomp", "xcomp") or not any(a.dep_ == "aux" and a.lower_ == "to" for a in x.children):
            continue
        out += [c for c in x.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")
                and not any(a.dep_ in ("nsubj", "nsubjpass") for a in c.children)
                and any(a.dep_ in ("aux", "auxpass") and a.tag_ in ("VBD", "VBZ", "VBP") for a in c.children)]
    return out


def _elided(pred) -> bool:
    """A coordinated clause whose predicate was left out ("…, but strawberries are not", "…, but
    she did not", "…, and owls can too"): an auxiliary with a subject of its own and nothing to
    predicate."""
    return (pred.lemma_.lower() in _ELLIPSIS_AUX
            and any(c.dep_ in ("nsubj", "nsubjpass") and c.i < pred.i for c in pred.children)  # not "was the MVP" parsed as a subject
            and not any(c.dep_ in _COMPLEMENTS or c.dep_ in ("acomp", "xcomp", "advcl") for c in pred.children))


def _rate(when) -> bool:
    """A time that makes its clause a rate, not a date: "die … each year", "every week", "a day"
    ("8 million people die from tobacco use" is another claim than "… each year")."""
    return any(c.dep_ == "det" and c.lower_ in ("each", "every", "a", "an", "per") for c in when.children)


def _vague_time(prep) -> bool:
    """"over the years", "for several years", "for many years": a span with no date in it. Alone
    with its verb it says nothing ("Blacker has played over the years."), so it stays with the rest
    of the clause, as FActScore's annotators keep it ("He was a member of parliament for several
    years.")."""
    objs = [x for x in prep.children if x.dep_ == "pobj"]
    return (prep.lower_ in ("over", "for", "throughout", "during") and len(objs) == 1
            and objs[0].lemma_.lower() in ("year", "decade", "time") and not any(x.like_num for x in objs[0].subtree))


def _nationalities(tok) -> bool:
    """``tok`` and every modifier coordinated with it are nationalities ("Mexican and American"):
    a list with anything else in it ("British, Commonwealth and WBO International") names a title."""
    conjs = [c for c in tok.children if c.dep_ == "conj"]
    if conjs:
        return tok.ent_type_ == "NORP" and all(c.ent_type_ in ("NORP", "LANGUAGE") for c in conjs)
    return tok.ent_type_ in ("NORP", "LANGUAGE")


def _hyphenated(tok) -> bool:
    """A token glued to the one before by a hyphen ("non-fiction", "multi-instrumentalist"): the
    small parser often calls it a conjunct; it is part of one word."""
    doc = tok.doc
    if tok.text in ("-", "–"):
        return True
    glued_before = tok.i > 0 and doc[tok.i - 1].text in ("-", "–") and not doc[tok.i - 1].whitespace_
    glued_after = tok.i + 1 < len(doc) and doc[tok.i + 1].text in ("-", "–") and not tok.whitespace_
    return glued_before or glued_after


def check_worthiness(sentence: str, root_tag: str | None = None, has_subject: bool = True,
                     states_something: bool = True, lead_in: bool = False) -> str | None:
    """Why a sentence is not checkable (``None`` when it is): a question, a reference (a bare
    link), a chat answer's frame ("I hope this helps!", "Here are some facts about X:", "I'm glad
    you asked"), a fragment (``states_something`` False: no verb, no name and no number, as "Key
    facts:" or "Early life" — nothing a source could support or refute; :func:`states_something`;
    or a lead-in that ends where its list begins: "Some possible effects are:"; ``lead_in``: one
    the parse shows, :func:`is_lead_in`), an abstention, an opinion, advice."""
    s = sentence.strip()
    if s.endswith("?"):
        return "question"
    if _URL_ONLY.match(_CITATION.sub(" ", s)):
        return "reference"
    if _CONVERSATIONAL.search(s):
        return "conversational"
    if not states_something or lead_in or _LEAD_IN.search(s):
        return "fragment"
    if _ABSTAIN.search(s):
        return "abstention"
    if _OPINION.search(s):
        return "opinion"
    if _ADVICE.search(s) or (root_tag == "VB" and not has_subject):
        return "advice"
    return None


def is_lead_in(sent) -> bool:
    """Whether a parsed sentence is a lead-in to the list after it: "Some possible effects are:",
    "… include the following:", or one that ends on its preposition at a line's end ("This can be
    done by:" — the Markdown reader ends it with a dot — then "1. Introducing new concepts …"); a
    sentence in running prose may end on a preposition ("… something to be proud of.")."""
    s = sent.text.strip()
    end = _bounds(sent)[1]
    return bool(_LEAD_IN.search(s)) or (bool(_LEAD_PREP.search(s)) and sent.doc.text[end:].lstrip(" \t").startswith("\n"))


def states_something(sent) -> bool:
    """Whether a parsed sentence can state a fact: it has a verb, a name or a number, and a word.
    Chat answers carry labels and lead-ins ("Key facts:", "Summary", "Tips:", "Plasma extractor")
    and list numbers ("1.", left alone when a citation marker sits before its dot: "1[2]. Fischer
    synthesis"); checked as claims, the verifier reads them as entailed by almost any passage. A
    name is one the NER finds, or a proper noun in a sentence of five words or more ("A pairs with
    T and G pairs with C by hydrogen bonds", which the tagger reads without a verb): the small
    tagger calls any capitalised heading word a proper noun. A telegraphic list item with a name
    or a number ("Nobel Prize in Physics (1921)") stays checkable."""
    words = [t for t in sent if t.is_alpha]
    return bool(words) and (any(t.pos_ in ("VERB", "AUX", "NUM") or t.ent_type_ for t in sent)
                            or (len(words) >= 5 and any(t.pos_ == "PROPN" for t in words)))


_OCCUPATION_ENDINGS = ("ian", "ist", "eer", "eur", "grapher", "ologist")
_OCCUPATIONS = frozenset({"writer", "singer", "actor", "actress", "director", "producer", "teacher", "painter", "player",
                          "manager", "designer", "lawyer", "dancer", "composer", "author", "editor", "professor",
                          "founder", "leader", "farmer", "officer", "minister", "researcher", "programmer", "developer",
                          "diplomat", "poet", "novelist", "inventor", "investor", "philosopher", "scholar", "sculptor",
                          "architect", "rapper", "songwriter", "coach", "athlete", "boxer", "wrestler", "broadcaster",
                          "presenter", "journalist", "reporter", "critic", "translator", "chef", "surgeon", "doctor",
                          "nurse", "soldier", "politician", "businessman", "businesswoman", "activist", "filmmaker",
                          "screenwriter", "engineer", "model"})  # "chemist", "historian" …: _OCCUPATION_ENDINGS


def _occupation(tok) -> bool:
    """Whether a noun names what a person does ("mathematician", "writer", "journalist")."""
    lemma = tok.lemma_.lower()
    return lemma in _OCCUPATIONS or lemma.endswith(_OCCUPATION_ENDINGS)


def _a(noun: str) -> str:
    """"a film", "an album": the indefinite article by the noun phrase's first letter."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


@dataclass(frozen=True)
class Topic:
    """Who or what the answer is about, for resolving its pronouns: ``name`` as the answer
    writes it; ``thing``: not a person (spaCy's NER does not call it PERSON), so a referential
    "it" / "its" means it ("Douglas Aircraft Company … It was founded in 1921.")."""

    name: str
    thing: bool = False
    named: bool = True  # a name: he / she / his / her may mean it; False for "The jackfruit"
    # "he" or "she": the pronoun its text uses for it (:func:`_with_gender`); a pronoun of the other
    # stands for someone else ("Marie Curie … He died in 1906." is her husband) and stays as written
    gender: str | None = None


@dataclass
class _Piece:
    """A claim as token sets of the parsed doc: ``head`` [+ ``copula``] [+ ``tail``]."""

    head: set[int]
    copula: str | None = None  # appositive claims: "<head> is <appositive>"
    tail: set[int] | None = None
    # words the claim stands for without printing them ("appearing", written "appeared"): its span covers them
    unprinted: set[int] = field(default_factory=set)


class RulesDecomposer:
    """Deterministic atomic claims (see module docstring)."""

    name = "rules"

    def __init__(self, model: str = EMBEDDED_SPACY, nlp: Callable[[str], Any] | None = None,
                 resolve_pronouns: bool = True) -> None:
        """``nlp``: ``text -> Doc`` with every default pipe of the model — a shared
        models.nlp.SpacyPipeline (one load per process, core/workbench.py); else loaded here.
        ``resolve_pronouns`` (what a check needs): he / she / his / her become the answer's
        subject; False keeps them as the sentence writes them, FActScore's style (its
        annotators keep the pronoun), for ``claimscope decompose`` and ``eval decompose``."""
        self.resolve_pronouns = resolve_pronouns
        if nlp is None:
            from models.nlp import load_spacy

            nlp = load_spacy(model)  # without torch; the lemmatizer names the kind of a listed example ("films" → "a film")
            nlp.max_length = 2_000_000
        self._nlp = nlp
        self._code = code_hash(__file__, fields_module.__file__, nlp_module.__file__)  # read once (the cache key asks for it on every check); models/nlp.py sets sentence boundaries

    @property
    def nlp(self):
        """The loaded spaCy pipeline (the atomic decomposer splits sentences with it too, so
        one process loads spaCy once)."""
        return self._nlp

    @property
    def identity(self) -> dict:
        """What decides this decomposer's claims besides the text, for the stage cache's key
        (core/pipeline/runner.py): its code's hash, so an upgraded claimscope never serves a
        decomposition an earlier version of these rules made, and its pronoun mode."""
        return {"code": self._code, "resolve_pronouns": self.resolve_pronouns}

    def decompose(self, text: str) -> list[Claim]:
        # citation markers ("Brazil[1].", search-engine answers) are blanked before parsing, the
        # offsets kept: they are no part of any claim, and they confuse the parser
        blank = _CITATION.sub(lambda m: " " * len(m[0]), text)
        blank = _LABEL.sub(lambda m: m[1] + " " * len(m[2]), blank)
        doc = _join_prefixes(self._nlp(blank))
        topics = [label for sent in doc.sents if (label := _topic_label(sent)) is not None]
        if topics:  # "Theory of relativity: He developed …": the label is no part of the claim; parsed again without it
            for a, b in topics:
                blank = blank[:a] + " " * (b - a) + blank[b:]
            doc = _join_prefixes(self._nlp(blank))
        claims: list[Claim] = []
        subject = answer_subject(doc)
        topic = _topic(doc, subject) if self.resolve_pronouns else None  # None: no pronoun is replaced
        items = ItemReader(subject, past_tense(doc))
        for sent in doc.sents:
            if not sent.text.strip():
                continue
            topic = _paragraph_topic(sent, topic)
            span = _bounds(sent)
            source = text[span[0] : span[1]]
            completed = items.complete(sent)
            if completed is not None:  # "Regulating mood." after "Some possible effects are:"; "Won the 1921 Nobel Prize."
                for rewritten in _join_prefixes(self._nlp(completed)).sents:
                    claims += [Claim(len(claims) + k, t, span, context=completed)
                               for k, (t, _) in enumerate(self._sentence_claims(rewritten, topic))]
                continue
            as_field = None if value_is_clause(sent) else read_field(sent.text, items.subject, items.past)
            if as_field is not None:  # "Born: 14 March 1879, Ulm" → "Albert Einstein was born on …" (fields.py)
                for said in as_field.sentences:
                    parts = ([t for s in _join_prefixes(self._nlp(said)).sents for t, _ in self._sentence_claims(s, None)]
                             if as_field.split else [said])
                    claims += [Claim(len(claims) + k, t, span, context=source) for k, t in enumerate(parts)]
                continue
            subj = [t for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.head == sent.root]
            reason = check_worthiness(sent.text, sent.root.tag_, bool(subj), states_something(sent), is_lead_in(sent))
            items.read(sent, reason)
            if reason:
                claims.append(Claim(len(claims), source, span, checkable=False, note=reason))
                continue
            for t, claim_span in self._sentence_claims(sent, topic):
                claims.append(Claim(len(claims), t, claim_span, context=source))
        return _dedupe(claims)

    # -- splitting ---------------------------------------------------------------------
    def _sentence_claims(self, sent, topic: Topic | None) -> list[tuple[str, tuple[int, int]]]:
        """(claim text, character span of the input tokens it was built from) per claim."""
        root = sent.root
        whole = [(self._render(sent, _Piece({t.i for t in sent}), topic), _bounds(sent))]
        if root.pos_ not in ("VERB", "AUX"):
            return whole
        subj_tokens = {t.i for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "expl") for t in c.subtree}
        while subj_tokens and sent.doc[max(subj_tokens)].text == ",":  # "Beenie Man, born …": not its comma
            subj_tokens.discard(max(subj_tokens))
        # the subject's own name, without its parentheticals, appositives and clauses
        subj_core = {i for i in subj_tokens if not self._in_brackets(sent, i)}
        for c in root.children:
            if c.dep_ in ("nsubj", "nsubjpass"):
                subj_core -= self._clauses_of(c) | {t.i for t in c.subtree if t.dep_ in ("acl", "csubj") for t in t.subtree}
        subj_core = self._drop_dangling(sent, subj_core, keep_stop=False)
        copula = "was" if root.tag_ == "VBD" or any(c.tag_ == "VBD" for c in root.children if c.dep_ in ("aux", "auxpass")) else "is"
        pieces: list[_Piece] = []
        extra: list[_Piece] = []

        predicates = [root]
        for p in predicates:  # chains: "released …, won …, and collaborated …" hang off each other
            predicates.extend(c for c in p.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX") and c not in predicates)
        predicates.extend(_finite_conjuncts_of_infinitives(root))
        if any(_elided(p) for p in predicates[1:]):
            return whole  # "Bananas are berries, but strawberries are not.": the second half says nothing alone
        root_aux = [c for c in root.children if c.dep_ in ("aux", "auxpass", "neg")]
        for k, pred in enumerate(predicates):
            own = {t.i for t in self._pred_subtree(pred, predicates)}
            later = [p for p in predicates[k + 1 :] if p.i > pred.i]
            if later and pred.pos_ == "VERB" and not any(c.dep_ in _COMPLEMENTS for c in pred.children):
                # "has written and arranged hundreds of songs": the object after the last verb is shared
                obj = next((c for c in later[0].children if c.dep_ == "dobj" and c.i > later[0].i), None)
                if obj is None and (pred.lemma_ in _INTRANSITIVE or any(c.dep_ == "auxpass" for c in root.children)):
                    # "born and raised in Paris", "lives and works in London": a place or time after the
                    # last verb is the first one's too; not after a verb that wants an object ("She has
                    # produced and starred in X" is not "She has produced in X")
                    obj = next((c for c in later[0].children if c.dep_ == "prep" and c.i > later[0].i
                                and c.lower_ in ("in", "at", "on", "from", "near")), None)
                if obj is not None and later[0].i == min(t.i for t in later[0].subtree if t.dep_ != "cc"):
                    own |= {t.i for t in obj.subtree}
            if pred is not root:
                own_subj = any(c.dep_ in ("nsubj", "nsubjpass") for c in pred.children)
                if not own_subj:
                    own |= subj_tokens
                    perfect = any(a.lower_ in ("has", "have", "had") for a in root_aux)  # "has written and arranged": VBD is a mis-tag
                    if (pred.tag_ in ("VBN", "VBG", "VB") or (perfect and pred.tag_ == "VBD")) and not any(
                            c.dep_ in ("aux", "auxpass") for c in pred.children):
                        own |= {t.i for t in root_aux}
            pieces.extend(self._split_objects(pred, own))
        for born in sent:  # the place of a birth the parser hung on the copula stays with the birth only
            place = self._birth_place(sent, born)
            for p in pieces:
                if place and born.i not in p.head:
                    p.head -= place | self._commas_around(sent, place)

        def take_out(part: set[int]) -> None:
            """A clause that becomes a claim of its own leaves every other claim, those already taken
            out too ("… before moving to Mallorca, where he played …")."""
            for p in pieces + extra:
                p.head -= part
                if p.tail:
                    p.tail -= part

        acronyms = _bracketed_acronyms(sent)
        # appositives and relative clauses, removed from the pieces, become claims of their own
        for tok in sent:
            if (tok.dep_ == "appos" and tok.pos_ == "NOUN" and tok.head.pos_ in ("PROPN", "NOUN") and tok.i not in acronyms
                    and tok.head.dep_ != "attr"  # "an author, journalist, and publisher" is a list, not an appositive
                    and not _title_after_noun(tok)
                    # a count is no identity: "13 wins (12 KOs)" is not "13 wins is 12 KOs"
                    and not any(c.dep_ == "nummod" for x in (tok, tok.head) for c in x.children)):
                ap = {t.i for t in tok.subtree}
                ap |= self._commas_around(sent, ap)
                take_out(ap)
                head = {t.i for t in tok.head.subtree} - ap - self._clauses_of(tok.head)
                extra.append(_Piece(head, copula, {t.i for t in tok.subtree}))
            first = min(t.i for t in tok.subtree)
            if (tok.tag_ == "VBN" and tok.lower_ != "born" and subj_core
                    # set off by a comma; "known" ("an actress best known for …") even without one
                    and ((first - 1 >= sent.start and sent.doc[first - 1].text == ",") or tok.lower_ == "known")
                    and ((tok.dep_ == "acl" and tok.head.head == root
                          and (tok.head.dep_ in ("nsubj", "nsubjpass") or (tok.head.dep_ == "attr" and root.pos_ == "AUX")))
                         # the same participle after "X was a mathematician and writer," parsed as the copula's
                         # clause: "chiefly known for …" is said of X as well
                         or (tok.dep_ == "advcl" and tok.head == root and root.pos_ == "AUX" and tok.i > root.i
                             and not any(c.dep_ in ("nsubj", "nsubjpass", "mark", "aux", "auxpass") for c in tok.children)))):
                # "Mount Everest, located in the Himalayas, is …", "… a tower in Paris, designed by
                # Gustave Eiffel's company and completed in 1889": a participle set off by a comma says
                # something of the subject → "X is located in …", "X was designed by …", "X was completed …";
                # "an actor best known for …" → "X is an actor." + "X is best known for …" (FActScore's style)
                part = {t.i for t in tok.subtree}
                part |= self._commas_around(sent, part)
                take_out(part)
                verbs = [tok]
                while nxt := [c for c in verbs[-1].children if c.dep_ == "conj" and c.tag_ in ("VBN", "VBD")]:
                    verbs.append(nxt[0])  # "designed by … and completed in 1889" (often tagged VBD)
                for v in verbs:
                    later = {t.i for w in verbs if w.i > v.i for t in w.subtree}
                    body = {t.i for t in v.subtree} - later - {c.i for c in v.children if c.dep_ in ("cc", "punct")}
                    extra.append(_Piece(set(subj_core), copula if v.lower_ in _STATIVE else "was", body))
            if (tok.dep_ == "advcl" and tok.tag_ == "VBN" and subj_core and tok.head in predicates
                    and any(c.lower_ == "having" and c.dep_ == "aux" for c in tok.children)
                    and not any(c.dep_ in ("nsubj", "nsubjpass", "mark") for c in tok.children)):
                # "…, having established the Milagro Foundation in 1998" → "X has established …"
                part = {t.i for t in tok.subtree}
                part |= self._commas_around(sent, part)
                take_out(part)
                body = {t.i for t in tok.subtree} - {c.i for c in tok.children if c.lower_ == "having"}
                extra.append(_Piece(set(subj_core), "has" if copula == "is" else "had", body))
            role = [c for c in tok.children if c.dep_ == "pobj" and c.pos_ == "NOUN"
                    and any(d.lower_ in ("a", "an") for d in c.children if d.dep_ == "det")]
            if (tok.dep_ == "prep" and tok.lower_ == "as" and tok.head in predicates and role and subj_core
                    and tok.i < min(subj_core) and role[0].lemma_ not in ("result", "consequence", "whole", "rule", "matter")):
                # "As a writer, Arbore was known for …" → "Arbore was a writer." as well; the role stays
                # in the claims it qualifies ("As an amateur, he was champion": not "He was champion")
                extra.append(_Piece(set(subj_core), copula, {t.i for t in role[0].subtree}))
            adverbial = self._adverbial(sent, tok, predicates, subj_core)
            if adverbial is not None:
                part, claims = adverbial
                take_out(part)
                extra.extend(claims)
            if tok.dep_ not in ("relcl", "advcl"):
                continue
            rel_subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in _REL_PRONOUNS]
            own_subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in _REL_PRONOUNS]
            linker = [c for c in tok.children if (c.dep_ == "advmod" and c.lower_ in ("where", "when") and tok.dep_ == "relcl")
                      or (c.dep_ == "prep" and any(x.lower_ == "which" for x in c.children))]
            if tok.dep_ == "advcl" and not (own_subj and linker):
                continue  # only "…, during which he won …" (parsed as an adverbial clause) is a relative here
            if own_subj and linker and min(t.i for t in tok.subtree) == min(x.i for x in linker[0].subtree):
                # "…, where she became a semi-finalist" / "during which he won the J1 League": a claim of its own
                rel = {t.i for t in tok.subtree}
                rel |= self._commas_around(sent, rel)
                take_out(rel)
                clause = self._clause_pieces(tok, {t.i for t in tok.subtree} - {x.i for x in linker[0].subtree})
                noun = tok.head
                if (linker[0].lower_ == "where" and noun.dep_ == "pobj" and noun.head.lower_ in ("in", "at", "on")
                        and noun.ent_type_ not in ("DATE", "TIME")):  # "in the early 1960s where he formed": a parse slip
                    # "a large following on Instagram, where she shares …" → "On Instagram she shares …": where
                    # it happened is part of the fact ("Barboza shares her travel adventures on Instagram.")
                    place = {noun.head.i} | ({t.i for t in noun.subtree} - rel - self._clauses_of(noun)
                                             - {t.i for c in noun.children if c.dep_ in ("conj", "cc") for t in c.subtree})
                    for p in clause:
                        p.head |= place
                extra.extend(clause)
                continue
            share = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass") and (c.lower_ in _SHARES or c.like_num)
                     and any(x.lower_ == "of" and any(w.lower_ in ("which", "whom") for w in x.children) for x in c.children)]
            if share and tok.head.pos_ == "NOUN" and tok.head.tag_ == "NNS":
                # "more than 20 albums, many of which have been international successes" → "Many of the albums
                # have been international successes."; "16 wins, 15 of which were by knockout" likewise
                rel = {t.i for t in tok.subtree}
                rel |= self._commas_around(sent, rel)
                take_out(rel)
                q = share[0]
                body = {t.i for t in tok.subtree} - {t.i for t in q.subtree}
                extra.extend(_Piece({q.i}, f"of the {tok.head.text}", p.head, {t.i for t in q.subtree})
                             for p in self._clause_pieces(tok, body))
                continue
            noun = tok.head
            if any(c.lower_ in ("who", "whom") for c in rel_subj) and noun.ent_type_ in ("GPE", "LOC", "ORG", "FAC"):
                # "a boxer from the United Kingdom who was born …": "who" is a person, not the place the
                # parser hangs it on; climb the prepositional chain to the noun it describes
                while noun.dep_ == "pobj" and noun.head.dep_ == "prep" and noun.head.head.pos_ in ("NOUN", "PROPN"):
                    noun = noun.head.head
            while noun.dep_ == "conj" and noun.head != noun:  # "an actress, producer, and model who …"
                noun = noun.head
            on_attr = noun.dep_ == "attr" and noun.head == root and root.pos_ == "AUX" and bool(subj_core)
            if rel_subj and (on_attr or self._nonrestrictive_subject_relative(sent, tok)):
                rel = {t.i for t in tok.subtree}
                rel |= self._commas_around(sent, rel)
                take_out(rel)
                body = {t.i for t in tok.subtree} - {c.i for c in rel_subj}
                clause = self._clause_pieces(tok, body)  # "which combines elements of dancehall and hip-hop": one each
                if on_attr:
                    # "X is a Y who VP" -> "X is a Y." + "X VP." (seed 002-style atomic facts: the
                    # relative pronoun stands for the copula's subject)
                    extra.extend(_Piece(subj_core | p.head) for p in clause)
                else:
                    # the noun the clause is on, not the nouns coordinated with it: "his music, which
                    # often contains …, and his voice" → "His music often contains …"
                    others = {t.i for c in tok.head.children if c.dep_ in ("conj", "cc") and c.i > tok.i for t in c.subtree}
                    head_phrase = self._drop_dangling(
                        sent, {t.i for t in tok.head.subtree} - rel - self._clauses_of(tok.head) - others, keep_stop=False)
                    extra.extend(_Piece(head_phrase, None, p.head) for p in clause)
        life = self._lifespan(sent, subj_tokens, subj_core)
        # a life is no work's run ("Katsunosuke Hori (1880–1954) was an actor, known for his films")
        extra.extend(p for p in self._release_years(sent) if life is None or not p.unprinted & life[0])
        if life is not None:  # "Gonzalo Fonseca (1922-1997) was …": the bracket leaves every claim
            take_out(life[0])
        if acronyms:  # "education savings accounts (ESAs)": no claim of its own ("… is ESAs."), and out of the others
            take_out(acronyms)
        refined: list[_Piece] = []
        for p in pieces + extra:
            refined.extend(self._refine(sent, p, subj_core, copula))
        refined = self._one_of(sent, refined)
        for p in refined:
            p.head = _whole_quotes(sent, p.head)
            p.tail = _whole_quotes(sent, p.tail) if p.tail else p.tail
            if not p.copula and not p.tail:
                p.head = self._drop_dangling(sent, p.head)
        out = [(self._render(sent, p, topic), self._span(sent, p)) for p in refined]
        if life is not None:  # … and says two facts of its own: "… was born in 1922.", "… died in 1997."
            _, name, span, (born, died) = life
            out += [(f"{name} was born {born}.", span), (f"{name} died {died}.", span)]
        return [(t, sp) for t, sp in out if len(t.split()) >= 3] or whole

    def _adverbial(self, sent, tok, predicates: list[Any], subj: set[int]) -> tuple[set[int], list[_Piece]] | None:
        """An adverbial clause on one of the sentence's predicates, as a fact of its own
        (FActScore §3.1: annotators write "After appearing in commercials, Dushku landed her
        first role" as "She appeared in commercials." + "She landed her first role."):
        (tokens leaving the main claim, the clause's claims: one per predicate and object), or None.

        - "after / before / since / upon / while + -ing" ("After appearing in …", "…, before
          moving to Mallorca") and a participle after a comma ("…, performing under the name
          X") → the subject + the verb in the tense of the predicate it hangs on (past in a
          past-tense sentence, present in a present-tense one) + the rest of the clause;
        - a contrast with its own subject ("…, while her mother was a professor") → the clause
          without "while";
        - an event with "when" ("His career began in the 1980s when he won the Tastee Talent
          contest") → "He won the Tastee Talent contest." (fold 0: two more matches).
        A clause whose object is a pronoun ("…, making him the first …") refers to the whole
        main clause, not to the subject, and stays; so do a "when" clause of state ("When he
        was eight years old, …" only dates the main clause) and "because" clauses, which
        FActScore's annotators mostly keep with their main clause."""
        anchor = tok.head.head if tok.dep_ == "pcomp" else tok.head  # the predicate the clause is on
        if anchor not in predicates or tok.dep_ not in ("advcl", "pcomp"):
            return None
        own_subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
        mark = [c for c in tok.children if c.dep_ == "mark"]
        when = [c for c in tok.children if c.dep_ == "advmod" and c.lower_ == "when" and c.i == tok.left_edge.i]
        if tok.dep_ == "advcl" and own_subj and when and anchor.pos_ == "VERB" and tok.pos_ == "VERB":
            # "His career began in the 1980s when he won the Tastee Talent contest": an event is a fact of
            # its own (FActScore's annotators write both); a state ("when he was eight") only dates the other
            part = {t.i for t in tok.subtree}
            part |= self._commas_around(sent, part)
            return part, self._clause_pieces(tok, {t.i for t in tok.subtree} - {when[0].i})
        if tok.dep_ == "advcl" and own_subj and mark and mark[0].lower_ in _CONTRAST and tok.i > tok.head.i:
            part = {t.i for t in tok.subtree}
            part |= self._commas_around(sent, part)
            return part, self._clause_pieces(tok, {t.i for t in tok.subtree} - {mark[0].i})
        if tok.tag_ != "VBG" or own_subj or not subj:
            return None
        if any(t.dep_ in ("dobj", "dative", "nsubj") and t.lower_ in ("him", "her", "them", "it", "this")
               for c in tok.children for t in (c, *c.children)):
            return None
        if tok.dep_ == "pcomp" and tok.head.dep_ == "prep" and tok.head.lower_ in _TIME_MARKS:
            opener = tok.head  # "After appearing …": spaCy hangs the clause on "After" as a preposition
            part = {t.i for t in opener.subtree}
        elif tok.dep_ == "advcl" and ((mark and mark[0].lower_ in _TIME_MARKS)
                                      or (not mark and tok.i > tok.head.i and _after_comma(sent, tok.left_edge.i))):
            opener = mark[0] if mark else None
            part = {t.i for t in tok.subtree}
        else:
            return None
        part |= self._commas_around(sent, part)
        body = {t.i for t in tok.subtree} - {tok.i} - ({opener.i} if opener is not None else set())
        body -= {c.i for c in tok.children if c.dep_ in ("aux", "auxpass", "neg")}
        if not body:
            return None
        # "…, perfecting his style and sound" → "He perfected his style." + "He perfected his sound."
        return part, [_Piece(set(subj), _finite(tok, anchor), p.head, {tok.i}) for p in self._split_objects(tok, body)]

    # -- finer splits of one piece: what people split most often -------------------------------
    def _refine(self, sent, piece: _Piece, subj: set[int], copula: str) -> list[_Piece]:
        """One piece → its atomic pieces: "also" dropped; birth / death details one per claim;
        "including A, B and C" one claim per item; coordinated modifiers ("aggressive and
        powerful style") one per conjunct; nationality apart from occupation ("an American
        actress" → "is American" + "is an actress"); "in Houston, Texas" → "in Houston" + "Houston
        is in Texas". Each rule fires only on the parse shape it names."""
        if piece.copula or piece.tail:  # appositive and relative-clause claims: their tail splits as a clause does
            tails = [piece.tail or set()]
            participles = []
            if piece.copula in ("is", "was", "is a", "was a") and piece.tail:
                # "Românul, a political newspaper published in Bucharest" → "… is a political newspaper." +
                # "Românul was published in Bucharest."
                for t in [sent.doc[i] for i in sorted(piece.tail)]:
                    if t.dep_ == "acl" and t.tag_ == "VBN" and t.head.i in piece.tail and t.lower_ != "born":
                        part = {x.i for x in t.subtree}
                        tails = [piece.tail - part]
                        participles.append(_Piece(piece.head, "was", part & piece.tail, piece.unprinted))
                        break
            for step in (self._including, self._coordinated_modifiers) if piece.tail else ():
                tails = [t2 for t in tails for t2 in step(sent, t)][:12]
            out = []
            for t in tails:
                tail, places = self._places(sent, t)
                out += [_Piece(piece.head, piece.copula, tail, piece.unprinted), *places]
            return out + [q for p in participles for q in self._refine(sent, p, subj, copula)]
        doc = sent.doc
        head = {i for i in piece.head if not (doc[i].lower_ == "also" and doc[i].dep_ == "advmod")}
        # a discourse opener ("Overall,", "In addition to his writing,") points at the rest of
        # the answer, not at a fact: dropped
        comma = next((j for j in range(sent.start, min(sent.end, sent.start + 8)) if doc[j].text == ","), None)
        if comma is not None and _DISCOURSE.match(doc[sent.start:comma].text.strip()):
            head -= set(range(sent.start, comma + 1))
        out: list[_Piece] = []
        head, born = self._births(sent, head, subj, copula)
        work, named = self._named_appositives(sent, head)
        named = named + self._example_kinds(sent, head)
        for step in (self._including, self._titles, self._swallowed_list, self._coordinated_modifiers, self._adjuncts):
            nxt = []
            for h in work:
                nxt.extend(step(sent, h))
            work = nxt[:12]
        for h in work:
            h, nat = self._nationality(sent, h, subj, copula)
            out.extend(nat)
            h, origin = self._from_place(sent, h, subj, copula)
            out.extend(origin)
            h, places = self._places(sent, h)
            out.append(_Piece(h))
            out.extend(places)
        out.extend(named + born)  # after the claim they were taken from
        final = []
        for p in out:
            if p.copula and p.tail:
                t2, places = self._places(sent, p.tail)
                final.append(_Piece(p.head, p.copula, t2, p.unprinted))
            else:
                h2, places = self._places(sent, p.head)
                final.append(_Piece(h2, p.copula, p.tail, p.unprinted))
            final.extend(places)
        return final

    @staticmethod
    def _lifespan(sent, subj_tokens: set[int], subj_core: set[int]) -> tuple[set[int], str, tuple[int, int], tuple[str, str]] | None:
        """A lifespan in brackets on the sentence's subject, Wikipedia's lead style ("Gonzalo Fonseca
        (1922-1997) was …", "Emily Dickinson (December 10, 1830 - May 15, 1886) was …"): (its tokens
        with a comma before it, the subject's name, the span from the name to the bracket's end,
        (when born, when died) as :func:`fields.read_lifespan` reads them), or None. FActScore's
        annotators write the bracket as two facts, "X was born in 1922." and "X died in 1997."
        (Min et al. 2023, §3.1), and a verifier cannot judge "X (1922-1997) was a sculptor" on one
        fact. Only a person's name has a life: a subject with an article ("The Cold War
        (1947–1991)") or that names a place, an event or a work, or an organisation the sentence
        calls one ("Nirvana (1987–1994) was a band"), keeps its bracket."""
        doc = sent.doc
        root = sent.root
        subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if (subj is None or subj.pos_ != "PROPN" or not subj_core or any(c.dep_ == "det" for c in subj.children)
                or subj.ent_type_ in _NOT_A_LIFE):
            return None
        attr = next((c for c in root.children if c.dep_ == "attr"), None)
        if attr is not None and attr.lemma_.lower() in _GROUP_NOUNS:
            return None
        name = _proper_subject(sent)
        for t in sent:
            if t.text != "(" or t.i not in subj_tokens or t.i > root.i or not name:
                continue
            close = next((j for j in range(t.i + 1, root.i) if doc[j].text == ")"), None)
            when = read_lifespan(doc[t.i : close + 1].text) if close is not None else None
            if when is None:
                continue
            part = set(range(t.i, close + 1)) | ({t.i - 1} if doc[t.i - 1].text == "," else set())
            return part, name, (doc[min(subj_core)].idx, doc[close].idx + 1), when
        return None

    @staticmethod
    def _in_brackets(sent, i: int) -> bool:
        doc = sent.doc
        depth = 0
        for j in range(sent.start, i):
            depth += doc[j].text == "("
            depth -= doc[j].text == ")" and depth > 0
        return depth > 0

    def _births(self, sent, head: set[int], subj: set[int], copula: str) -> tuple[set[int], list[_Piece]]:
        """"born on D in P" → one claim per detail: "X was born on D." + "X was born in P."
        (also "died …"). Where "born" is the piece's own verb ("He was born …") the details
        split in place; where it modifies a noun or sits in parentheses ("X (born 1942) is …",
        "an actor born in Ohio") it leaves the piece and becomes claims about the subject."""
        doc = sent.doc
        out: list[_Piece] = []
        for b in [doc[i] for i in sorted(head)]:
            if b.lower_ not in ("born", "died") or b.i not in head:
                continue
            right = sorted(t.i for t in b.subtree if t.i > b.i and t.i in head and not (t.is_punct and t.text in "()"))
            while right and doc[right[-1]].is_punct:
                right.pop()
            segs: list[list[int]] = []
            for i in right:
                t = doc[i]
                if t.pos_ == "ADP" and t.lower_ in ("in", "on", "at") and (not segs or doc[segs[-1][-1]].pos_ != "ADP"):
                    segs.append([i])
                elif segs:
                    segs[-1].append(i)
                elif not t.is_punct:
                    segs.append([i])
            segs = [sg for sg in segs if any(not doc[i].is_punct for i in sg)]
            for sg in segs:
                while sg and doc[sg[-1]].is_punct:
                    sg.pop()
            segs = [sg for sg in segs if sg]
            own_verb = any(c.dep_ in ("aux", "auxpass", "nsubj", "nsubjpass") for c in b.children) or b.dep_ in ("ROOT", "conj")
            participle = (b.lower_ == "born" and b.dep_ == "ROOT" and doc[b.i - 1].text == ","
                          and not any(c.dep_ in ("aux", "auxpass") for c in b.children))
            if participle and subj and segs:
                # "Beenie Man, born Anthony Moses Davis on August 22, 1973, is …": the parser makes "born"
                # the root; it is a participle on the subject, as in the bracketed form
                return head - set(right) - {b.i, b.i - 1}, [_Piece(set(subj), "was born", set(sg)) for sg in segs]
            if own_verb and b.dep_ != "csubj":
                if len(segs) < 2:
                    continue
                rest = head - set(right) - {i for i in head if i > b.i and doc[i].is_punct and i < (right[-1] if right else 0)}
                for sg in segs:
                    out.append(_Piece(rest | set(sg)))
                return set(), out
            if not subj and self._in_brackets(sent, b.i):
                # "Beenie Man (born … ) is …": the name before the brackets is who was born
                lo = max(j for j in range(sent.start, b.i) if doc[j].text == "(")
                name = list(range(sent.start, lo))
                subj = set(name) if name and all(doc[j].pos_ == "PROPN" for j in name) else set()
            whose = subj
            lo = max((j for j in range(sent.start, b.i) if doc[j].text == "("), default=-1)
            if subj and lo > sent.root.i:
                # "She married the actor John Smith (born 1950)": a birth in brackets after the verb is the
                # name's before the bracket (through an appositive title: "Ernst August, Prince of Hanover
                # (born 1954)"); before the verb it is the subject's, whatever names and aliases precede it
                who = doc[lo - 2] if lo - 2 >= sent.start and doc[lo - 1].text == "," else doc[max(lo - 1, sent.start)]
                while True:
                    if who.dep_ == "pobj" and who.head.dep_ == "prep" and who.head.head.pos_ == "PROPN":
                        who = who.head.head
                    elif who.dep_ == "appos" and who.head.pos_ == "PROPN":
                        who = who.head
                    else:
                        break
                if who.i not in subj:
                    whose = ({t.i for t in who.subtree if t.dep_ in ("compound", "flat") and t.pos_ == "PROPN" and t.i < who.i}
                             | {who.i} if who.pos_ == "PROPN" else set())
            if not whose or not segs:
                continue
            detached = ({t.i for t in b.subtree} | {b.i}) - subj
            if self._in_brackets(sent, b.i):
                lo = max(j for j in range(sent.start, b.i) if doc[j].text == "(")
                hi = next((j for j in range(b.i, sent.end) if doc[j].text == ")"), max(detached))
                detached |= set(range(lo, hi + 1))
            detached |= self._commas_around(sent, detached)
            place = self._birth_place(sent, b)
            if place and place <= head:
                detached |= place | self._commas_around(sent, place)
                segs.append(sorted(place))
            head = head - detached
            verb = "was born" if b.lower_ == "born" else "died"
            for sg in segs:
                first = doc[sg[0]]
                said = doc[sg[0] : sg[-1] + 1].text
                # "(born May 6, 1983)" → "was born on May 6, 1983"; "(born 1942)" → "was born in 1942"
                lead = verb + (" " + date_preposition(said) if first.ent_type_ == "DATE" and first.pos_ != "ADP" else "")
                out.append(_Piece(set(whose), lead, set(sg)))
        return head, out

    def _birth_place(self, sent, born) -> set[int]:
        """"a guitarist and songwriter born on July 20, 1947, in Autlán, Mexico": the parser hangs the
        place on the copula ("is … in Autlán"); it is where he was born. Its tokens, or an empty set."""
        doc = sent.doc
        if born.lower_ != "born" or born.dep_ != "acl":
            return set()
        part = {t.i for t in born.subtree}
        nxt = max(part | self._commas_around(sent, part)) + 1
        if nxt >= sent.end:
            return set()
        prep = doc[nxt]
        if not (prep.lower_ == "in" and prep.dep_ == "prep" and prep.head.pos_ == "AUX"
                and any(t.ent_type_ in ("GPE", "LOC") for t in prep.subtree)):
            return set()
        return {t.i for t in prep.subtree if not (t.is_punct and t.i == prep.right_edge.i)}

    @staticmethod
    def _including(sent, head: set[int]) -> list[set[int]]:
        """"… teams, including A, B and C" / "fighters such as A and B" → the piece without the
        examples, plus the piece with each example in place of the noun it exemplifies."""
        doc = sent.doc
        for i in sorted(head):
            t = doc[i]
            if not (t.lower_ == "including" or (t.lower_ == "as" and i > 0 and doc[i - 1].lower_ == "such")):
                continue
            first = [c for c in t.children if c.dep_ == "pobj"]
            # 'films including "Bring It On", …': a quoted title may parse as a clause (pcomp)
            if not first and not (any(c.dep_ == "pcomp" for c in t.children)
                                  and _title_list(sent, {j for j in head if j > t.i})):
                continue
            noun = _exemplified(t, head)
            if noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.lemma_.lower() in _QUANTITY:
                noun = noun.head.head  # "a number of artists including A": A replaces "a number of artists"
            if noun.i not in head:
                continue
            ex = {x.i for x in t.subtree} | ({i - 1} if t.lower_ == "as" else set())
            ex |= {j for j in (min(ex) - 1,) if doc[j].text == ","}
            # 'including Best Pop Vocal Performance for his song "You've Got a Friend"': a quoted title
            # right after the list is its last item's, whatever the parser hung it on
            trailing = {j for a, b in _quote_spans(sent) if a == max(ex) + 1 for j in range(a, b + 1)}
            ex |= trailing
            titles = _title_list(sent, {j for j in head if j > t.i})
            if titles:  # "including "A", "B" and "C"": the quoted titles are the items
                ex |= _span_of(titles)
                items = titles
            else:
                group, parts = _conjuncts(first[0], lambda c: not _hyphenated(c))
                glue = _list_glue(group, parts)
                # an earlier split may have kept one item only; "Tru Calling (2003–2005)": the title, not its years
                items = [{x.i for x in g.subtree if not (x.text in "()" or RulesDecomposer._in_brackets(sent, x.i))}
                         - {x.i for gg in group if gg is not g and gg in g.subtree for x in gg.subtree}
                         - glue for g in group if g.i in head]
            if not items:
                continue
            # what follows the list goes with its items, not with the plural: "He has won several awards
            # including the Grammy Award for Best Reggae Album in 2001" → "He has won several awards."
            base = {j for j in head - ex if j < max(ex) or doc[j].is_punct}
            out = [base]
            noun_phrase = {x.i for x in noun.subtree}
            for k, mine in enumerate(items):
                out.append((head - noun_phrase - ex) | (mine & head) | (trailing & head if k == len(items) - 1 else set()))
            return out
        return [head]

    @staticmethod
    def _titles(sent, head: set[int]) -> list[set[int]]:
        """"his singles "Get It Right", "I Want It All" and "Change the World"" → one piece per
        title (see :func:`_title_list`)."""
        titles = _title_list(sent, head)
        if not titles:
            return [head]
        every = _span_of(titles)
        return [(head - every) | title for title in titles]

    @staticmethod
    def _named_appositives(sent, head: set[int]) -> tuple[list[set[int]], list[_Piece]]:
        """"the author of the adult novel, The Intoxicating Life" → "… the author of the adult
        novel." + "… the author of The Intoxicating Life." + "The Intoxicating Life is the adult
        novel." (a name, or a list of names, in apposition to a common noun)."""
        doc = sent.doc
        for i in sorted(head):
            ap = doc[i]
            noun = ap.head
            if not (ap.dep_ == "appos" and ap.pos_ == "PROPN" and noun.pos_ == "NOUN" and noun.i in head and noun.i < ap.i):
                continue
            if ap.i == noun.i + 1 and any(c.dep_ == "nummod" for c in noun.children):
                continue  # a quantity's scale, not a name: "90 degrees Celsius", "40 degrees Fahrenheit"
            if noun.lemma_.lower() in _NAMING_NOUNS:
                # the name is what is said: "has the chemical symbol Au" is not "has the chemical symbol"; a
                # common noun the parser joined to the name is the noun's conjunct ("… Au and an atomic number of 79")
                others = [c for c in ap.children if c.dep_ == "conj" and c.pos_ == "NOUN" and c.i in head]
                if not others:
                    continue
                rest = {t.i for o in others for t in o.subtree}
                glue = {c.i for c in ap.children if c.dep_ in ("cc", "punct")}
                return [head - rest - glue] + [(head - {t.i for t in noun.subtree}) | ({t.i for t in o.subtree} & head)
                                               for o in others], []
            group, _ = _conjuncts(ap, lambda c: c.pos_ in ("PROPN", "NOUN"))
            if len(group) == 1 and _title_after_noun(ap):
                continue  # "his album "Art and Life"": the album's name, kept with it
            group = [g for g in group if g.i in head]
            names = [RulesDecomposer._name_of(g, group) & head for g in group]
            every = {t.i for t in ap.subtree}
            every |= RulesDecomposer._commas_around(sent, every)
            noun_phrase = ({t.i for t in noun.subtree} - every) & head
            base = head - every
            outs = [base] + [(head - {t.i for t in noun.subtree}) | nm for nm in names]
            if noun.dep_ in ("nsubj", "nsubjpass"):  # a subject gets one claim, not one per name of it:
                # "Her father Philip R. Dushku was a teacher" → by the noun; "His latest album, American
                # Standard, was released in 2020" → by the name set off by commas
                outs = outs[1:] if _after_comma(sent, ap.left_edge.i) else [base]
            what = set(noun_phrase) - RulesDecomposer._clauses_of(noun)
            dets = {j for j in what if doc[j].dep_ == "det" and doc[j].head == noun and doc[j].lower_ in ("the", "a", "an")}
            # "The Intoxicating Life is an adult novel": one of a kind, so "a" (the article is re-chosen on render)
            # "… and the film American Pie": a film, not a series; "two solo albums, A and B": neither is "two albums"
            counted = any(c.dep_ == "nummod" for c in noun.children)
            claims = [_Piece(nm, "is a" if dets else "is", what - dets) for g, nm in zip(group, names, strict=True)
                      if g.pos_ == "PROPN" and not counted]
            return outs, claims
        return [head], []

    @staticmethod
    def _name_of(g, group: list[Any]) -> set[int]:
        """A listed name's words: the item with its own dependents ("&" joins one name: "Law &
        Order"), without the list's other items, "and" and commas."""
        name = {g.i} | {t.i for c in g.children if c.dep_ not in ("conj", "cc", "punct") or _amp_joined(c) or c.text == "&"
                         for t in c.subtree}
        inner = {t.i for h in group if h is not g and h in g.subtree for t in h.subtree}
        doc = g.doc
        # the "and" before the next item hangs off the "&"-joined part ("Johnson & Johnson and Pfizer")
        glue = {c.i for i in name if doc[i].dep_ == "conj" and _amp_joined(doc[i]) for c in doc[i].children
                if c.dep_ in ("cc", "punct") and c.text != "&"}
        return name - inner - glue

    @staticmethod
    def _adjuncts(sent, head: set[int]) -> list[set[int]]:
        """A verb with two or more adjuncts (prepositional phrases other than "of", dates) →
        one claim per adjunct: "In 2009, she won the title of Miss Earth" → "She won the title
        of Miss Earth." + "In 2009, she won the title …" is kept apart from "… in Paris"; each
        adjunct is a fact of its own in FActScore's annotation (when, where, with whom)."""
        doc = sent.doc
        for i in sorted(head):
            v = doc[i]
            if v.pos_ not in ("VERB",) or v.dep_ not in ("ROOT", "conj", "relcl", "advcl", "xcomp"):
                continue
            adj = [c for c in v.children if c.i in head and (
                (c.dep_ == "prep" and c.lower_ not in ("of", "including") and any(x.dep_ == "pobj" for x in c.children)
                 and not (c.text[:1].isupper() and c.i > sent.start)  # a title's first word: "published On the Origin of Species"
                 and not _vague_time(c))  # "over the years" stays with its clause
                or (c.dep_ == "npadvmod" and c.ent_type_ == "DATE" and not _rate(c) and c.lower_ not in _NOW))]
            subj = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass")]
            for c in v.children:  # "Today, X is considered …": the time of the telling leaves the claim
                if c.dep_ == "npadvmod" and c.lower_ in _NOW and subj and c.i < subj[0].i and c.i in head:
                    head = head - {x.i for x in c.subtree} - {j for j in (c.right_edge.i + 1,) if doc[j].text == ","}
            fronted = [a for a in adj if subj and a.i < subj[0].i and any(  # a when / where, not "in order to …"
                x.ent_type_ in ("DATE", "TIME", "GPE", "LOC", "FAC", "EVENT") for x in a.subtree)]
            if len(adj) < 2 and not fronted:
                continue
            if v.lemma_.lower() in _RANGE_VERBS and any(a.lower_ == "from" for a in adj):
                continue  # "temperatures range from -173 °C at night to 127 °C during the day": one fact
            sets: list[set[int]] = []
            start_of_range: int | None = None  # the set of a "from" still waiting for its "to"
            for a in adj:
                span = {x.i for x in a.subtree} & head
                if a.lower_ in _RELATIONAL_PREPS:
                    # "took place in 1066 between the army of William, Duke of Normandy, and an English
                    # army": the parser can hang the second party on the verb; it is the preposition's
                    for c in v.children:
                        if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN") and c.i > a.i:
                            span |= {x.i for x in c.subtree} & head
                            span |= {x.i for x in v.children if x.dep_ in ("cc", "punct") and a.i < x.i < c.i} & head
                if a.lower_ in ("to", "until", "through") and start_of_range is not None:
                    # "from 2019 to 2020" is one span, not two facts, and so is "runs from Lyon in the
                    # west to Turin" with what the parser hung on the verb between the range's ends
                    sets[start_of_range:] = [set().union(*sets[start_of_range:], span)]
                    start_of_range = None
                    continue
                sets.append(span)
                if a.lower_ == "from":
                    start_of_range = len(sets) - 1
            if len(sets) < 2 and len(adj) >= 2:
                continue
            every = set().union(*sets)
            core = head - every
            core -= {j for j in core if doc[j].text == "," and (j + 1 in every or j - 1 in every)}
            if len(adj) < 2:  # "In 2009, she won the title": the fact without its fronted when / where, and with it
                return [core, head]
            out = [core | s_ for s_ in sets]
            what = [a.i for a in adj if v.lemma_ == "know" and a.lower_ in ("for", "as") and a.i > v.i]
            # "As a writer, Arbore was known for his essays": "As a writer Arbore was known." says nothing
            return [o for o in out if not what or any(j in o for j in what)]
        return [head]

    @staticmethod
    def _example_kinds(sent, head: set[int]) -> list[_Piece]:
        """"films such as True Lies and Eloise" → "True Lies is a film." + "Eloise is a film."
        (what the examples of an "including" / "such as" list are said to be)."""
        doc = sent.doc
        out: list[_Piece] = []
        for i in sorted(head):
            t = doc[i]
            if not (t.lower_ == "including" or (t.lower_ == "as" and i > 0 and doc[i - 1].lower_ == "such")):
                continue
            noun = _exemplified(t, head, climb=False)
            of = [x for c in noun.children if c.dep_ == "prep" and c.lower_ == "of" for x in c.children if x.dep_ == "pobj"]
            if (noun.lemma_.lower() in _QUANTITY or noun.ent_type_ == "CARDINAL") and of:
                noun = of[0]  # "hundreds of songs, including …": the examples are songs, not hundreds
            first = [c for c in t.children if c.dep_ == "pobj"]
            if not first or noun.pos_ != "NOUN" or noun.tag_ not in ("NNS", "NNPS"):
                continue
            mods = [c for c in noun.lefts if c.dep_ in ("amod", "compound") and c.lower_ not in _VAGUE]
            kind = " ".join([*(x.text for m in mods for x in m.subtree), noun.lemma_ or noun.text])
            titles = _title_list(sent, {j for j in head if j > t.i})
            if titles:  # "albums, including "Sweet Baby James" and "JT"": one album each
                out.extend(_Piece(title, f"is {_a(kind)}") for title in titles)
                continue
            group, _ = _conjuncts(first[0], lambda c: not _hyphenated(c))
            for g in group:
                if any(x.lower_ == "including" or (x.lower_ == "as" and x.i > 0 and x.doc[x.i - 1].lower_ == "such") for x in g.subtree):
                    continue  # "traditional folk styles such as doina": a kind with examples of its own
                if g.lemma_.lower() == noun.lemma_.lower():
                    continue  # "titles, including the British heavyweight title": not "… is a title"
                name = RulesDecomposer._name_of(g, group) - RulesDecomposer._clauses_of(g)  # not "… for which she was a producer"
                name = {j for j in name if not (doc[j].text in ("(", ")") or RulesDecomposer._in_brackets(sent, j))}
                name = RulesDecomposer._drop_dangling(sent, name, keep_stop=False)
                if name:  # "AI algorithms are mathematical methods" / "True Lies is a film"
                    # a capitalised item is a name or title ("True Lies" is a film), whatever its tag; a plural
                    # ends in "s" ("epinephrine", tagged NNS, is a neurotransmitter; "economics" is a field)
                    plural = (g.text[:1].islower() and g.lower_.endswith("s") and not g.lower_.endswith("ics")
                              and (g.tag_ == "NNS" or g.lemma_ != g.lower_))
                    kinds = " ".join([*(x.text for m in mods for x in m.subtree), noun.text])
                    out.append(_Piece(name, f"are {kinds}" if plural else f"is {_a(kind)}"))
        return out

    @staticmethod
    def _coordinated_modifiers(sent, head: set[int]) -> list[set[int]]:
        """"his aggressive and powerful striking style" → "his aggressive striking style" +
        "his powerful striking style" (adjective / noun modifiers joined by and / or)."""
        doc = sent.doc
        for i in sorted(head):
            t = doc[i]
            # a noun the parser calls nmod ("school and district records"), but not inside a name ("Rock and Roll")
            if t.dep_ not in ("amod", "compound", "nmod") or t.head.i not in head or (t.dep_ == "nmod" and t.pos_ != "NOUN"):
                continue
            conjs = [c for c in t.children if c.dep_ == "conj" and c.i in head and c.i < t.head.i
                     and not _hyphenated(c) and not _quoted(c, t)]
            if not conjs or _nationalities(t):
                continue  # "is a Mexican and American guitarist": nationalities are claims of their own (_nationality)
            glue = {c.i for c in t.children if c.dep_ in ("cc", "punct")} | {c.i for g in conjs for c in g.children if c.dep_ in ("cc", "punct")}
            conj_sets = [{x.i for x in c.subtree} for c in conjs]
            all_conj = set().union(*conj_sets)
            first = {x.i for x in t.subtree} - all_conj - glue
            # "a British mathematician and computer scientist": an occupation the parser hangs on the last
            # noun is a noun of its own ("… a mathematician" + "… a computer scientist"), not "mathematician scientist"
            own_noun = t.dep_ in ("compound", "amod") and t.head.dep_ == "attr" and _occupation(t)
            out = [head - all_conj - glue - ({t.head.i} if own_noun else set())]
            for cs in conj_sets:
                out.append((head - first - all_conj - glue) | cs)
            return out
        return [head]

    @staticmethod
    def _swallowed_list(sent, head: set[int]) -> list[set[int]]:
        """"She is a Venezuelan model and beauty pageant titleholder", "a fashion model, beauty
        queen, and social media personality": the small parser hangs the first items of a list of
        predicate nouns on the last one as its modifier (``nmod``, the "and" on it). One piece per
        item, as for a list it parses ("She is a Venezuelan model." + "She is a beauty pageant
        titleholder."); the article and what follows the last noun stay in every piece."""
        doc = sent.doc
        for i in sorted(head):
            n, x = doc[i], doc[i].head
            if not (n.dep_ == "nmod" and n.pos_ == "NOUN" and x.dep_ == "attr" and x.pos_ == "NOUN"
                    and x.i in head and n.i < x.i):
                continue
            if not _occupation(n):
                continue  # "a film and television actress": the domains of one occupation ("She is a film." was said)
            items = [n]
            while nxt := [c for c in items[-1].children if c.dep_ == "conj" and c.pos_ == "NOUN" and c.i < x.i]:
                items.append(nxt[0])
            if not any(c.dep_ == "cc" for it in items for c in it.children):
                continue
            glue = {c.i for it in items for c in it.children if c.dep_ in ("cc", "punct")}
            sets, start = [], min(t.i for t in n.subtree)
            for it in [*items, x]:
                sets.append({j for j in range(start, it.i + 1) if j in head and doc[j].dep_ != "det"} - glue)
                start = it.i + 1
            if len(sets) > 2 and sets[-2] == {items[-1].i} and items[-1].i + 1 == x.i:
                # "a writer and film director": the last item right before the noun is that noun's
                # modifier ("film director"), not an item of its own ("He is a film.")
                sets[-2:] = [sets[-2] | sets[-1]]
            if any(not s for s in sets):
                continue
            return [head - glue - set().union(*(o for o in sets if o is not s)) for s in sets]
        return [head]

    @staticmethod
    def _nationality(sent, head: set[int], subj: set[int], copula: str) -> tuple[set[int], list[_Piece]]:
        """"X is a Spanish former football player" → "X is a former football player." +
        "X is Spanish." (a NORP adjective before the noun the copula predicates of X); "X was a
        Polish-born physicist" → "X was a physicist." + "X was Polish-born." (FActScore's
        annotators write "Malcolm Hedding is British-born.")."""
        doc = sent.doc
        if not subj or not subj <= head:
            return head, []

        def predicated(t) -> bool:  # t modifies the noun the copula predicates of the subject
            attr = t.head
            pred = attr
            while pred.dep_ == "conj" and pred.head != pred:
                pred = pred.head
            if pred.dep_ == "nmod" and pred.head.dep_ == "attr" and pred.head.i not in head:
                pred = pred.head  # a list item the parser hung on the last one (_swallowed_list)
            return pred.dep_ == "attr" and pred.head.pos_ == "AUX" and attr.i in head and attr.pos_ == "NOUN"

        def split(taken: set[int], each: list[set[int]] | None = None) -> tuple[set[int], list[_Piece]]:
            rest = head - taken
            if len([j for j in rest if not doc[j].is_punct]) <= len(subj) + 1:
                return head, []
            return rest, [_Piece(set(subj), copula, one) for one in (each or [taken])]

        for i in sorted(head):  # "Polish-born", "Saudi Arabian-born": the whole compound is the nationality
            t = doc[i]
            origin = [c for c in t.children if c.dep_ == "npadvmod" and c.pos_ in ("ADJ", "PROPN") and c.text[:1].isupper()]
            if t.lower_ != "born" or t.dep_ != "amod" or not origin or not predicated(t):
                continue
            taken = set(range(origin[0].left_edge.i, t.i + 1))
            while min(taken) - 1 in head and doc[min(taken) - 1].ent_type_ == "NORP" and doc[min(taken) - 1].head == t.head:
                taken.add(min(taken) - 1)
            if taken <= head:
                return split(taken)
        for i in sorted(head):
            t = doc[i]
            # spaCy's small model tags many nationalities ("an English author") as LANGUAGE
            nation = t.ent_type_ == "NORP" or (t.ent_type_ == "LANGUAGE" and t.pos_ == "ADJ")
            if (nation and t.dep_ in ("amod", "compound", "nmod") and t.pos_ in ("ADJ", "PROPN") and predicated(t)
                    and _nationalities(t) and doc[t.i + 1].text != ","):  # not "the British, Commonwealth and WBO … champion"
                # "a Mexican and American guitarist": one claim per nationality
                more = [c for c in t.children if c.dep_ == "conj" and c.i in head]
                glue = {c.i for c in t.children if c.dep_ in ("cc", "punct") and c.i in head} if more else set()
                return split({t.i} | {c.i for c in more} | glue, [{t.i}] + [{c.i} for c in more])
        return head, []

    @staticmethod
    def _from_place(sent, head: set[int], subj: set[int], copula: str) -> tuple[set[int], list[_Piece]]:
        """"X is a professional football player from Japan" → "X is a professional football player." +
        "X is from Japan." (FActScore's annotators write where a person is from as a fact of its own)."""
        doc = sent.doc
        if not subj or not subj <= head:
            return head, []
        for i in sorted(head):
            t = doc[i]
            if not (t.lower_ == "from" and t.dep_ == "prep" and t.head.dep_ == "attr" and t.head.head.pos_ == "AUX"
                    and t.head.i in head and any(x.ent_type_ in ("GPE", "LOC") for x in t.subtree)):
                continue
            if _ranked(t.head):
                continue  # "the third planet from the Sun", "the closest star from Earth": a rank's reference, no origin
            place = {x.i for x in t.subtree} & head
            rest = head - place
            if len([j for j in rest if not doc[j].is_punct]) <= len(subj) + 1:
                return head, []
            return rest, [_Piece(set(subj), copula, place)]
        return head, []

    @staticmethod
    def _places(sent, tokens: set[int]) -> tuple[set[int], list[_Piece]]:
        """"in Moradabad, Uttar Pradesh, India" → "in Moradabad" + "Moradabad is in Uttar
        Pradesh." + "Uttar Pradesh is in India." (place names, GPE / LOC entities, separated by
        commas only)."""
        doc = sent.doc
        # a town the small model tags ORG or FAC ("born in Autlán de Navarro, Mexico") is a place after
        # "in / at / from / near" when a place name follows it
        ents = [e for e in sent.ents if all(t.i in tokens for t in e) and (e.label_ in ("GPE", "LOC") or (
            e.label_ in ("ORG", "FAC") and e.start > sent.start and doc[e.start - 1].lower_ in ("in", "at", "from", "near")))]
        out, drop = [], set()
        for a, b in itertools.pairwise(ents):
            if b.start == a.end + 1 and doc[a.end].text == "," and b.label_ in ("GPE", "LOC") and not _more_places(doc, b.end - 1):
                out.append(_Piece({t.i for t in a}, "is in", {t.i for t in b}))
                drop |= {a.end} | {t.i for t in b}
                if b.end + 1 < sent.end and doc[b.end].text == "," and doc[b.end + 1].pos_ == "ADP":
                    drop.add(b.end)  # its closing comma: "at Kitty Hawk, North Carolina, on …" → "at Kitty Hawk on …"
        return tokens - drop, out

    @staticmethod
    def _span(sent, piece: _Piece) -> tuple[int, int]:
        doc = sent.doc
        idx = [i for i in piece.head | (piece.tail or set()) | piece.unprinted
               if not doc[i].is_punct and not doc[i].is_space] or [sent.start]
        return doc[min(idx)].idx, doc[max(idx)].idx + len(doc[max(idx)].text)

    @staticmethod
    def _pred_subtree(pred, predicates):
        """The predicate's subtree without the other coordinated predicates, their 'and', and the subject."""
        others = [p for p in predicates if p is not pred]
        skip = {t.i for o in others if o in pred.subtree for t in o.subtree}
        for c in pred.children:
            if c.dep_ == "cc" and any(o.head == pred for o in others):
                skip.add(c.i)
        for o in others:  # the "and" of a predicate the parser hung lower down (_finite_conjuncts_of_infinitives)
            if o.head != pred and o in pred.subtree:
                skip |= {c.i for c in o.head.children if c.dep_ == "cc" and c.i < o.i}
        return [t for t in pred.subtree if t.i not in skip]

    @staticmethod
    def _split_objects(pred, own: set[int]) -> list[_Piece]:
        """One piece per conjunct of a coordinated object (dobj / pobj / attr) of the predicate."""
        titles = _title_list(pred.sent, own)  # a list of quoted titles is split later, off the words
        doc = pred.doc
        for tok in pred.subtree:
            if tok.i not in own or tok.dep_ not in ("dobj", "pobj", "attr") or any(tok.i in t for t in titles):
                continue
            if tok.dep_ == "pobj" and tok.head.lower_ in _RELATIONAL_PREPS:
                continue  # "between the user and the system" needs both conjuncts
            conj_deps = ("conj", "appos") if tok.dep_ == "attr" else ("conj",)
            # a number is a conjunct of numbers only ("in 2017 and 2018"); in "13 wins, 0 losses and 0
            # draws" the parser makes the last "0" a conjunct of "losses"
            group, parts = _conjuncts(tok, lambda c, tok=tok: (c.pos_ in ("NOUN", "PROPN") or (c.pos_ == "NUM" and tok.pos_ == "NUM"))
                                      and not _hyphenated(c) and not _quoted(c, c.head) and not _place_chain(c), conj_deps)
            if len(group) < 2:
                continue
            owner = tok.head.head
            if (tok.dep_ == "pobj" and owner.pos_ == "NOUN" and owner.dep_ in ("attr", "dobj")
                    and any(g.lemma_ == owner.lemma_ for g in group[1:])):
                # "the third planet from the Sun and the only known planet …": the parser joined the second
                # "planet" to "Sun"; it is the first planet's conjunct, so no split of "the Sun and …"
                continue
            all_conj = set()
            for g in group[1:]:
                all_conj |= {t.i for t in g.subtree}
            glue = _list_glue(group, parts)
            if tok.dep_ == "attr":  # after a copula: the article and a quality, never the nationality (below)
                shared_deps = ("det", "amod")
            else:
                shared_deps = _SHARED_MODS
            # modifiers before the first conjunct are shared: "an American guitarist and singer"; after
            # a copula the article and a quality ("an accomplished violinist and guitarist"), not the
            # nationality, which is a claim of its own (_nationality)
            shared = {t.i for c in tok.lefts if c.dep_ in shared_deps and not _origin(c) for t in c.subtree}
            pieces = []
            for g in group:
                if g is tok:
                    mine = {t.i for t in tok.subtree} - all_conj
                else:  # the conjunct with its own dependents, not the conjuncts chained to it ("&" joins one name)
                    mine = {g.i} | {t.i for c in g.children if (c.dep_ not in ("conj", "cc", "punct") or _amp_joined(c)
                                                                 or c.text == "&") for t in c.subtree}
                    mine -= {t.i for h in group if h is not g and h in g.subtree for t in h.subtree}
                    if g.i - 1 > tok.i and doc[g.i - 1].pos_ == "NUM" and doc[g.i - 1].dep_ == "conj":
                        mine.add(g.i - 1)  # "… and 0 draws": the parser hangs the "0" on the conjunct before
                if g is not tok and g.pos_ != "PROPN":
                    own_mods = {c.dep_ for c in g.lefts}
                    if tok.dep_ == "attr":  # the quality only to a bare noun; else the article unless it has its own
                        article = {j for j in shared if doc[j].dep_ == "det"}
                        bare = not own_mods & {"det", "amod", "compound", "poss"}
                        take = shared if bare else (article if "det" not in own_mods else set())
                    elif own_mods & set(shared_deps):  # "the late 1960s and early 1970s": "the" only
                        take = {j for j in shared if doc[j].dep_ == "det" and doc[j].lower_ == "the"} if not own_mods & {"det", "poss"} else set()
                    else:
                        take = shared
                    # "a record of …, 0 losses and 0 draws": "a" is no article of a plural
                    mine |= {j for j in take if not (g.tag_ in ("NNS", "NNPS") and doc[j].lower_ in ("a", "an"))}
                pieces.append(_Piece((own - all_conj - glue - {t.i for t in tok.subtree}) | (mine - glue)))
            return pieces
        return [_Piece(own)]

    @staticmethod
    def _release_years(sent) -> list[_Piece]:
        """A work's year in brackets is a fact of its own: "films including True Lies (1994)" → "True
        Lies was released in 1994."; "the series Buffy the Vampire Slayer (1998–2003)" → "Buffy the
        Vampire Slayer ran from 1998 to 2003." (FActScore's annotators write one per title). Only in a
        sentence about works (films, series, albums …): "Marie Curie (1867–1934)" is a life, not a run."""
        doc = sent.doc
        if not any(t.lemma_.lower() in _WORKS for t in sent):
            return []
        quotes = {b: a for a, b in _quote_spans(sent)}
        out: list[_Piece] = []
        for t in sent:
            if t.text != "(" or t.i - 1 < sent.start:
                continue
            close = next((j for j in range(t.i + 1, min(t.i + 6, sent.end)) if doc[j].text == ")"), None)
            years = _YEARS.fullmatch(doc[t.i + 1 : close].text) if close else None
            if years is None:
                continue
            if t.i - 1 in quotes:  # '"Malhação" (2003-2007)'
                title = set(range(quotes[t.i - 1], t.i))
            else:  # capitalised words back to the list's comma or the kind noun: "Jay and Silent Bob Strike Back"
                j = t.i - 1
                while j >= sent.start and (doc[j].text[:1].isupper() or doc[j].lower_ in _TITLE_WORDS) and doc[j].text not in "()":
                    j -= 1
                while j + 1 < t.i and not doc[j + 1].text[:1].isupper():
                    j += 1  # no title starts with "and" / "the"
                title = set(range(j + 1, t.i))
            if not title or not any(doc[i].text[:1].isupper() for i in title):
                continue
            a, b = years[1], years[2]
            said = f"ran from {a} to {b}" if b else f"was released in {a}"
            out.append(_Piece(title, said, None, set(range(t.i, close + 1))))
        return out

    @staticmethod
    def _one_of(sent, pieces: list[_Piece]) -> list[_Piece]:
        """"Some of his most famous songs include "Oye Como Va" and "Smooth"" → ""Oye Como Va" is one of
        his most famous songs." per item, as FActScore's annotators write it ("One of her notable films
        is The Ten Commandments."); "His notable works include X" stays as written, as they keep it."""
        root = sent.root
        some = [c for c in root.children if c.dep_ == "nsubj" and c.lower_ in ("some", "many", "several")]
        if root.lemma_ != "include" or not some:
            return pieces
        of = [x for c in some[0].children if c.dep_ == "prep" and c.lower_ == "of" for x in c.children
              if x.dep_ == "pobj" and x.tag_ in ("NNS", "NNPS")]
        if not of:
            return pieces
        subject = {t.i for t in some[0].subtree}
        kind = {t.i for t in of[0].subtree}
        out = []
        for p in pieces:
            item = {j for j in p.head if j > root.i and not (sent.doc[j].is_punct and j == sent.end - 1)}
            if p.copula or p.tail or root.i not in p.head or not subject <= p.head or not item:
                out.append(p)
                continue
            out.append(_Piece(item, "is one of", kind, p.unprinted | {root.i}))
        return out

    def _clause_pieces(self, verb, tokens: set[int]) -> list[_Piece]:
        """A clause of its own with its own subject ("where he picked up the guitar and started playing
        with local bands"): one piece per coordinated predicate, each with the subject (and the auxiliary
        a participle needs), each split per coordinated object."""
        predicates = [verb]
        for p in predicates:
            predicates.extend(c for c in p.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")
                              and c not in predicates and c.i in tokens)
        subj = {t.i for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") for t in c.subtree} & tokens
        aux = {c.i for c in verb.children if c.dep_ in ("aux", "auxpass", "neg")}
        out: list[_Piece] = []
        for p in predicates:
            own = {t.i for t in self._pred_subtree(p, predicates)} & tokens
            if p is not verb and not any(c.dep_ in ("nsubj", "nsubjpass") for c in p.children):
                own |= subj | (aux if p.tag_ in ("VBN", "VBG", "VB") else set())
            out.extend(self._split_objects(p, own))
        return out

    @staticmethod
    def _clauses_of(tok) -> set[int]:
        return {t.i for c in tok.children if c.dep_ in ("relcl", "acl", "appos") for t in c.subtree}

    @staticmethod
    def _commas_around(sent, tokens: set[int]) -> set[int]:
        doc = sent.doc
        lo, hi = min(tokens), max(tokens)
        extra = set()
        # a quoted title's commas lie outside its marks (and "Transfer," inside): the marks go with the title
        while lo - 1 >= sent.start and doc[lo - 1].text in ('"', "“", "”"):
            lo -= 1
            extra.add(lo)
        while hi + 1 < sent.end and (doc[hi + 1].text in ('"', "“", "”") or (
                doc[hi + 1].text == "," and hi + 2 < sent.end and doc[hi + 2].text in ('"', "”"))):
            hi += 1
            extra.add(hi)
        if lo - 1 >= sent.start and doc[lo - 1].text == ",":
            extra.add(lo - 1)
        if hi + 1 < sent.end and doc[hi + 1].text == ",":
            extra.add(hi + 1)
        return extra

    @staticmethod
    def _nonrestrictive_subject_relative(sent, relcl) -> bool:
        rel_subj = [c for c in relcl.children if c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in _REL_PRONOUNS]
        first = min(t.i for t in relcl.subtree)
        return bool(rel_subj) and first - 1 >= sent.start and sent.doc[first - 1].text == ","

    # -- text ------------------------------------------------------------------------
    @staticmethod
    def _drop_dangling(sent, tokens: set[int], keep_stop: bool = True) -> set[int]:
        """Commas left next to a removed clause at the end of the kept tokens (closing brackets
        and quotes stay: "(UFC)"), and a bracket or quote left open by a removed part."""
        doc = sent.doc
        kept = sorted(tokens)
        while kept and doc[kept[-1]].is_punct and doc[kept[-1]].text not in ('"', "”", "'", "’") and not (
                doc[kept[-1]].text == ")" and any(doc[j].text == "(" for j in kept)):
            kept.pop()
        for op, cl in (("(", ")"), ("“", "”")):
            if sum(doc[j].text == op for j in kept) != sum(doc[j].text == cl for j in kept):
                kept = [j for j in kept if doc[j].text not in (op, cl)]
        if sum(doc[j].text == '"' and not _inches(doc[j]) for j in kept) % 2:
            kept = [j for j in kept if doc[j].text != '"' or _inches(doc[j])]
        return set(kept) | ({sent.end - 1} if keep_stop and doc[sent.end - 1].text in ".!" else set())

    def _words(self, doc, tokens: set[int], topic: Topic | None, named: bool = False) -> str:
        """Tokens in order, pronouns resolved, a space wherever removed tokens left a gap.

        A he / she / him / his / her that comes before any mention of the answer's subject in
        the claim is replaced by it; one that comes after stays ("Curie won her second prize":
        the claim already says who "her" is). So is a referential it / its when the subject is
        a thing (:class:`Topic`, :func:`_expletive`); "The United Kingdom" is "the United
        Kingdom" inside a claim."""
        out, prev = [], None
        name = topic.name if topic else ""
        parts = set(name.split()) - {"The", "A", "An"}
        # he / she for a named subject; for one the NER does not call a person (a bio's subject often
        # is not), only when the answer calls it "he" or "she" somewhere: "Jupiter" is no "her"
        personal = bool(topic) and topic.named and (not topic.thing or topic.gender is not None)
        subj_pron = (_PRONOUN_SUBJ | _PRONOUN_OBJ if personal else set()) | ({"it"} if topic and topic.thing else set())
        poss_pron = (_PRONOUN_POSS if personal else set()) | ({"its"} if topic and topic.thing else set())
        if topic and topic.gender:  # "he" / "him" / "his" are not a woman's, "she" / "her" not a man's
            other = _GENDERED["she" if topic.gender == "he" else "he"]
            subj_pron, poss_pron = subj_pron - other, poss_pron - other
        first = min(tokens, default=0)
        for i in sorted(tokens):
            t = doc[i]
            text = t.text
            said = name if i == first or not name.startswith(("The ", "A ", "An ")) else name[:1].lower() + name[1:]
            if (topic and not named and t.lower_ in subj_pron and t.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj")
                    and not (t.lower_ == "it" and (_expletive(t) or (t.text == "It" and not t.is_sent_start)  # "Who Done It": a title
                                                   or _other_antecedent(t, parts)))):
                text = said
            elif topic and not named and t.lower_ in poss_pron and t.dep_ == "poss" and not (t.lower_ == "its" and _other_antecedent(t, parts)):
                text = said + "'s"
            named = named or (bool(topic) and (text == said or text.startswith(said + "'"))) or t.text in parts
            gap = prev is not None and i != prev + 1 and (not t.is_punct or bool(doc[i - 1].whitespace_))
            if gap and out and not out[-1].endswith(" "):
                out.append(" ")
            out.append(text + t.whitespace_)
            prev = i
        return "".join(out).strip()

    def _render(self, sent, piece: _Piece, topic: Topic | None) -> str:
        doc = sent.doc
        parts = [self._words(doc, piece.head, topic)]
        if piece.copula:
            parts.append(piece.copula)
        if piece.tail:
            tail = self._words(doc, piece.tail, topic, named=bool(topic) and topic.name in parts[0])
            first = doc[min(piece.tail)]
            if first.i == sent.start and first.pos_ in ("PRON", "DET") and first.text != "I" and tail.startswith(first.text):
                tail = first.lower_ + tail[len(first.text):]  # "… is her father", not "… is Her father"
            if topic and topic.name.startswith(("The ", "A ", "An ")) and tail.startswith(topic.name):
                tail = tail[:1].lower() + tail[1:]  # "… are the Pennsylvania Chronicle's partners"
            parts.append(tail)
        return _tidy(" ".join(p for p in parts if p))


def answer_subject(doc) -> str | None:
    """Who the answer is about: the proper-noun subject of its first sentence that has one
    (with its compound / flat name parts), else the first PERSON entity of the first
    sentences. A bio's "he" / "she" means its subject far more often than the last name
    mentioned ("She also had recurring roles on …" after a list of characters). Shared by the
    ``rules`` and ``atomic`` decomposers."""
    for k, sent in enumerate(doc.sents):
        if k >= 3:
            break
        subj = next((t for t in sent.root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None:  # "Beenie Man (born …) is …" parses without a subject: a name opening the sentence is it
            first = next((e for e in sent.ents if e.label_ == "PERSON" and e.start == sent.start), None)
            if first is not None:
                return first.text
            continue
        if subj.pos_ == "PRON":
            continue  # "He won …" names nobody: a name elsewhere in it is not the subject
        if subj.pos_ == "PROPN":
            return _proper_subject(sent)
        inside = {t.i for t in subj.subtree}
        persons = [e for e in sent.ents if e.label_ == "PERSON" and e.start in inside]
        if persons:  # "The actor Tom Hanks …"
            return persons[0].text
    return None


def answer_topic(doc) -> Topic | None:
    """The answer's subject as a :class:`Topic` (``doc`` parsed with NER, which tells a person
    from a thing). Shared by the ``rules`` and ``atomic`` decomposers."""
    return _topic(doc, answer_subject(doc))


def paragraph_topics(doc) -> list[tuple[int, Topic | None]]:
    """(character where it starts, whom pronouns stand for) along the answer: the answer's subject,
    then each paragraph that opens with another person (:func:`_paragraph_topic`). For the
    ``atomic`` decomposer, whose facts carry the spans of their sentences."""
    topic = answer_topic(doc)
    out = [(0, topic)]
    for sent in doc.sents:
        if sent.text.strip() and (nxt := _paragraph_topic(sent, topic)) is not topic:
            topic = nxt
            out.append((sent.start_char, topic))
    return out


def _topic(doc, subject: str | None) -> Topic | None:
    """The answer's subject as a :class:`Topic`: a thing unless spaCy's NER tags it (or a name
    containing it) PERSON; without a named subject, the first sentence's common-noun subject
    with its article ("The jackfruit is a species of tree."), a thing whose he / she stay."""
    if subject:
        person = any(e.label_ == "PERSON" and (subject in e.text or e.text in subject) for e in doc.ents)
        if not person and re.search(r"(?:^|\s)[Tt]he " + re.escape(subject) + r"\b", doc.text[:1000]):
            subject = "The " + subject  # "The United Kingdom", "The Voice": as the answer names it
        return _with_gender(Topic(subject, thing=not person), doc, 0)
    first = next((s for s in doc.sents if s.text.strip()), None)
    subj = next((t for t in first.root.children if t.dep_ in ("nsubj", "nsubjpass")), None) if first is not None else None
    if subj is None or subj.pos_ != "NOUN" or first.root.lemma_ != "be":
        return None
    det = next((c for c in subj.children if c.dep_ == "det" and c.lower_ in ("the", "a", "an")), None)
    inside = {t.i for t in subj.subtree}
    if det is None or not all(j in inside and doc[j].is_alpha for j in range(det.i, subj.i + 1)):
        return None  # "The Star Wars sequel trilogy" whole, or nothing ("The film (2016)")
    name = doc[det.i : subj.i + 1].text
    return Topic("The" + name[len(det.text):] if det.lower_ == "the" else name, thing=True, named=False)


def _paragraph_topic(sent, topic: Topic | None) -> Topic | None:
    """Whom the pronouns from ``sent`` on stand for: a paragraph that opens with another person's
    name as its subject is about that person ("Ada Lovelace was … She …" / "Alan Turing was a
    British mathematician. He was born in London."), in an answer that compares two people. Only
    a paragraph's first sentence switches, its subject a name the NER calls a person, and only
    when the sentence points back with no pronoun ("Pierre Curie was her husband." keeps the
    answer's subject): within a paragraph, the last name seen is often a character or a relative,
    not whom "he" means. ``None`` (no pronoun replaced) stays ``None``."""
    if topic is None:
        return None
    doc = sent.doc
    start = _bounds(sent)[0]
    before = doc.text[:start].rstrip(" \t")
    if before and not before.endswith("\n\n"):
        return topic
    subj = next((t for t in sent.root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    name = _proper_subject(sent)
    if (subj is None or name is None or subj.ent_type_ != "PERSON" or name == topic.name or name in topic.name
            or any(c.dep_ == "poss" or (c.dep_ == "compound" and c.pos_ != "PROPN") for c in subj.children)
            or any(t.lower_ in _PRONOUNS_3RD for t in sent)):
        return topic  # "Kerser's fourth album King was …" is about Kerser still
    return _with_gender(Topic(name), doc, start)


_PRONOUNS_3RD = frozenset(_PRONOUN_SUBJ | _PRONOUN_OBJ | _PRONOUN_POSS | {"hers", "they", "them", "their"})
_GENDERED = {"he": frozenset({"he", "him", "his"}), "she": frozenset({"she", "her", "hers"})}


def _with_gender(topic: Topic | None, doc, start: int) -> Topic | None:
    """``topic`` with the pronoun its paragraph uses for it: the first "he" or "she" that is the
    subject of a sentence's main verb, from ``start`` to the paragraph's end ("Marie Curie was a
    physicist. She …" → "she"). A thing, or a paragraph with no such pronoun, has none."""
    if topic is None or not topic.named:
        return topic
    end = doc.text.find("\n\n", start)
    for sent in doc.sents:
        if sent.start_char < start:
            continue
        if end >= 0 and sent.start_char > end:
            break
        pron = next((t.lower_ for t in sent.root.children if t.dep_ in ("nsubj", "nsubjpass") and t.lower_ in ("he", "she")), None)
        if pron:
            return replace(topic, gender=pron)
    return topic


def _expletive(it) -> bool:
    """Whether a subject "it" stands for no thing: "It is known that …", "It is important to …",
    "It was not until 1990 that …" (an extraposed or cleft clause after its verb). spaCy's small
    parser rarely says ``expl``; the clause is what shows it."""
    head = it.head
    if it.dep_ not in ("nsubj", "nsubjpass"):
        return False
    clauses = [c for c in head.children if c.dep_ in ("ccomp", "csubj", "xcomp", "advcl", "relcl") and c.i > it.i]
    if any(m.dep_ == "mark" and m.lower_ in ("that", "whether", "if") for c in clauses for m in c.children):
        return True  # "It is known that …", "It seems that …"
    if head.lemma_ == "be":
        described = [c for c in head.children if c.dep_ in ("acomp", "attr")]
        if any(x.dep_ in ("xcomp", "ccomp") and any(a.lower_ == "to" for a in x.children)
               for d in described for x in d.children):
            return True  # "It is important to note …"
        if any(any(a.lower_ == "to" for a in c.children) for c in clauses if c.dep_ in ("xcomp", "ccomp")):
            return True  # "It is (a pleasure) to …" parsed onto the verb
        if not any(c.dep_ == "attr" for c in head.children) and any(t.lower_ == "until" for t in head.subtree):
            return True  # "It was not until 1990 that …"
    return False


def _other_antecedent(it, names: set[str]) -> bool:
    """Whether an "it" / "its" comes after the subject of the clause it stands in (the nearest
    one up the tree), a noun phrase that does not name the answer's subject: "The team plays its
    home games", "NBC renewed the series through its thirteenth season", "the city had …, making
    it the largest" — that subject is what "it" means. A main clause's own subject "it" has none."""
    head = it.head
    while True:
        subj = next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass") and c.i != it.i), None)
        if subj is not None:
            inside = {t.i for t in subj.subtree}
            if subj.i > it.i or subj.pos_ == "PRON" or it.i in inside:
                return False  # "Its capital …", "Two of its territories …": it opens its own clause
            return not any(t.text in names for t in subj.subtree)
        if head.head.i == head.i or (it.dep_ in ("nsubj", "nsubjpass") and it.head.i == head.i and head.dep_ == "ROOT"):
            return False
        head = head.head


def _with_subject(sent, subject: str | None, past: bool) -> str | None:
    """A line that is a predicate without its subject, as chat answers list what someone did
    ("- Developed the theory of relativity", "- Won the 1921 Nobel Prize", "- Born in Ulm in
    1879"), given the subject a person reads in it: "Albert Einstein won the 1921 Nobel Prize.",
    "Albert Einstein was born in Ulm in 1879."; ``None`` for any other sentence (one in running
    prose, one with a subject or an auxiliary) and for an instruction ("Use a compass.")."""
    before = sent.doc.text[: sent.start_char].rstrip(" \t")
    first = next((t for t in sent if not t.is_space), None)
    if subject is None or first is None or (before and not before.endswith("\n")):
        return None
    root = sent.root
    if first.dep_ == "amod" and first.tag_ in ("VBD", "VBN") and first.head.i == root.i and root.pos_ == "NOUN":
        return _with_verb(first, sent, subject, past, has_object=True)  # "Discovered polonium", parsed as a noun phrase
    if first.i != root.i or root.pos_ != "VERB" or _has_subject(sent) or any(c.dep_ in ("aux", "auxpass") for c in root.children):
        return None
    return _with_verb(root, sent, subject, past, has_object=any(c.dep_ == "dobj" for c in root.children))


def _with_verb(verb, sent, subject: str, past: bool, has_object: bool) -> str | None:
    """The sentence of :func:`_with_subject` for a line opening with ``verb``."""
    text = sent.text.strip()
    body = text[:1].lower() + text[1:].rstrip(" .;:")
    word = verb.lower_
    if word in _PASSIVE_WITH_OBJECT or word == "born":  # "Awarded the Nobel Prize in 1903", "Born in Ulm"
        return f"{subject} was {body}."
    # "Won" is VB (an instruction) to the tagger at a line's start; "Discovered polonium" VBN, but a
    # participle takes no object
    if verb.tag_ == "VBD" or word in _PRETERITES or (verb.tag_ == "VBN" and has_object):
        return f"{subject} {body}."
    if verb.tag_ == "VBN":  # "Known for radioactivity"
        return f"{subject} {'was' if past else 'is'} {body}."
    return None


def _topic_label(sent) -> tuple[int, int] | None:
    """The characters of a label opening a line whose value is a clause of its own ("Theory of
    relativity: He developed the special theory in 1905."; a chat answer's bold topic in front of
    a list item's sentence), or ``None``. Parsed with it, the label becomes the sentence's
    subject or root, and the claim reads "Theory of relativity: Albert Einstein developed …"."""
    m = _TOPIC_LABEL.match(sent.text)
    after = [t for t in sent if t.idx >= sent.start_char + m.end()] if m is not None else []
    predicate = bool(after) and after[0].tag_ in ("VBD", "VBN")  # "Early life: born in Ulm in 1879."
    if m is None or not (value_is_clause(sent) or predicate):
        return None
    before = sent.doc.text[: sent.start_char].rstrip(" \t")
    label_end = sent.start_char + m.end(1)
    label = [t for t in sent if t.idx < label_end]
    # a label may be a gerund ("Ensuring adequate representation: With stratified sampling, …"), not a clause
    # with its subject ("Reviews were mixed: …"); an instruction ("Use clear language: Create content …")
    # keeps the line what it is, advice (blanked, the tagger reads "Create" as a noun)
    clause = any(t.pos_ in ("VERB", "AUX") for t in label) and (
        label[0].tag_ != "VBG" or any(t.dep_ in ("nsubj", "nsubjpass", "expl", "csubj") for t in label))
    if (before and not before.endswith("\n")) or clause:
        return None  # a title in running prose ("Star Wars: The Last Jedi is …"), a clause ("Reviews were mixed: …")
    return sent.start_char + m.start(1), sent.start_char + m.end()


@dataclass
class ItemReader:
    """How a reader takes the lines of a list, walking an answer's sentences in order (the
    ``rules`` decomposer, and the LLM decomposers' walk, core/decompose/llm.py):
    :meth:`complete` gives the sentence a list item means, :meth:`read` takes in every other
    sentence. ``subject``: the last name a sentence was about (the answer's subject at first),
    whom a field line or a predicate line is about; ``past``: the answer's tense."""

    subject: str | None
    past: bool
    lead_in: str | None = None  # "Some possible effects are": the items after it complete it

    def complete(self, sent) -> str | None:
        """"Regulating mood." after "Some possible effects are:" → "Some possible effects are
        regulating mood."; "Won the 1921 Nobel Prize." → "Albert Einstein won …"; else None (a
        "Label: value" line is a field line's or says its own: fields.py, :func:`_topic_label`)."""
        if _TOPIC_LABEL.match(sent.text):
            return None
        return _complete_item(self.lead_in, sent) or _with_subject(sent, self.subject, self.past)

    def read(self, sent, reason: str | None) -> None:
        """Take in a sentence read as written (``reason``: why it is not checkable, or None)."""
        if _has_subject(sent):
            self.lead_in = None  # a sentence of its own ends the list ("Use a drone." does not)
        self.subject = _proper_subject(sent) or self.subject
        s = sent.text.strip()
        if reason == "fragment" and is_lead_in(sent):
            self.lead_in = _LEAD_TAIL.sub("", s)  # "The challenges include the following:" → "The challenges include"


def _has_subject(sent) -> bool:
    """Whether a sentence's root has a subject of its own (an expletive "there" / "it" counts)."""
    return any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in sent.root.children)


def _complete_item(lead_in: str | None, item) -> str | None:
    """A list item after a lead-in, as the sentence a person reads: "Some possible effects are" +
    "Regulating mood by releasing dopamine." → "Some possible effects are regulating mood by
    releasing dopamine."; ``None`` when there is no lead-in or the item is a sentence of its own
    (it has a subject), an instruction ("Use a drone.") or a question."""
    if lead_in is None:
        return None
    root = item.root
    text = item.text.strip()
    if (_has_subject(item) or root.tag_ in ("VB", "VBP", "VBZ", "VBD", "MD")
            or text.endswith("?") or not any(t.is_alpha for t in item)):
        return None
    first = next(t for t in item if not t.is_space)
    body = text if first.pos_ == "PROPN" or first.text.isupper() else text[:1].lower() + text[1:]
    return f"{lead_in} {body.rstrip(' .;:')}."


def _proper_subject(sent) -> str | None:
    """The name a sentence is about: its root's proper-noun subject with the compound / flat
    parts of the name before it ("Albert Einstein", "Apple Inc."); None for a pronoun, a common
    noun ("His father Hermann …") or no subject."""
    subj = next((t for t in sent.root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None or subj.pos_ != "PROPN":
        return None
    doc = sent.doc
    # a hyphen inside the name is part of it: "CRISPR-Cas9", not "Cas9"
    name = [t for t in subj.subtree if t.dep_ in ("compound", "flat") or t == subj
            or (t.text in ("-", "–") and not t.whitespace_ and t.i > 0 and not doc[t.i - 1].whitespace_)]
    run = [t for t in name if t.i <= subj.i and all(doc[j] in name for j in range(t.i, subj.i + 1))]
    while run and run[0].text in ("-", "–"):
        run = run[1:]
    # "of" and a name right after it belong to the name: "the Statue of Liberty", "the University of
    # Oxford", "the Great Pyramid of Giza" (the answer's "It" is not "The Statue")
    of = next((c for c in subj.children if c.dep_ == "prep" and c.lower_ == "of" and c.i == subj.i + 1), None)
    obj = next((c for c in of.children if c.dep_ == "pobj" and c.pos_ == "PROPN"), None) if of is not None else None
    if run and obj is not None and all(doc[j].dep_ in ("compound", "flat", "det") or j == obj.i
                                       for j in range(of.i + 1, obj.i + 1)):
        run += [doc[j] for j in range(of.i, obj.i + 1)]
    return "".join(t.text + (" " if t.whitespace_ else "") for t in run).strip() or subj.text


def past_tense(doc) -> bool:
    """Whether the answer speaks of its subject in the past ("Marie Curie was a physicist"): the
    root of its first sentence about a name (else of its first with a verb: not the frame, "Here's
    an overview …") is in the past tense. A field line then reads "was German", not "is German"
    (fields.py)."""
    def past(sent) -> bool:
        return sent.root.tag_ == "VBD" or any(c.tag_ == "VBD" for c in sent.root.children if c.dep_ in ("aux", "auxpass"))
    verbed = [s for s in doc.sents if s.root.pos_ in ("VERB", "AUX")]
    named = next((s for s in verbed if _proper_subject(s)), None)
    return past(named) if named is not None else bool(verbed) and past(verbed[0])


def _bounds(sent) -> tuple[int, int]:
    """A sentence's characters without the whitespace around it: what the parser was given
    (a blanked citation marker or label is whitespace there), so a span never covers a label
    of the next sentence."""
    return trimmed(sent.doc.text, sent.start_char, sent.end_char)


def _tidy(text: str) -> str:
    text = re.sub(r"\(\s*\)", " ", text)  # brackets whose content went to another claim
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text).strip()
    text = re.sub(r"^[,;:\s]+|[,;:\s]+$", "", text)
    text = re.sub(r"(,\s*)+\.", ".", text)
    text = re.sub(r"\b(and|or|but)\s*\.$", ".", text).strip()
    # a list's comma or the sentence's stop inside a title's closing mark: '"Kill Your Darlings," is …'
    text = re.sub(r"[,.;]([\"”])(?=\s|\.?$)", r"\1", text)
    # the article of a removed or shared modifier: "an journalist" -> "a journalist"
    text = re.sub(r"\b([Aa])n? (?=([A-Za-z]+))", _article, text)
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:]


def _article(m: re.Match) -> str:
    """"a" / "an" for the word after it (a heuristic on spelling; short words and
    abbreviations keep the article as written)."""
    word = m[2]
    if len(word) <= 2 or word.isupper():
        return m[0]
    vowel = (word[0].lower() in "aeiou" and not word.lower().startswith(("uni", "use", "usu", "eu", "one"))) or \
        word.lower().startswith(("honor", "honour", "honest", "hour", "heir"))  # a silent h
    return m[1] + ("n " if vowel else " ")


def _dedupe(claims: list[Claim]) -> list[Claim]:
    seen, out = set(), []
    for c in claims:
        key = " ".join(re.findall(r"\w+", c.text.lower()))  # "X won, breaking" = "X won breaking"
        if key in seen:
            continue
        seen.add(key)
        out.append(Claim(len(out), c.text, c.span, c.checkable, c.note, c.context))
    return out
