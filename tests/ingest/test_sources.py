"""Source loaders on real files, and every bad input giving a clear, located error."""

from __future__ import annotations

import json

import pytest

from core.errors import InputError
from core.ingest.sources import CsvColumns, detect_format, load_documents, load_wiki_vital


def test_scifact_corpus_keeps_sentence_boundaries(data_dir):
    docs = load_documents(data_dir / "fixtures" / "scifact_mini_corpus.jsonl")
    assert len(docs) == 77
    raw = json.loads((data_dir / "fixtures" / "scifact_mini_corpus.jsonl").read_text().splitlines()[0])
    d = docs[0]
    assert d.ext_id == str(raw["doc_id"]) and d.title == raw["title"].strip()
    assert [d.text[s:e] for s, e in d.sentences] == [s.strip() for s in raw["abstract"]]


def test_jsonl_with_id_title_text(data_dir):
    docs = load_documents(data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl")
    assert len(docs) == 300
    assert docs[0].ext_id == "wv00171" and docs[0].title == "Age of Enlightenment"
    assert detect_format(data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl") == "jsonl"


def test_builtin_wiki_vital_reads_the_package_data_in_place():
    docs = load_wiki_vital()
    assert 10_000 <= len(docs) <= 10_033
    curie = next(d for d in docs if d.title == "Marie Curie")
    assert "radium" in curie.text.lower() or "radioactivity" in curie.text.lower()
    assert curie.url == "https://en.wikipedia.org/wiki/Marie_Curie"


def test_folder_and_csv(tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\nAlpha is the first letter.\n")
    (folder / "sub" / "b.txt").write_text("Beta comes second.")
    (folder / "ignored.bin").write_bytes(b"\x00\x01")
    docs = load_documents(folder)
    assert [(d.ext_id, d.title) for d in docs] == [("a.md", "Alpha"), ("sub/b.txt", "b")]
    # a Markdown file is read as prose: its heading a sentence of its own, the mark gone
    assert [d.text for d in docs] == ["Alpha.\n\nAlpha is the first letter.", "Beta comes second."]

    csv_path = tmp_path / "d.csv"
    csv_path.write_text('key,body,head\nk1,"Text with ""quotes"", and a comma",Head 1\nk2,Second,Head 2\n')
    docs = load_documents(csv_path, columns=CsvColumns(text="body", title="head", id="key"))
    assert [(d.ext_id, d.title, d.text) for d in docs] == [
        ("k1", "Head 1", 'Text with "quotes", and a comma'),
        ("k2", "Head 2", "Second"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 1, "text": "ok"}\n{"id": 2, "text": \n', r"line 2: malformed JSON"),
        ('{"id": 1, "text": "ok"}\n\n{"title": "no id", "text": "x"}\n', r"line 3: missing field 'id'"),
        ('{"id": 1, "text": 42}\n', r"line 1: field 'text' must be str"),
        ('{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n', r"line 2: duplicate id '1' \(first on line 1\)"),
        ("[1, 2]\n", r"line 1: expected a JSON object"),
        ("\n\n", r"contains no documents"),
        ('{"id": 1, "text": "   "}\n', r"contains no documents"),
    ],
)
def test_bad_jsonl_is_reported_with_its_line(tmp_path, content, message):
    path = tmp_path / "c.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        load_documents(path)
    assert str(path) in str(info.value)


def test_missing_path_directory_for_file_and_invalid_utf8(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_documents(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        load_documents(tmp_path, fmt="jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": 1, "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match="not valid UTF-8"):
        load_documents(bad)
    weird = tmp_path / "data.xyz"
    weird.write_text("x")
    with pytest.raises(InputError, match="pass --format"):
        load_documents(weird)


def test_csv_errors_name_the_problem(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("title,content\nA,hello\n")
    with pytest.raises(InputError, match=r"no column 'text'.*columns: title, content"):
        load_documents(path)
    path.write_text("id,text\n1,hello,extra\n")
    with pytest.raises(InputError, match="line 2: more fields than the header"):
        load_documents(path)
