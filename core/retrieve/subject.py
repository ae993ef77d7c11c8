"""The subject's own document first: when a claim names an entity that has its own document
in the knowledge source (its title), that document's passages join the candidates and rank
above passages that only mention the subject.

Why: a verdict about Marie Curie should be decided on Marie Curie's article; passages of the
Becquerel or Wu articles mention her (and the claim's words) but are about someone else,
and lexical/dense similarity alone ranked them higher. Encyclopaedic sources are organised
by subject, so the title is the strongest "aboutness" signal they have (the same intuition
as FEVER's document retrieval by title matching, Thorne et al. 2018 / Hanselowski et al.
2018). The rule is stated, not fitted:

1. subject candidates: the claim's named entities in order of appearance (spaCy NER), then
   its leading capitalised phrase ("The Eiffel Tower is …" → "Eiffel Tower");
2. a candidate matches a document whose normalised title equals it (case-folded, accents
   and punctuation dropped; a trailing disambiguation "(…)" is ignored: "Balloon
   (aeronautics)" matches "Balloon"). The first candidate that matches is the subject;
   a candidate matching several documents is ambiguous and skipped;
3. the rule acts only when it is safe (:func:`acts`): the mention is a name (an NER entity,
   or a leading capitalised phrase of two or more words: "Andromeda Galaxy") that is the
   claim's whole grammatical subject (spaCy parse: "Marie Curie discovered radium", not
   "Arctic icemelt is a natural cycle" nor "… in Alaska"), and
   either the subject's document is already a candidate (one of its passages is in the top
   ``SUBJECT_POOL`` of the fused ranking) or the title equals the mention exactly and the
   name has at least two words ("Marie Curie", not "Arctic"). On claims without a named
   entity, and for one-word names whose article the retrievers did not find, a
   better-scored document is never demoted. (The unrestricted rule, measured on
   Climate-FEVER and wiki-vital biographies, demoted gold documents there: notes in
   docs/benchmarks.md.)
4. then that document's passages go first, in the order the fused ranking gives them
   (passages it did not retrieve follow in document order), then every other passage as
   ranked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlite_utils

from store.records import SourceInfo

Ranked = list[tuple[int, float]]
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_NON_WORD = re.compile(r"[^\w]+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_PRONOUNS = {"i", "he", "she", "it", "we", "they", "you", "this", "that", "these", "those", "there", "his", "her",
             "its", "their", "in", "on", "at", "by", "for", "from", "after", "before", "during", "as", "if"}
SUBJECT_POOL = 20  # "already a candidate": a passage of the subject's document in the fused top 20
_LEADING = re.compile(r"^(?:The |A |An )?((?:[A-Z][\w'’.-]*)(?:\s+(?:of |de |von |van |the )?[A-Z][\w'’.-]*)*)")


def normalise_title(text: str) -> str:
    """Case-folded, accent-free words joined by one space."""
    if not text.isascii():  # ASCII has no decomposition nor combining marks: the same result, 3× faster
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("’", "'").replace("'s ", " ")
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


def subject_candidates(claim: str, entities: Sequence[str]) -> list[str]:
    """Named entities (a leading article dropped) and the leading capitalised phrase, in
    order of their first position in the claim, each once: the earliest mention is the
    likeliest grammatical subject ("The Eiffel Tower is located in Berlin" → Eiffel Tower,
    not Berlin)."""
    out = [_ARTICLE.sub("", e.strip()) for e in entities if e.strip()]
    m = _LEADING.match(claim.strip())
    if m and normalise_title(m.group(1)) not in _PRONOUNS:
        phrase = m.group(1).rstrip(".")
        out.append(phrase)
        words = phrase.split()
        if len(words) > 1 and words[-1].endswith(("'s", "’s")):
            out.append(" ".join([*words[:-1], words[-1][:-2]]))
    text = claim.strip()
    out.sort(key=lambda c: (pos if (pos := text.find(c)) >= 0 else len(text)))
    seen: set[str] = set()
    uniq = []
    for c in out:
        key = normalise_title(c)
        if key and key not in seen:
            seen.add(key)
            uniq.append(c)
    return uniq


@dataclass(frozen=True)
class Subject:
    """The claim's subject and its own document."""

    mention: str  # the claim text that matched
    document_id: int
    title: str
    passage_ids: tuple[int, ...]  # in document order
    entity: bool = True  # a named entity: found by the NER, or a leading capitalised phrase of 2+ words
    is_subject: bool = True  # the mention is the claim's whole grammatical subject (when a parse was given)
    exact: bool = True  # the title equals the mention (no disambiguation suffix dropped)


class TitleIndex:
    """Normalised title → document ids of a set of sources, read once per source state."""

    def __init__(
        self, db: sqlite_utils.Database, sources: Sequence[SourceInfo],
        by_title: dict[str, list[tuple[int, str]]] | None = None,
    ) -> None:
        """``by_title``: the map an earlier index over the same source state built (the
        workbench keeps it between runs: ~0.5 s of each TUI run on 2 cores built it again)."""
        self._db = db
        self._by_title: dict[str, list[tuple[int, str]]] = {} if by_title is None else by_title
        ids = [s.id for s in sources]
        if not ids or by_title is not None:
            return
        rows = db.execute(
            f"SELECT id, title FROM documents WHERE source_id IN ({','.join('?' * len(ids))})", ids,
        ).fetchall()
        for doc_id, title in rows:
            keys = {normalise_title(title), normalise_title(_PAREN.sub("", title))}
            for key in keys - {""}:
                self._by_title.setdefault(key, []).append((doc_id, title))

    @property
    def by_title(self) -> dict[str, list[tuple[int, str]]]:
        return self._by_title

    def lookup(self, mention: str) -> list[tuple[int, str]]:
        return self._by_title.get(normalise_title(mention), [])

    def find(self, claim: str, entities: Sequence[str], subject: str | None = None) -> Subject | None:
        """The first subject candidate with exactly one document; ``subject`` is the claim's
        grammatical subject phrase (spaCy parse), None when unknown (then no mention is
        the subject and the rule never acts)."""
        ents = {normalise_title(_ARTICLE.sub("", e.strip())) for e in entities}
        subj = normalise_title(_ARTICLE.sub("", subject.strip())) if subject else None
        for mention in subject_candidates(claim, entities):
            docs = self.lookup(mention)
            exact = [d for d in docs if normalise_title(d[1]) == normalise_title(mention)]
            if len(exact) == 1:
                docs = exact
            if len(docs) != 1:
                continue  # no document, or an ambiguous name
            doc_id, title = docs[0]
            pids = tuple(r[0] for r in self._db.execute(
                "SELECT id FROM passages WHERE document_id = ? ORDER BY idx", [doc_id]).fetchall())
            if pids:
                key = normalise_title(mention)
                named = key in ents or len(key.split()) >= 2  # an NER entity, or a capitalised phrase of 2+ words
                return Subject(mention, doc_id, title, pids, entity=named, is_subject=key == subj,
                               exact=normalise_title(title) == key)
        return None


def acts(ranked: Ranked, subject: Subject | None, pool: int = SUBJECT_POOL) -> bool:
    """Whether the rule may move ``subject``'s document first (rule 3): a named entity whose
    document is already among the top ``pool`` candidates, or whose exact title has two or
    more words."""
    if subject is None or not subject.entity or not subject.is_subject:
        return False
    own = set(subject.passage_ids)
    if any(pid in own for pid, _ in ranked[:pool]):
        return True
    return subject.exact and len(normalise_title(subject.mention).split()) >= 2


def subject_first(ranked: Ranked, subject: Subject | None, pool: int = SUBJECT_POOL) -> Ranked:
    """``ranked`` with the subject document's passages moved to the top (rule 4) when the
    rule acts (:func:`acts`), else unchanged. Each keeps its fused score; passages the
    ranking did not hold join with the lowest score of the subject passages it held (or the
    top score)."""
    if not acts(ranked, subject, pool):
        return ranked
    own = set(subject.passage_ids)
    held = [(pid, s) for pid, s in ranked if pid in own]
    rest = [(pid, s) for pid, s in ranked if pid not in own]
    seen = {pid for pid, _ in held}
    floor = min((s for _, s in held), default=ranked[0][1] if ranked else 0.0)
    missing = [(pid, floor) for pid in subject.passage_ids if pid not in seen]
    return held + missing + rest


# claim → (named entities, grammatical subject phrase or None): models.nlp.SpacyClaimSubject
EntityFn = Callable[[str], tuple[list[str], str | None]]
