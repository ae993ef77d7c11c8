"""The CLI through Typer's runner: indexing, listing, searching, and bad input."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from tui.cli import app


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.fixture()
def small_corpus(tmp_path, data_dir):
    lines = (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").read_text().splitlines()[:12]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, [json.loads(x) for x in lines]


def dump(db_path) -> list[str]:
    """Everything stored, to compare before and after a failed command."""
    conn = sqlite3.connect(db_path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_help_lists_every_command(runner):
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for cmd in ("source", "search", "eval", "demo"):
        assert cmd in res.output
    assert "Exit codes" in res.output
    res = runner.invoke(app, ["source", "--help"])
    assert all(c in res.output for c in ("add", "list", "remove"))


def test_add_list_search_remove(runner, tmp_path, small_corpus):
    path, docs = small_corpus
    db = tmp_path / "cli.db"
    res = runner.invoke(app, ["--db", str(db), "source", "add", "mini", str(path)])
    assert res.exit_code == 0, res.output
    assert "12 added" in res.output

    res = runner.invoke(app, ["--db", str(db), "source", "list", "--json"])
    listed = json.loads(res.stdout)
    assert listed[0]["name"] == "mini" and listed[0]["n_documents"] == 12 and listed[0]["format"] == "scifact"

    target = docs[3]
    query = target["abstract"][0]
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "--mode", "hybrid", "-k", "3", "--json"])
    assert res.exit_code == 0, res.output
    hits = [json.loads(x) for x in res.stdout.splitlines()]
    assert hits[0]["doc_id"] == str(target["doc_id"])
    assert hits[0]["sentence"] and {"bm25", "dense", "hybrid"} <= set(hits[0]["ranks"])

    res = runner.invoke(app, ["--db", str(db), "search", query, "--mode", "bm25", "-k", "2"])
    assert res.exit_code == 0 and target["title"].strip()[:30] in res.stdout

    # the evidence sentences ranked across passages: the query's own sentence first
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "-k", "3", "--sentences", "2"])
    assert res.exit_code == 0, res.output
    listed = res.stdout.split("Evidence sentences across the passages", 1)[1]
    assert listed.count("›") == 2 and " 1. " + target["title"].strip()[:20] in " ".join(listed.split())
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "-k", "3", "--sentences", "2", "--json"])
    ranks = [json.loads(x)["sentence_ranks"] for x in res.stdout.splitlines()]
    assert ranks[0][0] == 1 and sorted(r for rs in ranks for r in rs)[:3] == [1, 2, 3]
    res = runner.invoke(app, ["--db", str(db), "search", query, "--mode", "bm25", "--sentences", "2"])
    assert res.exit_code == 2 and "use a mode that has them" in res.output

    res = runner.invoke(app, ["--db", str(db), "source", "remove", "mini"])
    assert res.exit_code == 0
    res = runner.invoke(app, ["--db", str(db), "search", "x", "--source", "mini"])
    assert res.exit_code == 3 and "no source named 'mini'" in res.output


def test_sentence_vectors_can_wait_for_the_first_search_that_needs_them(runner, tmp_path, small_corpus):
    path, docs = small_corpus
    db = tmp_path / "later.db"
    res = runner.invoke(app, ["--db", str(db), "source", "add", "mini", str(path), "--no-sentence-vectors"])
    assert res.exit_code == 0 and "0 new sentence vectors" in res.output
    query = docs[3]["abstract"][0]
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "--mode", "hybrid", "--json"])
    assert res.exit_code == 0 and "embedding each sentence once" not in res.output
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "--mode", "hybrid-sentence", "--json"])
    assert res.exit_code == 0 and "embedding each sentence once" in res.stderr
    hits = [json.loads(x) for x in res.stdout.splitlines()]
    assert hits[0]["doc_id"] == str(docs[3]["doc_id"]) and "sentence" in hits[0]["ranks"]
    res = runner.invoke(app, ["--db", str(db), "search", query, "--source", "mini", "--mode", "hybrid-sentence", "--json"])
    assert res.exit_code == 0 and "embedding each sentence once" not in res.stderr  # once


def test_bad_input_gives_clear_error_and_leaves_the_db_as_it_was(runner, tmp_path, small_corpus):
    path, _ = small_corpus
    db = tmp_path / "keep.db"
    assert runner.invoke(app, ["--db", str(db), "source", "add", "mini", str(path)]).exit_code == 0
    before = dump(db)

    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text(path.read_text() + '{"doc_id": 99, "title": "x", "abstract": ["a"]\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cases = [
        (["source", "add", "mini", str(tmp_path / "missing.jsonl")], 2, "no such file"),
        (["source", "add", "mini", str(malformed)], 2, "line 13: malformed JSON"),
        (["source", "add", "mini", str(empty)], 2, "contains no documents"),
        (["source", "add", "mini", str(tmp_path), "--format", "jsonl"], 2, "is a directory"),
        (["source", "add", "bad name!", str(path)], 2, "invalid source name"),
        (["source", "add", "other"], 2, "PATH is required"),
        (["search", "   "], 2, "query is empty"),
        (["search", "x", "--mode", "magic"], 2, "unknown retrieval mode"),
        (["source", "remove", "ghost"], 3, "no source named 'ghost'"),
    ]
    for args, code, message in cases:
        res = runner.invoke(app, ["--db", str(db), *args])
        assert res.exit_code == code, (args, res.output)
        assert message in res.output, (args, res.output)
        assert "Traceback" not in res.output
    assert dump(db) == before


def test_bad_input_on_a_fresh_database_is_refused_before_wiki_vital_is_indexed(runner, tmp_path, monkeypatch):
    """On an empty database a search or verify indexes the built-in source first (minutes on 2
    cores): an empty query or claim, or an unknown mode, must be refused before that."""
    import core.ingest.sources

    def no_indexing(name):
        raise AssertionError(f"indexed {name} before the input was checked")

    monkeypatch.setattr(core.ingest.sources, "load_builtin", no_indexing)
    db = tmp_path / "fresh.db"
    cases = [
        (["search", "   "], "query is empty"),
        (["search", "Tokyo", "--mode", "magic"], "unknown retrieval mode"),
        (["verify", "  "], "claim is empty"),
        (["verify", "Tokyo is in Japan.", "--mode", "magic"], "must be one of"),
        (["check", " "], "text is empty"),
    ]
    for args, message in cases:
        res = runner.invoke(app, ["--db", str(db), *args])
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output and "first use" not in res.output, (args, res.output)


def test_database_problems_exit_4(runner, tmp_path):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 500)
    res = runner.invoke(app, ["--db", str(corrupt), "source", "list"])
    assert res.exit_code == 4 and "not a usable claimscope database" in res.output
    assert corrupt.read_bytes() == b"garbage" * 500

    newer = tmp_path / "newer.db"
    conn = sqlite3.connect(newer)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '999')")
    conn.commit()
    conn.close()
    res = runner.invoke(app, ["--db", str(newer), "source", "list"])
    assert res.exit_code == 4 and "schema version 999" in res.output


def test_env_var_selects_the_database(runner, tmp_path, monkeypatch):
    db = tmp_path / "env.db"
    monkeypatch.setenv("CLAIMSCOPE_DB", str(db))
    res = runner.invoke(app, ["source", "list"])
    assert res.exit_code == 0 and db.exists()


def test_builtin_source_is_indexed_on_first_use(runner, tmp_path, data_dir, monkeypatch):
    """An empty database searches the default wiki-vital source, indexing it once first
    (here limited to 20 real summaries from the fixture, to keep the test fast)."""
    import core.ingest.sources
    from core.ingest.sources import load_documents

    sample = load_documents(data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl")[:20]
    monkeypatch.setattr(core.ingest.sources, "load_builtin", lambda name: sample)
    db = tmp_path / "fresh.db"
    res = runner.invoke(app, ["--db", str(db), "search", "Age of Enlightenment reason", "--mode", "bm25", "-k", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert "first use of the built-in source wiki-vital" in res.output
    assert json.loads(res.stdout.splitlines()[-1])["title"] == "Age of Enlightenment"
    listed = json.loads(runner.invoke(app, ["--db", str(db), "source", "list", "--json"]).stdout)
    assert [(s["name"], s["licence"], s["n_documents"]) for s in listed] == [("wiki-vital", "CC BY-SA 4.0", 20)]
    res = runner.invoke(app, ["--db", str(db), "search", "Enlightenment", "--mode", "bm25", "-k", "1"])
    assert res.exit_code == 0 and "first use" not in res.output  # reused, not re-indexed
    assert "CC BY-SA 4.0" in res.output  # attribution shown with results from the source


def test_runs_list_and_show_read_stored_runs(runner, tmp_path):
    from store import open_db, write_tx
    from store import runs as rq

    db_path = tmp_path / "runs.db"
    db = open_db(db_path)
    with write_tx(db):
        run_id = rq.create_run(db, "Paris is in France. It rains.", {"k": 3})
        rq.add_claim(db, run_id, 0, "Paris is in France.", (0, 19), citations=[2])
        rq.add_claim(db, run_id, 1, "Is it?", (20, 26), checkable=False, note="question")
    db.conn.close()
    listed = json.loads(runner.invoke(app, ["--db", str(db_path), "runs", "list", "--json"]).stdout)
    assert [(r["id"], r["claims"], r["status"]) for r in listed] == [(run_id, 2, "running")]
    res = runner.invoke(app, ["--db", str(db_path), "runs", "show", str(run_id), "--format", "json"])
    shown = json.loads(res.stdout)[0]
    assert [(c["text"], c["citations"], c["note"]) for c in shown["claims"]] == [
        ("Paris is in France.", [2], None), ("Is it?", [], "question")]
    assert runner.invoke(app, ["--db", str(db_path), "runs", "show", "999"]).exit_code == 3


def test_acu_and_characteristics_commands(runner, tmp_path, data_dir):
    """`claimscope acu` with a human stance and `claimscope characteristics` print JSON that
    follows the definitions (seed 001 §4.1, §5); `eval acu` reads the Climate-FEVER fixture."""
    db = ["--db", str(tmp_path / "x.db")]
    res = runner.invoke(app, [*db, "acu", "The Eiffel Tower is in Berlin.", "--evidence",
                              "The Eiffel Tower is a lattice tower in Paris, France.", "--stance", "REFUTES",
                              "--shots", "0", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["stance"] == "refutes" and out["stance_source"] == "human"
    assert abs(sum(out["p_claim"].values()) - 1) < 1e-6 and abs(sum(out["p_evidence"].values()) - 1) < 1e-6
    # refutes: D = (+1 False, −1 None, −1 True), so ACU = ΔP(False) − ΔP(None) − ΔP(True)
    d = out["delta"]
    assert out["acu_sum"] == pytest.approx(d["False"] - d["None"] - d["True"])
    assert out["repulsion"] == (out["acu_sum"] < 0)

    res = runner.invoke(app, [*db, "characteristics", "Obama was born in Hawaii.", "--evidence",
                              "According to a study, Obama was born in Hawaii. That may be true.",
                              "--url", "https://www.politifact.com/x", "--json"])
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)
    assert c["repeats_claim"] and c["contains_true"] and not c["contains_false"] and c["factcheck_source"]
    assert c["claim_overlap"] == 1.0 and "may" in c["hedge_words"] and c["refers_to_external_source"]

    res = runner.invoke(app, [*db, "eval", "acu", "--data", str(data_dir / "fixtures" / "climate_fever_dev_10.jsonl"),
                              "--limit", "3", "--shots", "0", "--json", str(tmp_path / "acu.json")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "acu.json").read_text())
    assert report["n"] == 3 and all(-3 <= p["acu_sum"] <= 3 for p in report["pairs"])


def test_eval_verdicts_refuses_a_held_support_threshold_outside_0_1(runner, data_dir, tmp_path):
    """--fix-support holds the support threshold (fitted on given documents) while refute and
    conflict are fitted; a value no probability can pass is a usage error before any model loads."""
    path = data_dir / "fixtures" / "climate_fever_dev_10.jsonl"
    res = runner.invoke(app, ["--db", str(tmp_path / "x.db"), "eval", "verdicts", "--path", str(path), "--fix-support", "1.5"])
    assert res.exit_code == 2 and "--fix-support" in res.output
    assert not (tmp_path / "x.db").exists()


def test_a_text_piped_to_file_dash_splits_as_the_same_text_given_as_an_argument(runner):
    """`llm-answer | claimscope decompose --file -`: standard input is read as a --file is (UTF-8,
    universal newlines), so a piped answer's claims and spans are the argument's."""
    text = "Marie Curie was a Polish-born physicist.\nShe discovered radium."
    as_arg = runner.invoke(app, ["decompose", text, "--json", "--decomposer", "rules"])
    piped = runner.invoke(app, ["decompose", "--file", "-", "--json", "--decomposer", "rules"],
                          input=text.replace("\n", "\r\n").encode("utf-8"))
    dash = runner.invoke(app, ["decompose", "-", "--json", "--decomposer", "rules"], input=text.encode("utf-8"))
    assert as_arg.exit_code == 0 and piped.exit_code == 0 and dash.exit_code == 0, (as_arg.output, piped.output, dash.output)
    claims = [json.loads(line) for line in piped.stdout.splitlines()]
    expected = [json.loads(line) for line in as_arg.stdout.splitlines()]
    assert len(claims) >= 3
    assert [(c["text"], c["span"]) for c in claims] == [(c["text"], c["span"]) for c in expected]
    # the text "-" is standard input, as most tools read it (it used to be checked as the claim "-")
    assert [json.loads(line)["text"] for line in dash.stdout.splitlines()] == [c["text"] for c in expected]


def test_bad_standard_input_is_refused_before_wiki_vital_is_indexed(runner, tmp_path, monkeypatch):
    import core.ingest.sources

    def no_indexing(name):
        raise AssertionError(f"indexed {name} before the input was checked")

    monkeypatch.setattr(core.ingest.sources, "load_builtin", no_indexing)
    db = tmp_path / "fresh.db"
    cases = [
        (b"", "standard input: is empty"),
        (b"  \n\n", "standard input: is empty"),
        (b"\xff\xfeT\x00o\x00", "standard input: not valid UTF-8"),
        (b"Tokyo\x00 is in Japan.", "standard input: contains a NUL byte"),
    ]
    for command in ("check", "decompose"):
        for data, message in cases:
            for how in (["--file", "-"], ["-"]):
                res = runner.invoke(app, ["--db", str(db), command, *how], input=data)
                assert res.exit_code == 2, (command, how, data, res.output)
                assert message in res.output and "Traceback" not in res.output, (command, how, data, res.output)
    res = runner.invoke(app, ["decompose", "Tokyo is in Japan.", "--file", "-"], input=b"Paris.")
    assert res.exit_code == 2 and "give exactly one of" in res.output


def test_a_batch_piped_to_jsonl_dash_is_read_line_by_line_with_its_ids(runner):
    """`… | claimscope decompose --jsonl -`: a piped batch is a --jsonl file, line numbers
    and ids included, and a bad line is named by its line in standard input."""
    batch = '{"id": "a", "text": "Paris is the capital of France."}\n\n{"text": "Tokyo is in Japan."}\n'
    res = runner.invoke(app, ["decompose", "--jsonl", "-", "--decomposer", "sentence"], input=batch.encode("utf-8"))
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(r["id"], r["text"]) for r in rows] == [("a", "Paris is the capital of France."), ("3", "Tokyo is in Japan.")]
    res = runner.invoke(app, ["decompose", "--jsonl", "-"], input=b'{"text": "ok."}\n{"text": 5}\n')
    assert res.exit_code == 2 and "standard input, line 2: needs a non-empty string field 'text'" in res.output
    res = runner.invoke(app, ["decompose", "--jsonl", "-"], input=b'{"text": "ok."}\nnot json\n')
    assert res.exit_code == 2 and "standard input, line 2: malformed JSON" in res.output


def test_a_byte_order_mark_is_no_part_of_a_file_or_a_batch_line(runner, tmp_path):
    """Windows tools start UTF-8 files with a byte-order mark: a --file's text and a --jsonl's first
    line read as without it (the first line used to be refused as malformed JSON)."""
    text = tmp_path / "a.txt"
    text.write_bytes(b"\xef\xbb\xbfParis is the capital of France.")
    res = runner.invoke(app, ["decompose", "--file", str(text), "--json", "--decomposer", "sentence"])
    assert res.exit_code == 0, res.output
    assert [json.loads(line)["text"] for line in res.stdout.splitlines()] == ["Paris is the capital of France."]
    batch = tmp_path / "a.jsonl"
    batch.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "Paris is the capital of France."}\n')
    res = runner.invoke(app, ["decompose", "--jsonl", str(batch), "--decomposer", "sentence"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.splitlines()[0])["id"] == "a"
    res = runner.invoke(app, ["decompose", "--jsonl", "-", "--decomposer", "sentence"], input=batch.read_bytes())
    assert res.exit_code == 0 and json.loads(res.stdout.splitlines()[0])["id"] == "a", res.output


def test_verify_dash_reads_the_claim_from_standard_input(runner, tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("Paris is the capital and most populous city of France.")
    args = ["--db", str(tmp_path / "x.db"), "verify", "--against", str(doc), "--json"]
    piped = runner.invoke(app, [*args, "-"], input=b"Paris is the capital\nof France.\n")
    given = runner.invoke(app, [*args, "Paris is the capital of France."])
    assert piped.exit_code == 0 and given.exit_code == 0, (piped.output, given.output)
    a, b = json.loads(piped.stdout), json.loads(given.stdout)
    assert a["claim"] == b["claim"] == "Paris is the capital of France."
    assert runner.invoke(app, [*args, "-"], input=b"  \n").exit_code == 2
