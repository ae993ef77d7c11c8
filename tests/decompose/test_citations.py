"""Citation markers: parsing, stripping with an exact offset map, claims keeping their citations."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.decompose.citations import decompose_cited, find_markers, parse_marker_ids, parse_references, strip_markers
from core.decompose.rules import RulesDecomposer


def test_marker_forms():
    assert parse_marker_ids("1") == (1,)
    assert parse_marker_ids("1, 3") == (1, 3)
    assert parse_marker_ids("2-4") == (2, 3, 4)
    assert parse_marker_ids("2–4") == (2, 3, 4)
    assert parse_marker_ids("4-2") is None and parse_marker_ids("1-5000") is None and parse_marker_ids("0") is None
    assert [m.ids for m in find_markers("a [1][2] b [3, 4]. c [x] d [5-6]")] == [(1,), (2,), (3, 4), (5, 6)]
    assert parse_references(["[1] https://a.example", " [2]  A title ", "no marker"]) == {1: "https://a.example", 2: "A title"}


def test_expertqa_answer_claims_keep_their_citations(data_dir):
    row = json.loads((data_dir / "fixtures" / "expertqa_dev_5.jsonl").read_text().splitlines()[0])
    answer = row["answers"]["gpt4"]["answer_string"]
    cited = decompose_cited(answer, RulesDecomposer())
    got = [(c.claim.text.split(",")[0][:40], c.citations) for c in cited]
    assert got[0] == ("Yes", (1,))
    # "… mathematical methods, such as AI algorithms, …" gives three claims, all citing [4]
    assert [ids for _, ids in got] == [(1,), (2,), (2,), (3,), (4,), (4,), (4,), ()]  # the closing sentence cites nothing
    assert "AI algorithms are mathematical methods." in [c.claim.text for c in cited]
    assert all("[" not in c.claim.text for c in cited)
    assert sum("between the user and the AI system" in c.claim.text for c in cited) == 1  # not split
    for c in cited:  # spans point into the original, cited text
        # (a claim starts with a capital: "However, inventions …" → "Inventions …")
        assert answer[c.claim.span[0] : c.claim.span[1]].split()[0].strip(",").lower() in c.claim.text.lower()


words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(words, st.lists(st.integers(min_value=1, max_value=40), max_size=3)), min_size=1, max_size=8))
def test_strip_markers_keeps_an_exact_offset_map(parts):
    text = "".join(w + "".join(f"[{i}]" for i in ids) for w, ids in parts)
    clean, markers, offsets = strip_markers(text)
    assert "[" not in clean
    assert [i for m in markers for i in m.ids] == [i for _, ids in parts for i in ids]
    for k, ch in enumerate(clean):
        assert text[offsets[k]] == ch
    assert len(offsets) == len(clean) + 1
