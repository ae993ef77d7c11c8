"""Bad input at every entry point (the matrix in benchmarks/bad_input.py), and property-based
tests of the parsers that read user files: JSONL and CSV sources, citation markers, the chunker.

Each matrix case must exit non-zero (not 1, the code of an unexpected failure) with exactly one
line on stderr that names the input (and its line), no traceback, and leave the stored data as
it was."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# benchmarks/ is a folder of scripts, not a package: the matrix is imported from there by path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bad_input

from core.decompose.citations import find_markers, parse_references, strip_markers
from core.errors import InputError
from core.ingest.sources import CsvColumns, load_documents

CASES = bad_input.cases()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, embedder):
    """The bad inputs and an indexed database with a stored run, built once."""
    from typer.testing import CliRunner

    work = tmp_path_factory.mktemp("bad")
    paths = bad_input.make_inputs(work)
    base = bad_input.build_base_db(work)
    bad_input.add_truncated_db(paths, base, work)
    return paths, base, paths["big"].read_text(encoding="utf-8"), CliRunner()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_reported_on_one_line_and_changes_nothing(matrix, case):
    paths, base, big, runner = matrix
    outcome = bad_input.run_case(case, paths, base, runner, big)
    assert outcome.handled, (outcome.problems, outcome.message)


def test_the_matrix_covers_every_entry_point_and_input_kind():
    entries = {c.entry.split(" (")[0].split(" --")[0] for c in CASES}
    assert {"source add", "search", "decompose", "verify", "check TEXT", "check", "runs show", "eval verifier",
            "eval retrieval", "eval verdicts", "eval decompose", "--config", "--db"} <= entries
    kinds = " / ".join(c.kind for c in CASES)
    for kind in ("empty input", "whitespace only", "5 MB text", "binary data", "invalid UTF-8", "malformed JSONL line",
                 "missing field", "mistyped field", "odd quoting", "path does not exist", "directory for a file",
                 "corrupt SQLite file", "newer schema", "model path does not exist", "truncated model.safetensors",
                 "pickle-only model folder", "truncated SQLite file"):
        assert kind in kinds, kind


def test_a_batch_line_over_the_size_limit_names_its_line(tmp_path):
    from typer.testing import CliRunner

    from core.settings import MAX_TEXT_CHARS
    from tui.cli import app

    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"id": "a", "text": "Short."}) + "\n" + json.dumps({"id": "b", "text": "x " * MAX_TEXT_CHARS}) + "\n")
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "check", "--jsonl", str(batch)])
    assert res.exit_code == 2
    assert f"{batch}, line 2: field 'text' is {2 * MAX_TEXT_CHARS:,} characters" in res.stderr
    assert not (tmp_path / "x.db").exists()  # refused before the database was even opened


# ------------------------------------------------------------------ property-based: the parsers

texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.one_of(st.integers(-10**6, 10**6), texts.filter(str.strip)), texts, texts), max_size=8),
       st.lists(st.sampled_from(["", " ", "\t"]), max_size=8))
def test_jsonl_source_reads_back_what_was_written(tmp_path, records, blanks):
    """Any documents written as JSONL (blank lines anywhere) load back in order, text and title
    stripped, empty texts skipped; duplicate ids are reported with both line numbers."""
    path = tmp_path / "docs.jsonl"
    lines = []
    for i, (doc_id, title, text) in enumerate(records):
        if i < len(blanks):
            lines.append(blanks[i])
        lines.append(json.dumps({"id": doc_id, "title": title, "text": text}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = [(str(i), t.strip(), x.strip()) for i, t, x in records if x.strip()]
    ids = [e[0] for e in expected]
    try:
        docs = load_documents(path, "jsonl")
    except InputError as exc:
        msg = str(exc)
        assert ("duplicate id" in msg and len(set(ids)) < len(ids)) or ("contains no documents" in msg and not expected), msg
        return
    assert [(d.ext_id, d.title, d.text) for d in docs] == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300), st.sampled_from(["jsonl", "scifact", "csv", "folder"]))
def test_any_bytes_give_documents_or_an_input_error(tmp_path, data, fmt):
    path = tmp_path / ("f.txt" if fmt == "folder" else f"f.{fmt if fmt != 'scifact' else 'jsonl'}")
    path.write_bytes(data)
    try:
        docs = load_documents(path, fmt)
    except InputError as exc:
        assert str(path) in str(exc)
    else:
        assert docs and all(d.text.strip() for d in docs)


cells = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(['"', ",", "\n", "\r", "'"]),
                max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(cells, cells), max_size=8))
def test_csv_with_any_quoting_reads_back_exactly(tmp_path, rows):
    """Quotes, commas and line breaks inside fields, as csv writers quote them, survive."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "title", "text"])
    for i, (title, text) in enumerate(rows):
        w.writerow([f"d{i}", title, text])
    path = tmp_path / "docs.csv"
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")
    expected = [(f"d{i}", t.strip(), x.strip()) for i, (t, x) in enumerate(rows) if x.strip()]
    try:
        docs = load_documents(path, "csv", CsvColumns())
    except InputError as exc:
        assert not expected and "contains no documents" in str(exc)
        return
    assert [(d.ext_id, d.title, d.text) for d in docs] == expected


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from("ab [](),-–0123456789\n"), max_size=80))
def test_citation_parser_never_fails_and_keeps_an_exact_offset_map(text):
    """Any text, brackets and digits in any order: markers are found without error and
    stripping keeps an offset map that points every kept character at itself."""
    markers = find_markers(text)
    for m in markers:
        assert all(i >= 1 for i in m.ids)
    clean, stripped, offsets = strip_markers(text)
    assert len(offsets) == len(clean) + 1
    assert all(text[offsets[k]] == ch for k, ch in enumerate(clean))
    assert [m.ids for m in stripped] == [m.ids for m in markers]
    parse_references(text.splitlines())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40), min_size=1, max_size=20),
       st.integers(2, 40), st.integers(0, 20))
def test_chunker_on_any_text_cuts_exact_offsets(pieces, size, overlap):
    """Arbitrary Unicode (any whitespace, no words at all) and any window: passages are exact
    slices of the text, never longer than the window, in order."""
    from core.ingest.chunk import chunk

    text, spans = "", []
    for p in pieces:
        start = len(text)
        text += p + " "
        if p.strip():
            spans.append((start, start + len(p)))
    passages = chunk(text, spans or [(0, len(text))], size, min(overlap, size - 1))
    for p in passages:
        assert p.text == text[p.char_start : p.char_end]
        assert len(p.text.split()) <= size
    assert [p.char_start for p in passages] == sorted(p.char_start for p in passages)
