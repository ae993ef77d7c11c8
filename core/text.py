"""Small text utilities shared by retrieval and display (no models)."""

from __future__ import annotations

import re

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
