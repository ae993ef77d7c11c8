"""A chat answer's field lines ("Born: 14 March 1879, Ulm") become claims about its subject."""

from __future__ import annotations

import pytest

from core.decompose.citations import decompose_cited
from core.decompose.fields import read_field, read_lifespan
from core.decompose.rules import RulesDecomposer


def said(line: str, subject: str | None = "Albert Einstein", past: bool = True) -> list[str] | None:
    field = read_field(line, subject, past)
    return None if field is None else list(field.sentences)


def test_a_birth_or_a_death_reads_as_one_sentence_of_when_and_where():
    assert said("Born: 14 March 1879, Ulm, Germany") == ["Albert Einstein was born on 14 March 1879 in Ulm, Germany."]
    assert said("Born: March 14, 1879, in Ulm") == ["Albert Einstein was born on March 14, 1879 in Ulm."]
    assert said("Date of birth: 1879") == ["Albert Einstein was born in 1879."]
    assert said("Birthplace: Ulm, Kingdom of Württemberg") == ["Albert Einstein was born in Ulm, Kingdom of Württemberg."]
    # what a bracket adds besides a year is no part of the fact
    assert said("Died: 18 April 1955 (aged 76), Princeton, New Jersey.") == [
        "Albert Einstein died on 18 April 1955 in Princeton, New Jersey."]
    assert read_field("Born: 14 March 1879", "Albert Einstein", True).split  # the rules decomposer splits it
    assert said("Founded: April 1, 1976, Cupertino, California", "Apple Inc.", False) == [
        "Apple Inc. was founded on April 1, 1976 in Cupertino, California."]


def test_a_lifespan_reads_as_when_born_and_when_died():
    assert read_lifespan("(1922-1997)") == ("in 1922", "in 1997")
    assert read_lifespan("(born September 24, 1893 – April 6, 1966)") == ("on September 24, 1893", "on April 6, 1966")
    assert read_lifespan("([ˈdɪkᵻnz] 7 February 1812 - 9 June 1870)") == ("on 7 February 1812", "on 9 June 1870")
    # no life: dying first, living 300 years, an era, a single year, words
    for bracket in ("(1812 - 1712)", "(1600–1900)", "(428 – 348 BC)", "(1994)", "(aged 76)"):
        assert read_lifespan(bracket) is None, bracket


def test_a_list_value_gives_one_sentence_an_item():
    # coordinated in one sentence, "(1903)" would attach to the wrong prize
    assert said("Awards: Nobel Prize in Physics (1903); Nobel Prize in Chemistry (1911)", "Marie Curie") == [
        "Marie Curie received the Nobel Prize in Physics in 1903.", "Marie Curie received the Nobel Prize in Chemistry in 1911."]
    assert said("Nationality: German, Swiss, American") == [
        "Albert Einstein was German.", "Albert Einstein was Swiss.", "Albert Einstein was American."]
    assert said("Citizenship: United States", past=False) == ["Albert Einstein is a citizen of the United States."]
    assert said("Nationality: Greek; Welsh", "Maria Callas") == ["Maria Callas was Greek.", "Maria Callas was Welsh."]
    assert said("Occupation(s): physicist and author") == ["Albert Einstein was a physicist.", "Albert Einstein was an author."]
    assert said("Known for: the theory of relativity and the photoelectric effect") == [
        "Albert Einstein was known for the theory of relativity.", "Albert Einstein was known for the photoelectric effect."]
    assert said("Alma mater: University of Zurich (PhD, 1905)") == ["Albert Einstein studied at the University of Zurich."]
    assert said("Children: 3") == ["Albert Einstein had 3 children."]
    assert not read_field("Children: 3", "Albert Einstein", True).split


def test_a_single_value_is_one_claim_in_the_answers_tense():
    assert said("Capital: Tokyo", "Japan", past=False) == ["The capital of Japan is Tokyo."]
    assert said("Currency: Japanese yen", "Japan", past=False) == ["The currency of Japan is the Japanese yen."]
    assert said("Population: about 124 million (2024)", "Japan", past=False) == [
        "The population of Japan is about 124 million in 2024."]


def test_a_line_it_cannot_read_as_a_field_is_left_as_written():
    assert said("Reason: she wanted to study.") is None  # a label it does not know
    assert said("Legacy: He changed physics.") is None
    assert said("Born: he was born in a small town.") is None  # the value is a clause of its own
    assert said("Born: 1879", subject=None) is None  # nobody to say it of
    assert said("Albert Einstein was born in 1879.") is None
    assert said("Born:") is None


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


ANSWER = """Albert Einstein was a German-born theoretical physicist.

**Key facts:**
- **Born:** 14 March 1879, Ulm, Germany
- **Awards:** Nobel Prize in Physics (1921)
- Nationality: German, Swiss

Apple Inc. is an American technology company.
Founded: April 1, 1976
Founders: Steve Jobs and Steve Wozniak
"""


def test_a_chat_answers_infobox_becomes_claims_about_its_subject(rules):
    cited = decompose_cited(ANSWER, rules)
    got = [(c.claim.text, ANSWER[c.claim.span[0] : c.claim.span[1]]) for c in cited if c.claim.checkable]
    assert got[2:] == [
        ("Albert Einstein was born on 14 March 1879.", "Born:** 14 March 1879, Ulm, Germany"),
        ("Albert Einstein was born in Ulm.", "Born:** 14 March 1879, Ulm, Germany"),
        ("Ulm is in Germany.", "Born:** 14 March 1879, Ulm, Germany"),
        ("Albert Einstein received the Nobel Prize in Physics in 1921.", "Awards:** Nobel Prize in Physics (1921)"),
        ("Albert Einstein was German.", "Nationality: German, Swiss"),
        ("Albert Einstein was Swiss.", "Nationality: German, Swiss"),
        ("Apple Inc. is American.", "Apple Inc. is an American"),
        ("Apple Inc. is a technology company.", "Apple Inc. is an American technology company"),
        # lines without list marks are a field each, about the name the text last spoke of
        ("Apple Inc. was founded on April 1, 1976.", "Founded: April 1, 1976"),
        ("Apple Inc. was founded by Steve Jobs.", "Founders: Steve Jobs and Steve Wozniak"),
        ("Apple Inc. was founded by Steve Wozniak.", "Founders: Steve Jobs and Steve Wozniak"),
    ]
    # before: "Born: 14 March 1879, Ulm.", "Awards: Nobel Prize in Physics (1921).", one claim for
    # "Nationality: German, Swiss." and the two unmarked lines run together with no subject
    assert {c.claim.context for c in cited[3:6]} == {"Born: 14 March 1879, Ulm, Germany."}  # the line, read


def test_a_value_that_is_a_clause_of_its_own_is_read_as_written_without_its_label(rules):
    assert [c.text for c in rules.decompose("Albert Einstein was a physicist.\nAwards: Einstein received the Nobel Prize in 1921.")] == [
        "Albert Einstein was a physicist.", "Einstein received the Nobel Prize in 1921."]
    # a chat answer's bold topic before an item's sentence: parsed with it, it became the claim's subject
    answer = ("Albert Einstein was a physicist.\n\n- **Theory of relativity:** He developed the special theory in 1905.\n"
              "- **Photoelectric effect:** His explanation earned him the 1921 Nobel Prize.\n")
    cited = decompose_cited(answer, rules)
    assert [c.claim.text for c in cited] == [
        "Albert Einstein was a physicist.", "Albert Einstein developed the special theory in 1905.",
        "Albert Einstein's explanation earned him the 1921 Nobel Prize."]
    assert answer[slice(*cited[1].claim.span)] == "He developed the special theory in 1905"
    # a title or a clause before a colon in running prose is no label
    assert [c.text for c in rules.decompose("It was a hit. Star Wars: The Last Jedi is a film. Reviews were mixed: critics "
                                            "praised it.")][1:] == [
        "Star Wars: The Last Jedi is a film.", "Reviews were mixed: critics praised it."]


def test_plain_field_lines_are_one_sentence_each(rules):
    text = "Marie Curie was a physicist.\nBorn: 7 November 1867, Warsaw\nDied: 4 July 1934\nShe won two Nobel Prizes."
    assert [c.text for c in rules.decompose(text)] == [
        "Marie Curie was a physicist.", "Marie Curie was born on 7 November 1867.", "Marie Curie was born in Warsaw.",
        "Marie Curie died on 4 July 1934.", "Marie Curie won two Nobel Prizes."]


def test_a_line_that_says_what_someone_did_gets_its_subject(rules):
    """Chat answers list achievements as predicates: "- Won the 1921 Nobel Prize" was marked
    advice (the tagger reads "Won" as an instruction) and "- Developed …" had no subject."""
    answer = ("Albert Einstein was a physicist. Key achievements:\n\n- Developed the theory of relativity\n"
              "- Won the 1921 Nobel Prize in Physics\n- **Early life:** born in Ulm\n- Use a compass.\n")
    assert [(c.claim.text, c.claim.note) for c in decompose_cited(answer, rules)] == [
        ("Albert Einstein was a physicist.", None), ("Key achievements.", "fragment"),
        ("Albert Einstein developed the theory of relativity.", None),
        ("Albert Einstein won the 1921 Nobel Prize in Physics.", None),
        ("Albert Einstein was born in Ulm.", None),
        ("Use a compass.", "advice")]  # an instruction stays one
    # a participle with an object is the past ("Discovered …"), but "Awarded …" is a passive; the
    # answer's tense is its subject's sentence's, not its frame's ("Here's an overview …")
    answer = ("Here's an overview of Marie Curie.\n\nMarie Curie was a physicist.\n\n- Discovered polonium\n"
              "- Awarded the Nobel Prize in 1903\n- Known for radioactivity\n")
    assert [c.claim.text for c in decompose_cited(answer, rules)][2:] == [
        "Marie Curie discovered polonium.", "Marie Curie was awarded the Nobel Prize in 1903.",
        "Marie Curie was known for radioactivity."]
    # in running prose a sentence without a subject is left as the parser reads it
    assert rules.decompose("Albert Einstein was a physicist. Developed the theory of relativity.")[1].text == (
        "Developed the theory of relativity.")
