"""A chat answer's field lines ("Born: 14 March 1879, Ulm, Germany") as sentences about its subject.

Chat models answer "tell me about X" with an infobox in a list: "**Born:** 14 March 1879, Ulm",
"**Known for:** the theory of relativity", "**Awards:** Nobel Prize in Physics (1921)". Read as
written (core/markdown.py makes each item a sentence), such an item is a claim with no subject:
"Born: 14 March 1879, Ulm." — retrieval does not know whose birth it is, and the verifier (an
NLI model, which reads a premise against a hypothesis sentence) has no one to judge it of. A
person reads the label as the predicate and the answer's subject as the subject. So does this
module: :func:`read_field` rewrites a line whose label it knows into sentences ("Albert
Einstein was born on 14 March 1879 in Ulm, Germany."; one per item of a list: "Albert Einstein
was German.", "Albert Einstein was Swiss."), and the ``rules`` decomposer splits a birth's or a
death's sentence as any other (FActScore's atomic facts, Min et al. 2023 §3.1: the date, the
place, and "Ulm is in Germany" are facts of their own). Each claim keeps the line's span and the
line as its context.

The same two facts written inline, a lifespan in brackets after a name ("Gonzalo Fonseca
(1922–1997) was …"), are read by :func:`read_lifespan` for the ``rules`` decomposer.

Only labels of the table below are read: a label it does not know ("Reason: …", "Why it
matters: …") is a line as written, since its value may be a clause of its own and the label
no predicate. A value that is a sentence of its own ("Legacy: He changed physics.") is left
alone too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_YEAR = r"(?:c\.\s*|circa\s+)?\d{3,4}(?:\s*(?:BC|BCE|AD|CE)\b)?"
# "14 March 1879", "March 14, 1879", "March 1879", "1879" (the day, month and year of a birth,
# death or founding; ISO dates too)
_DATE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\s*,?\s*{_YEAR}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*{_YEAR}"
                   rf"|{_MONTH}\s+{_YEAR}|\d{{4}}-\d{{2}}-\d{{2}}|{_YEAR})(?![\w-])", re.IGNORECASE)
_DAY = re.compile(rf"\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}\b|\d{{4}}-\d{{2}}-\d{{2}}", re.IGNORECASE)
_LINE = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z ()/'’-]{0,30}?)\s*:\s+(?P<value>\S.*?)[\s.;]*$", re.DOTALL)
_PAREN = re.compile(r"\s*\(([^()]*)\)")
# a value that is a sentence of its own: it opens with a pronoun or an article-less clause
_CLAUSE = re.compile(r"^(?:he|she|it|they|we|i|this|these|there|his|her|their)\b", re.IGNORECASE)
# "German", "Chinese", "Polish", "Swiss", "Iraqi" … and the common demonyms of other shapes: an
# adjective ("was Greek"), where a country's name reads "was a citizen of Greece"
_DEMONYM = re.compile(r"^(?:[A-Z][a-z]+(?:an|ese|ish|ic|ch|i|ss|ot|ean|ian)|Greek|Welsh|Kazakh|Filipino|Uzbek|Tajik|"
                      r"Kyrgyz|Slovak|Arab|Afghan|Inuit|Maori|Monegasque|Malagasy)$")


@dataclass(frozen=True)
class Field:
    """What a field line says, as sentences about the subject; ``split``: the rules decomposer
    splits them further (a birth's date and place), else each is one claim as it stands."""

    sentences: tuple[str, ...]
    split: bool = False


Builder = Callable[[str, str, str], "Field | None"]


def _label(raw: str) -> str:
    """"Date of birth", "Award(s)", "Known For" → "date of birth", "awards", "known for"."""
    label = re.sub(r"\(s\)", "s", raw.strip().lower().replace("’", "'"))
    return re.sub(r"\s+", " ", label)


def _years_kept(value: str) -> str:
    """"Nobel Prize in Physics (1921)" → "… in 1921"; other brackets ("(aged 76)", "(m. 1903)",
    "(PhD, 1905)") are dropped: what they say is no part of the field's fact."""
    def repl(m: re.Match) -> str:
        inner = m[1].strip()
        return f" in {inner}" if re.fullmatch(_YEAR, inner) else ""
    return re.sub(r"\s{2,}", " ", _PAREN.sub(repl, value)).strip(" ,;")


def _items(value: str) -> list[str]:
    """A list value's items: "German, Swiss, American", "A; B", "A, B and C", "A & B"."""
    parts = re.split(r"\s*[;,]\s*|\s+(?:and|&)\s+", value)
    return [p.strip() for p in parts if p.strip()]


def _when_where(value: str) -> tuple[str, str]:
    """("on 14 March 1879" / "in 1879", "in Ulm, Germany") from "14 March 1879, Ulm, Germany" or
    "Ulm, Germany, March 14, 1879"; either may be empty."""
    m = _DATE.search(value)
    if m is None:
        place = re.sub(r"^(?:in|at)\s+", "", value.strip(" ,;"), flags=re.IGNORECASE)
        return "", f"in {place}" if place else ""
    date = m[0].strip()
    rest = (value[: m.start()] + " " + value[m.end() :]).strip(" ,;")
    rest = re.sub(r"\s{2,}", " ", re.sub(r"^(?:in|at|,)\s+|\s+(?:in|at)$", "", rest, flags=re.IGNORECASE)).strip(" ,;")
    rest = re.sub(r"^(?:in|at)\s+", "", rest, flags=re.IGNORECASE)
    return when_phrase(date), f"in {rest}" if rest and not _DATE.search(rest) else ""


def date_preposition(date: str) -> str:
    """"on" for a day ("on 14 March 1879"), "in" for a year or a month ("in 1879", "in March
    1879"): the preposition FActScore's annotators write ("was born on October 2, 1973", "died in 1997")."""
    return "on" if _DAY.search(date) else "in"


def when_phrase(date: str) -> str:
    return f"{date_preposition(date)} {date}"


# a lifespan in brackets after a name, Wikipedia's lead style: "(1922–1997)", "(March 3, 1901 – May 5,
# 1980)", "(born September 24, 1893 – April 6, 1966)", "([ˈdɪkᵻnz] 7 February 1812 - 9 June 1870)";
# four-digit years only, so no era is misread ("428 – 348 BC")
_LIFE_DATE = (rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\s*,?\s*\d{{4}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*\d{{4}}"
              rf"|{_MONTH}\s+\d{{4}}|\d{{4}})")
_LIFESPAN = re.compile(rf"\(\s*(?:\[[^\]]*\]\s*[,;]?\s*)?(?:(?:born|b\.)\s+)?(?P<born>{_LIFE_DATE})\s*(?:[–—-]|to)\s*"
                       rf"(?:(?:died|d\.)\s+)?(?P<died>{_LIFE_DATE})\s*\)", re.IGNORECASE)


def read_lifespan(bracket: str) -> tuple[str, str] | None:
    """("in 1922", "in 1997") from "(1922-1997)", ("on March 3, 1901", "on May 5, 1980") from
    "(March 3, 1901 – May 5, 1980)": when a person was born and when they died, the two facts
    FActScore's annotators write for such a bracket ("Gonzalo Fonseca was born in 1922.",
    "Gonzalo Fonseca died in 1997."); ``None`` for any other bracket, and for years that are no
    lifespan (a death before the birth, more than 120 years apart: a period, not a life)."""
    m = _LIFESPAN.fullmatch(bracket.strip())
    if m is None:
        return None
    born, died = (int(re.findall(r"\d{4}", m[k])[-1]) for k in ("born", "died"))
    if not 0 <= died - born <= 120:
        return None
    return when_phrase(m["born"].strip()), when_phrase(m["died"].strip())


def _event(verb: str) -> Builder:
    """When and where: one sentence the rules decomposer splits further ("… was born on 14 March
    1879 in Ulm, Germany." → the date, the place, and "Ulm is in Germany")."""
    def build(subject: str, copula: str, value: str) -> Field | None:
        when, where = _when_where(value)
        if not (when or where):
            return None
        return Field((" ".join(x for x in (subject, verb, when, where) if x) + ".",), split=True)
    return build


def _the(item: str) -> str:
    """"Nobel Prize in Physics" → "the Nobel Prize in Physics", "University of Paris" → "the
    University of Paris": the article a sentence needs (an NLI model reads the bare name as a
    headline, not as a statement)."""
    if re.match(r"^(?:a|an|the)\s", item, re.IGNORECASE) or not item[:1].isupper():
        return item
    if re.search(r"\b(?:Prize|Award|Medal|Order|Trophy|Cross)\b", item) or re.match(r"^(?:University|College|Institute|School) of\b", item):
        return "the " + item
    return item


def _each(template: str) -> Builder:
    """One sentence per item of a list value ("Awards: A (1903); B (1911)" → "X received the A in
    1903." and "X received the B in 1911."): coordinated in one sentence, a year would attach to
    the wrong item."""
    return lambda subject, copula, value: Field(tuple(template.format(s=subject, cop=copula, v=_the(it)) + "."
                                                      for it in _items(value)))


def _one(template: str) -> Builder:
    """One sentence, the value whole ("Currency: Japanese yen" is one thing, not "Japanese" and "yen")."""
    return lambda subject, copula, value: Field((template.format(s=subject, cop=copula, v=value) + ".",))


def _nationality(subject: str, copula: str, value: str) -> Field:
    def country(it: str) -> str:  # "the United States", "the Netherlands"
        plural = it.startswith(("United ", "Republic ", "Czech Republic")) or it in _PLURAL_COUNTRIES
        return "the " + it if plural else it
    return Field(tuple(f"{subject} {copula} {it}." if _DEMONYM.match(it) else f"{subject} {copula} a citizen of {country(it)}."
                       for it in _items(value)))


_PLURAL_COUNTRIES = frozenset({"Netherlands", "Philippines", "Bahamas", "Gambia", "Maldives", "Comoros", "Seychelles"})


def _occupation(subject: str, copula: str, value: str) -> Field:
    def noun(it: str) -> str:
        if re.match(r"^(?:a|an|the)\s", it, re.IGNORECASE):
            return it
        return ("an " if it[:1].lower() in "aeiou" else "a ") + it
    return Field(tuple(f"{subject} {copula} {noun(it)}." for it in _items(value)))


def _children(subject: str, copula: str, value: str) -> Field:
    if re.fullmatch(r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve", value, re.IGNORECASE):
        return Field((f"{subject} had {value} children.",))
    return _each("{s} was the parent of {v}")(subject, copula, value)


# label → the sentences it makes about the answer's subject (Wikipedia's infobox fields, which chat
# answers copy; "cop" is the answer's own tense: "was" in a bio of the dead)
_FIELDS: dict[str, Builder] = {
    **dict.fromkeys(("born", "birth", "date of birth", "birth date", "place of birth", "birthplace", "date and place of birth"),
                    _event("was born")),
    **dict.fromkeys(("died", "death", "date of death", "death date", "place of death", "date and place of death"),
                    _event("died")),
    **dict.fromkeys(("founded", "established", "formed", "date founded", "founding date", "inception"), _event("was founded")),
    **dict.fromkeys(("opened",), _event("opened")),
    **dict.fromkeys(("built", "completed", "constructed"), _event("was built")),
    **dict.fromkeys(("known for", "best known for", "famous for", "notable for"), _each("{s} {cop} known for {v}")),
    **dict.fromkeys(("awards", "award", "notable awards", "honors", "honours", "prizes", "major awards"),
                    _each("{s} received {v}")),
    **dict.fromkeys(("nationality", "nationalities", "citizenship"), _nationality),
    **dict.fromkeys(("occupation", "occupations", "profession", "professions"), _occupation),
    **dict.fromkeys(("field", "fields", "field of study", "fields of study"), _each("{s} worked in {v}")),
    **dict.fromkeys(("spouse", "spouses", "married to", "partner", "wife", "husband"), _each("{s} was married to {v}")),
    **dict.fromkeys(("children",), _children),
    **dict.fromkeys(("parents",), _each("{s} was a child of {v}")),
    **dict.fromkeys(("education", "alma mater", "studied at"), _each("{s} studied at {v}")),
    **dict.fromkeys(("founder", "founders", "founded by"), _each("{s} was founded by {v}")),
    **dict.fromkeys(("designer", "architect", "designed by"), _each("{s} was designed by {v}")),
    **dict.fromkeys(("author", "written by"), _each("{s} was written by {v}")),
    **dict.fromkeys(("directed by", "director"), _each("{s} was directed by {v}")),
    **dict.fromkeys(("headquarters", "hq", "headquartered in"), _one("{s} {cop} headquartered in {v}")),
    **dict.fromkeys(("location", "located in"), _one("{s} {cop} located in {v}")),
    **dict.fromkeys(("capital",), _one("The capital of {s} {cop} {v}")),
    **dict.fromkeys(("largest city",), _one("The largest city of {s} {cop} {v}")),
    **dict.fromkeys(("population",), _one("The population of {s} {cop} {v}")),
    **dict.fromkeys(("area", "total area"), _one("The area of {s} {cop} {v}")),
    **dict.fromkeys(("height",), _one("The height of {s} {cop} {v}")),
    **dict.fromkeys(("length",), _one("The length of {s} {cop} {v}")),
    **dict.fromkeys(("currency",), _one("The currency of {s} {cop} the {v}")),
    **dict.fromkeys(("official language", "official languages"), _each("{v} {cop} an official language of {s}")),
}


def read_field(line: str, subject: str | None, past: bool) -> Field | None:
    """What a field line states about ``subject`` ("Born: 14 March 1879, Ulm, Germany",
    "Albert Einstein" → "Albert Einstein was born on 14 March 1879 in Ulm, Germany."), or
    ``None`` when ``line`` is no field line of a known label, its value is a clause of its own,
    or there is no subject to say it of. ``past``: the answer speaks of its subject in the past
    tense ("was a physicist"), so "Nationality: German" reads "was German"."""
    if not subject:
        return None
    m = _LINE.match(line)
    if m is None:
        return None
    build = _FIELDS.get(_label(m["label"]))
    value = _years_kept(m["value"])
    if build is None or not value or _CLAUSE.match(value):
        return None
    return build(subject, "was" if past else "is", value)


def is_field_line(line: str) -> bool:
    """Whether ``line`` is a field line :func:`read_field` reads (whoever its subject is): the
    LLM decomposers leave such a line to the rules decomposer, whose reading is exact, where the
    small model, given "Died: 18 April 1955, Princeton" after a birth date, wrote "Einstein was
    born in Princeton"."""
    return read_field(line, "X", False) is not None


def value_is_clause(sent) -> bool:
    """Whether a parsed line's value (after its first colon, outside brackets) has a finite verb:
    "Awards: Einstein received the Nobel Prize in 1921." says its fact itself, with its own
    subject, and is read as written. (``sent``: a spaCy span, tagged.)"""
    tokens = list(sent)
    colon = next((k for k, t in enumerate(tokens) if t.text == ":"), None)
    if colon is None:
        return False
    depth = 0
    for t in tokens[colon + 1 :]:
        depth += (t.text == "(") - (t.text == ")")
        if depth <= 0 and t.tag_ in ("VBD", "VBZ", "VBP", "MD"):
            return True
    return False

