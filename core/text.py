"""Small text utilities shared by retrieval and display (no models)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)

# A compact English stop-word list: these words carry no retrieval signal and OR-ing them
# into an FTS5 query only makes it slower.
STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"]
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


def query_terms(text: str, distinct: bool = True) -> list[str]:
    """The terms of a bag-of-words BM25 query: content words (every word if there are none),
    each once or, with ``distinct=False``, as often as written. Shared by FTS5 and Tantivy."""
    def pick(toks: list[str]) -> list[str]:
        return list(dict.fromkeys(toks)) if distinct else toks

    return pick(content_words(text)) or pick(words(text))


def fts_match_query(text: str, distinct: bool = True) -> str | None:
    """An FTS5 MATCH expression: the query's content words, quoted and OR-ed.

    Quoting makes every token a literal (no FTS5 syntax injection from user text); OR
    gives BM25 ranking over partial matches, like a classic bag-of-words BM25 query.
    With ``distinct=False`` every occurrence is kept: FTS5's ``bm25()`` sums over the query's
    phrases, so a word written 5 times weighs 5 times — query-term frequency, as Anserini's
    bag-of-words queries weigh it, which Query2doc's repeated claim relies on (seed 000 Eq. 1).
    """
    toks = query_terms(text, distinct)
    if not toks:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)


# --- the kind of a source, from its titles (the verdict layer and the evidence-sentence head) ---

SOURCE_KINDS = ("entity", "abstract", "given")
# A title of at most this many words (bracketed disambiguators left out) names a subject:
# wiki-vital 99 % of its 10,033 titles, Climate-FEVER's cited articles 97 %, SciFact's abstracts 3.7 %.
SUBJECT_TITLE_WORDS = 5


def subject_title(title: str) -> bool:
    """The title names a subject ("Marie Curie", "Mercury (planet)", "Global warming") rather than
    describing a finding ("Alterations of the gut microbiome in …"): at most
    :data:`SUBJECT_TITLE_WORDS` words once bracketed disambiguators are dropped."""
    tokens = re.sub(r"\([^)]*\)", " ", title).split()
    return 0 < len(tokens) <= SUBJECT_TITLE_WORDS


def source_kind(passages: Sequence[Any] | dict[int, str]) -> str:
    """The kind of source a claim's evidence comes from, derived from the evidence itself
    (deterministic, no stored attribute needed):

    ``passages``: evidence with ``source`` and ``title`` (``PassageEvidence``, ``StoredPassage``),
    or a map of passage id to title.

    - ``given``: the user's own documents (a reserved source, its name starts with ``_``:
      ``check --against``), or evidence without titles (a dataset's own passages);
    - ``entity``: most distinct titles name a subject (an encyclopedia, a folder of articles:
      each document is about its title, so "the subject's own document" means something);
    - ``abstract``: most titles describe findings (a corpus of abstracts: no document is a
      subject's own, and a contradiction never comes from one).

    Why: one weight set over all three misread abstracts — weights fitted with retrieval over
    wiki-vital learned that a contradiction counts when it comes from the subject's own
    article, and lost .05 macro-F1 on SciFact (docs/benchmarks.md)."""
    if isinstance(passages, dict):
        titles = {t for t in passages.values() if t}
    else:
        if any(p.source.startswith("_") for p in passages):
            return "given"
        titles = {p.title for p in passages if p.title}
    if not titles:
        return "given"
    named = sum(subject_title(t) for t in titles)
    return "entity" if 2 * named > len(titles) else "abstract"
