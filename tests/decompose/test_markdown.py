"""Markdown answers read as prose: the claims of a chat answer, an exact map back onto it, plain
answers untouched, fragments not checked, Markdown documents as evidence."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.decompose.citations import decompose_cited
from core.decompose.rules import RulesDecomposer
from core.errors import InputError
from core.markdown import looks_like_markdown, markdown_to_prose
from core.pipeline.given import load_given_files

# how a chat model answers: a heading, bold, a lead-in and a list with citations, a quote, a
# numbered list, code and a struck-through line
ANSWER = """## Summary

**Albert Einstein** (1879–1955) was a German-born physicist [1]. Key facts:

- He developed the theory of *relativity*.
- He received the 1921 Nobel Prize in Physics for the photoelectric effect [2].
- ~~He was born in Munich.~~ Einstein emigrated to the United States in 1933

```python
print("E = mc^2")
```

1. Einstein was born in Ulm.
2. He died in [Princeton](https://en.wikipedia.org/wiki/Princeton,_New_Jersey).
"""


@pytest.fixture(scope="module")
def rules():
    return RulesDecomposer()


def test_a_chat_answer_in_markdown_gives_the_claims_of_its_prose(rules):
    cited = decompose_cited(ANSWER, rules)
    got = [(c.claim.text, c.claim.checkable, c.citations) for c in cited]
    assert got == [
        ("Albert Einstein was German-born.", True, (1,)),
        ("Albert Einstein was a physicist.", True, (1,)),
        ("Albert Einstein was born in 1879.", True, (1,)),  # the lifespan in brackets: two facts
        ("Albert Einstein died in 1955.", True, (1,)),
        ("Key facts.", False, ()),  # the lead-in: a fragment, shown but not checked
        ("Albert Einstein developed the theory of relativity.", True, ()),  # not its neighbour's [2]
        ("Albert Einstein received the 1921 Nobel Prize in Physics for the photoelectric effect.", True, (2,)),
        ("Einstein emigrated to the United States.", True, ()),
        ("Einstein emigrated in 1933.", True, ()),
        ("Einstein was born in Ulm.", True, ()),
        ("Albert Einstein died in Princeton.", True, ()),
    ]
    # before: "## Summary was German-born.", "1." and "2." were claims, the list one sentence
    spans = [ANSWER[c.claim.span[0] : c.claim.span[1]] for c in cited]
    assert spans[0].startswith("Albert Einstein") and spans[3].endswith("(1879–1955)") and spans[4] == "Key facts:"
    assert spans[5] == "He developed the theory of *relativity"  # a claim span ends at its last word
    assert spans[-1] == "He died in [Princeton"
    assert all("Munich" not in c.claim.text and "print" not in c.claim.text for c in cited)


def test_the_frame_and_the_sources_of_a_chat_answer_are_not_checked(rules):
    answer = ("Sure!\n\nMarie Curie was a physicist who studied radioactivity [1]. She was the first woman to win "
              "a Nobel Prize [2].\n\n**Sources:**\n1. https://en.wikipedia.org/wiki/Marie_Curie\n"
              "2. [Nobel Prize facts](https://www.nobelprize.org/prizes/facts/)\n\n"
              "I hope this helps! Let me know if you have any other questions.\n")
    got = [(c.claim.text, c.claim.note, c.citations) for c in decompose_cited(answer, rules)]
    assert got == [
        ("Sure!", "conversational", ()),
        ("Marie Curie was a physicist.", None, (1,)),
        ("Marie Curie studied radioactivity.", None, (1,)),
        ("Marie Curie was the first woman to win a Nobel Prize.", None, (2,)),
        ("I hope this helps!", "conversational", ()),
        ("Let me know if you have any other questions.", "conversational", ()),
    ]
    # a label opening a sentence is no part of its claim ("Note" parsed as the sentence's root before)
    assert [(c.text, c.span) for c in rules.decompose("Einstein was a physicist. Note: he never won a second Nobel Prize.")] == [
        ("Einstein was a physicist.", (0, 24)), ("Einstein never won a second Nobel Prize.", (32, 65))]
    # a footnote cites as [n] does; its definition is a reference
    footnoted = "Marie Curie won two Nobel Prizes[^1]. She was born in Warsaw[^a].\n\n[^1]: https://www.nobelprize.org\n"
    assert [(c.claim.text, c.citations) for c in decompose_cited(footnoted, rules)] == [
        ("Marie Curie won two Nobel Prizes.", (1,)), ("Marie Curie was born in Warsaw.", ())]
    # plain text has no section to drop: a reference line is still no claim
    assert [c.note for c in rules.decompose("Paris is in France. [1] https://en.wikipedia.org/wiki/Paris")] == [
        None, "reference"]


def test_a_plain_answer_is_left_exactly_as_it_is(data_dir):
    """No FActScore answer shows a Markdown mark: the pass leaves every one untouched, so the
    decomposers' benchmark figures cannot move with it."""
    n = 0
    for name in ("ChatGPT_dev", "InstructGPT_dev", "PerplexityAI_dev"):
        for line in (data_dir / "factscore" / f"{name}.jsonl").read_text().splitlines():
            text = json.loads(line)["output"]
            prose = markdown_to_prose(text)
            assert not looks_like_markdown(text)
            assert prose.text == text and prose.span(0, len(text)) == (0, len(text))
            n += 1
    assert n == 111  # 37 answers a file


pieces = st.sampled_from([
    "# Title\n", "Title\n====\n", "- ", "* ", "1. ", "2) ", "> ", "  ", "**bold**", "__strong__", "*it*", "_it_",
    "`code`", "[text](https://a.example/x)", "[3](https://a.example)", "![img](p.png)", "~~gone~~", "```\ncode\n```\n",
    "word", " ", "\n", "\n\n", "\r\n", ".", ":", ",", ";", "[1]", "my_var", "2*3*4", "|a|b|\n", "|---|---|\n", "---\n",
    "[^2]", "[^n]", "[^2]: https://a.example\n", "Sources:\n", "## References\n", "Born: 1879", "Known for: ",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(pieces, min_size=1, max_size=25), st.booleans())
def test_every_prose_character_maps_back_onto_the_answer(parts, keep_headings):
    text = "".join(parts)
    prose = markdown_to_prose(text, keep_headings)
    assert len(prose.starts) == len(prose.ends) == len(prose.text)
    last = 0
    for ch, a, b in zip(prose.text, prose.starts, prose.ends, strict=True):
        assert 0 <= a <= b <= len(text) and a >= last  # in order, inside the answer
        last = a
        if a == b:  # inserted: a sentence end or a block's line break
            assert ch in ".\n"
        else:  # kept, or one mark replaced: a line break inside a block, a final ":" / "," / ";"
            assert text[a:b] == ch or (ch == " " and text[a:b] in ("\n", "\r\n")) or (ch == "." and text[a:b] in ":,;")


def test_fragments_are_shown_but_not_checked(rules):
    def notes(text):
        return [(c.text, c.note) for c in rules.decompose(text)]

    # a lead-in ends where its list begins; a chat answer's pleasantries are its frame (ExpertQA's Bing Chat answers)
    answer = ("I'm glad you are an expert in Biology.\n\nSome possible effects are:\n\n- **Regulating mood** by releasing "
              "dopamine[1]\n\nIt may have negative effects such as:\n\n- Inducing aggression[1]\n")
    assert [(c.claim.text, c.claim.note) for c in decompose_cited(answer, rules)] == [
        ("I'm glad you are an expert in Biology.", "conversational"), ("Some possible effects are.", "fragment"),
        # … and the items after it complete it: "Regulating mood." alone says nothing a source could back
        ("Some possible effects are regulating mood by releasing dopamine.", None),
        ("It may have negative effects such as.", "fragment"), ("It may have negative effects such as inducing aggression.", None)]
    listed = "The challenges include the following:\n1. High cost.\n2. Use a drone.\n3. Data privacy.\nThe results are good."
    cited = decompose_cited(listed, rules)
    assert [(c.claim.text, c.claim.note) for c in cited] == [
        ("The challenges include the following.", "fragment"), ("The challenges include high cost.", None),
        ("Use a drone.", "advice"),  # an instruction is no item that completes it, but the list goes on
        ("The challenges include data privacy.", None), ("The results are good.", None)]  # a sentence of its own ends it
    assert listed[slice(*cited[1].claim.span)] == "High cost." and cited[1].claim.context == "The challenges include high cost."

    # a lead-in may end on its preposition, at a line's end; in running prose such a sentence is a claim
    assert [(c.claim.text, c.claim.note) for c in decompose_cited(
        "This can be done by:\n\n1. Introducing new concepts gradually.\n2. Revisiting them often.", rules)] == [
        ("This can be done by.", "fragment"), ("This can be done by introducing new concepts gradually.", None),
        ("This can be done by revisiting them often.", None)]
    assert notes("It is a record to be proud of. She won in 1921.")[0] == ("It is a record to be proud of.", None)
    # a gerund label is no part of its line's claim; a heading of common words says nothing, a sentence may
    # still hold its names without a verb the tagger sees
    answer = "Benefits:\n\n1. Ensuring adequate representation: With stratified sampling, all subgroups are represented.\n"
    assert [(c.claim.text, c.claim.note) for c in decompose_cited(answer, rules)] == [
        ("Benefits.", "fragment"), ("With stratified sampling, all subgroups are represented.", None)]
    assert notes("Plasma extractor.") == [("Plasma extractor.", "fragment")]
    assert notes("A pairs with T and G pairs with C by hydrogen bonds.")[0][1] is None
    assert notes("Use clear language: Create content that is easy to understand.")[0][1] == "advice"
    assert notes("Early life. Marie Curie was born in Warsaw.") == [
        ("Early life.", "fragment"), ("Marie Curie was born in Warsaw.", None)]
    # a telegraphic item with a name or a number still says something
    assert notes("Nobel Prize in Physics (1921).") == [("Nobel Prize in Physics (1921).", None)]


def test_markdown_documents_are_evidence_as_prose(tmp_path):
    notes = tmp_path / "curie.md"
    notes.write_text("# Marie Curie\n\n* Born in **Warsaw**, 1867\n* Two Nobel Prizes ([source](https://x.example))\n")
    (doc,) = load_given_files([notes])
    assert doc.title == "Marie Curie"
    assert doc.text == "Marie Curie.\n\n\nBorn in Warsaw, 1867.\nTwo Nobel Prizes (source)."
    code = tmp_path / "code.md"
    code.write_text("```\nprint(1)\n```\n")
    with pytest.raises(InputError, match="no text outside its Markdown marks"):
        load_given_files([code])


def test_cli_decompose_shows_the_claims_check_would_check():
    """`claimscope decompose` splits as `check` does: the prose of a Markdown answer, its [n]
    markers apart, spans into the answer as given."""
    from typer.testing import CliRunner

    from tui.cli import app

    res = CliRunner().invoke(app, ["decompose", ANSWER, "--json", "--decomposer", "rules"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["text"] for r in rows][:5] == ["Albert Einstein was German-born.", "Albert Einstein was a physicist.",
                                             "Albert Einstein was born in 1879.", "Albert Einstein died in 1955.", "Key facts."]
    assert [r["note"] for r in rows].count("fragment") == 1
    assert not any(ch in r["text"] for r in rows for ch in "#*`[")
    assert all(ANSWER[r["span"][0]:r["span"][1]].split()[0].strip("*[") in r["text"] for r in rows)
