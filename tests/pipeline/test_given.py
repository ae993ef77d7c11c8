"""Checking against given documents (core/pipeline/given.py, ``check --against``) and the grounding
eval (core/evaluate/grounding.py): real fixture rows, the real embedded verifier."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tui.cli import app


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.fixture(scope="module")
def verifier():
    from core.verify.verifier import Verifier
    from models.nli import load_nli
    from models.nlp import SubjectTerms

    return Verifier(load_nli("embedded"), subject_terms=SubjectTerms())


@pytest.fixture()
def wice_rows(data_dir):
    from core.evaluate.grounding import load_wice

    return load_wice(data_dir / "fixtures" / "wice_dev_6.jsonl")


@pytest.fixture()
def rag_files(tmp_path, wice_rows):
    """A RAG-style answer with its passages: the supported WiCE fixture claim's web page as a
    .md file, the other supported row's page as a .jsonl line."""
    a, b = wice_rows[4], wice_rows[5]
    md = tmp_path / "page.md"
    md.write_text("# MTV review\n\n" + a.doc + "\n")
    jl = tmp_path / "pages.jsonl"
    jl.write_text(json.dumps({"id": "registry", "title": "Film registry", "text": b.doc}) + "\n")
    return md, jl, a, b


def test_given_documents_are_stored_once_and_hidden_from_retrieval(tmp_path, splitter, rag_files):
    from core.pipeline.given import GIVEN_SOURCE, GivenSearcher, load_given_files, store_given
    from store import open_db
    from store.sources import get_source, list_sources

    md, jl, *_ = rag_files
    copy = tmp_path / "copy.md"
    copy.write_text(md.read_text())
    db = open_db(tmp_path / "g.db")
    first = store_given(db, load_given_files([md, jl, copy]), splitter)
    assert len(first) == 2  # the copy has the same title and text: one document
    again = store_given(db, load_given_files([jl]), splitter)
    assert again[0].document_id == first[1].document_id
    assert get_source(db, GIVEN_SOURCE).n_documents == 2
    assert list_sources(db) == []  # never searched as a knowledge source
    searcher = GivenSearcher(db, first)
    hits = searcher.search("Emilee Lindner of MTV called the video mature and tasteful.")
    assert len(hits) == len(searcher.passages) > 2  # every passage, no top-k
    assert "tasteful" in hits[0].sentence_text  # the best-overlapping sentence's passage first


def test_a_sentence_of_the_document_is_supported_an_unrelated_claim_is_not(tmp_path, splitter, verifier, wice_rows):
    from core.pipeline.given import GivenSearcher, judge_text, store_given
    from store import open_db
    from store.records import DocumentRecord

    row = wice_rows[4]
    db = open_db(tmp_path / "g.db")
    searcher = GivenSearcher(db, store_given(db, [DocumentRecord("x", "", row.doc)], splitter))
    copied = next(s for s in row.doc.splitlines() if "tasteful" in s)  # one sentence of the page
    assert judge_text(copied, searcher, verifier, splitter).score > verifier.t.support
    two = judge_text(f"{copied} The video was filmed on the surface of the Moon in 1969.", searcher, verifier, splitter)
    assert len(two.sentences) == 2
    assert two.score < verifier.t.support  # min over the claim's sentences
    assert not two.supported


def test_a_given_document_has_every_unit_judged_not_the_pruned_few(tmp_path, splitter, verifier, wice_rows):
    """Pruning (judge the 8 sentences sharing most words) is for knowledge sources; against a
    given document the unit that grounds a claim often shares few of its words."""
    from core.pipeline.given import GivenSearcher, given_verifier, judge_text, store_given
    from store import open_db
    from store.records import DocumentRecord

    given = given_verifier(verifier)
    assert (given.t.judge_sentences, given.t.judge_passages, given.t.early_stop) == (0, 0, 1.0)
    assert verifier.t.judge_sentences == 8  # the caller's verifier still prunes
    row = wice_rows[4]
    db = open_db(tmp_path / "g.db")
    searcher = GivenSearcher(db, store_given(db, [DocumentRecord("x", "", row.doc)], splitter))
    judged = judge_text("Emilee Lindner of MTV called the video mature.", searcher, verifier, splitter)
    singles = [j for j in judged.verdicts[0].judgements if j.unit.kind == "sentence"]
    assert len(singles) > verifier.t.judge_sentences  # pruned, it would be 8


def test_check_against_streams_a_stored_run_that_reopens_without_the_files(runner, tmp_path, rag_files):
    md, jl, a, b = rag_files
    db = tmp_path / "runs.db"
    text = f"{a.claim} {b.claim}"
    res = runner.invoke(app, ["--db", str(db), "check", text, "--against", str(md), "--against", str(jl),
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout[res.stdout.index("["):])[0]
    verdicts = [c for c in run["claims"] if c["verdict"]]
    assert verdicts and all(c["evidence"]["source"] == "_given" for c in verdicts)
    md.unlink()
    jl.unlink()
    from store import open_db

    conn = open_db(db)
    cfg = json.loads(conn.execute("SELECT config FROM runs WHERE id = ?", [run["run_id"]]).fetchone()[0])
    assert [d["name"] for d in cfg["against"]] == ["page.md", "registry"]
    # The deciding unit's passage and sentence offsets are stored: the inspector can highlight them.
    row = conn.execute(
        """SELECT j.unit, j.sentences, p.sentences, p.text FROM verdicts v JOIN judgements j ON j.id = v.deciding_judgement_id
           JOIN evidence e ON e.id = j.evidence_id JOIN passages p ON p.id = e.passage_id LIMIT 1"""
    ).fetchone()
    assert json.loads(row[1]) and json.loads(row[2])
    shown = runner.invoke(app, ["--db", str(db), "runs", "show", str(run["run_id"])])
    assert shown.exit_code == 0 and "given" in shown.output


def test_verify_against_judges_one_claim_whole_and_stores_the_documents_with_the_run(runner, tmp_path, rag_files):
    md, _jl, a, _b = rag_files
    db = tmp_path / "v.db"
    copied = next(s for s in a.doc.splitlines() if "tasteful" in s)  # one sentence of the page, as written
    res = runner.invoke(app, ["--db", str(db), "verify", copied, "--against", str(md), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["verdict"] == "supported"
    assert out["deciding"]["source"] == "_given" and "tasteful" in out["deciding"]["text"]
    table = runner.invoke(app, ["--db", str(db), "verify", copied, "--against", str(md)])
    assert table.exit_code == 0 and "verdict: supported" in table.stdout
    assert "[given:" in table.stdout and "_given" not in table.stdout  # the reserved source's name, as check shows it
    moon = "The video was filmed on the surface of the Moon in 1969."
    res = runner.invoke(app, ["--db", str(db), "verify", moon, "--against", str(md), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["verdict"] != "supported"
    from store import open_db

    conn = open_db(db)
    cfg = json.loads(conn.execute("SELECT config FROM runs WHERE id = ?", [out["run_id"]]).fetchone()[0])
    assert cfg["kind"] == "verify" and [d["name"] for d in cfg["against"]] == ["page.md"]
    assert conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 1  # the page stored once for both runs
    md.unlink()
    shown = runner.invoke(app, ["--db", str(db), "runs", "show", str(out["run_id"])])
    assert shown.exit_code == 0 and "given" in shown.output and "tasteful" in shown.output


@pytest.mark.parametrize("extra", [["--source", "wiki-vital"], ["--mode", "bm25"], ["-k", "3"]])
def test_verify_against_refuses_retrieval_options_before_storing_anything(runner, tmp_path, rag_files, extra):
    md, *_ = rag_files
    db = tmp_path / "v.db"
    res = runner.invoke(app, ["--db", str(db), "verify", "A claim.", "--against", str(md), *extra])
    assert res.exit_code == 2
    assert "--against" in res.stderr
    assert not db.exists()  # refused before the database is opened


def test_batch_lines_are_checked_against_their_own_documents_and_reused_on_a_rerun(runner, tmp_path, wice_rows):
    """A RAG log: each answer with the passages it came from (field 'documents'), as strings or
    objects; each run's evidence is its own line's documents only."""
    a, b = wice_rows[4], wice_rows[5]
    batch = tmp_path / "rag.jsonl"
    batch.write_text(json.dumps({"id": "mtv", "text": a.claim, "documents": [a.doc]}) + "\n"
                     + json.dumps({"id": "reg", "text": b.claim,
                                   "documents": [{"title": "Film registry", "text": b.doc, "url": "https://example.org"}]})
                     + "\n")
    db = tmp_path / "b.db"
    res = runner.invoke(app, ["--db", str(db), "check", "--jsonl", str(batch), "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    runs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["id"] for r in runs] == ["mtv", "reg"]
    from store import open_db

    conn = open_db(db)
    against = {r["id"]: json.loads(conn.execute("SELECT config FROM runs WHERE id = ?", [r["run_id"]]).fetchone()[0])["against"]
               for r in runs}
    assert [d["title"] for d in against["mtv"]] == ["document 1"]
    assert [d["title"] for d in against["reg"]] == ["Film registry"]
    for r in runs:
        own = {d["document_id"] for d in against[r["id"]]}
        used = {row[0] for row in conn.execute(
            """SELECT DISTINCT p.document_id FROM evidence e JOIN passages p ON p.id = e.passage_id
               JOIN claims c ON c.id = e.claim_id WHERE c.run_id = ?""", [r["run_id"]])}
        assert used and used <= own  # never the other line's page
    assert any(c["verdict"] == "supported" for r in runs for c in r["claims"])
    again = runner.invoke(app, ["--db", str(db), "check", "--jsonl", str(batch), "--format", "jsonl"])
    assert again.exit_code == 0, again.output
    assert [json.loads(line)["run_id"] for line in again.stdout.splitlines() if line.startswith("{")] == \
        [r["run_id"] for r in runs]  # the same runs, reused
    # the table ends with the batch at a glance: the mean of the answers' factual precision, every claim's verdict
    table = runner.invoke(app, ["--db", str(db), "check", "--jsonl", str(batch)])
    assert table.exit_code == 0, table.output
    precision = [r["scores"]["factual_precision"]["value"] for r in runs]
    verdicts = [c["verdict"] for r in runs for c in r["claims"]]
    last = " ".join(table.stdout.split()).rsplit("batch: ", 1)[-1]  # the console wraps long lines
    head, counts = last.split(" claims: ")
    assert head == f"2 answers, mean factual precision {sum(precision) / 2:.2f} over 2 scored; {len(verdicts)}"
    shown = {label.replace(" ", "_"): int(n) for n, label in (part.split(" ", 1) for part in counts.split(", "))}
    assert shown == {v: verdicts.count(v) for v in set(verdicts)}


def test_a_ragas_log_is_checked_as_written_and_is_the_same_run_as_our_own_fields(runner, tmp_path, wice_rows):
    """An evaluation pipeline's RAGAS log ({"user_input", "response", "retrieved_contexts"}, or
    "answer" / "contexts" before RAGAS 0.2) needs no conversion: its answer and contexts are read
    as 'text' and 'documents', so the same line in our own fields reuses that very run."""
    row = wice_rows[4]
    ragas, ours, old = tmp_path / "ragas.jsonl", tmp_path / "ours.jsonl", tmp_path / "ragas01.jsonl"
    ragas.write_text(json.dumps({"id": "q1", "user_input": "What did MTV say?", "response": row.claim,
                                 "retrieved_contexts": [row.doc], "reference": "ignored"}) + "\n")
    ours.write_text(json.dumps({"id": "q1", "text": row.claim, "documents": [row.doc]}) + "\n")
    old.write_text(json.dumps({"id": "q1", "question": "What did MTV say?", "answer": row.claim, "contexts": [row.doc]})
                   + "\n")
    db = str(tmp_path / "r.db")
    runs = []
    for batch in (ragas, ours, old):
        res = runner.invoke(app, ["--db", db, "check", "--jsonl", str(batch), "--format", "jsonl"])
        assert res.exit_code == 0, res.output
        runs += [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert len({r["run_id"] for r in runs}) == 1 and runs[0]["claims"][0]["verdict"] is not None
    assert runs[0]["claims"][0]["evidence"]["source"] == "_given"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"user_input": "Q?", "retrieved_contexts": ["a page"]}) + "\n")
    res = runner.invoke(app, ["--db", str(tmp_path / "bad.db"), "check", "--jsonl", str(bad)])
    assert res.exit_code == 2
    assert "line 1: needs a non-empty string field 'text' (or 'response', 'answer', a RAGAS log's)" in res.output
    assert not (tmp_path / "bad.db").exists()


@pytest.mark.parametrize(
    ("lines", "extra", "expect"),
    [
        ([{"text": "A claim.", "documents": []}], [], "line 1: field 'documents' must be a non-empty list"),
        ([{"text": "A claim.", "documents": [{"title": "t"}]}], [], "line 1: documents[0] needs a non-empty string"),
        ([{"text": "A claim.", "documents": ["a page"]}, {"text": "B."}], [], "line id '2' has no documents ('documents', 'retrieved_contexts', 'contexts')"),
        ([{"text": "A claim.", "documents": ["a page"]}], ["--source", "wiki-vital"], "drop --source"),
    ],
)
def test_bad_line_documents_exit_2_before_the_database_is_opened(runner, tmp_path, lines, extra, expect):
    batch = tmp_path / "b.jsonl"
    batch.write_text("".join(json.dumps(o) + "\n" for o in lines))
    res = runner.invoke(app, ["--db", str(tmp_path / "x.db"), "check", "--jsonl", str(batch), *extra])
    assert res.exit_code == 2
    assert expect in res.stderr
    assert not (tmp_path / "x.db").exists()


def test_resume_uses_the_stored_documents(runner, tmp_path, rag_files, splitter, verifier):
    from core.decompose import make_decomposer
    from core.pipeline.given import GivenPipeline, load_given_files, store_given
    from models.nlp import SpacySentenceSplitter
    from store import open_db
    from store import runs as rq

    md, _jl, a, _ = rag_files
    db_path = tmp_path / "r.db"
    db = open_db(db_path)
    docs = store_given(db, load_given_files([md]), splitter)
    run_id = GivenPipeline(db, make_decomposer("sentence", SpacySentenceSplitter), verifier, docs).start(a.claim)
    md.unlink()
    res = runner.invoke(app, ["--db", str(db_path), "check", "--resume", str(run_id), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert all(c["status"] == "done" for c in rq.run_results(open_db(db_path), run_id))


def test_a_long_given_set_is_judged_on_the_passages_that_match_the_claim(tmp_path, splitter, rag_files, data_dir):
    """Past 24 given passages (a PDF report, a long page) a claim gets the 12 passages BM25 ranks
    highest; at most 24, every passage, as before (core/pipeline/given.py, LONG_GIVEN_PASSAGES)."""
    from core.pipeline.given import LONG_GIVEN_KEEP, LONG_GIVEN_PASSAGES, GivenSearcher, load_given_files, store_given
    from store import open_db

    md, _jl, a, _ = rag_files
    wiki = [json.loads(line) for line in (data_dir / "fixtures" / "wiki_vital_summaries_300.jsonl").read_text().splitlines()]
    others = tmp_path / "others.jsonl"
    others.write_text("".join(json.dumps({"id": w["id"], "title": w["title"], "text": w["text"]}) + "\n" for w in wiki[:40]))
    db = open_db(tmp_path / "g.db")
    small = GivenSearcher(db, store_given(db, load_given_files([md]), splitter))
    assert len(small.search(a.claim)) == len(small.passages) <= LONG_GIVEN_PASSAGES
    big = GivenSearcher(db, store_given(db, load_given_files([others, md]), splitter))
    assert len(big.passages) > LONG_GIVEN_PASSAGES
    hits = big.search(a.claim)
    assert len(hits) == LONG_GIVEN_KEEP and [h.rank for h in hits] == list(range(1, LONG_GIVEN_KEEP + 1))
    page = {p.id for p in small.passages}
    assert page <= {h.passage.id for h in hits}  # the review's passages, among 40 encyclopedia articles'
    assert not any("Good Morning America" in p.text for p in big.passages if p.id not in page)


def test_the_help_names_the_long_given_set_limits():
    """The CLI help says "past 24, the 12 that match" without importing the pipeline at start-up:
    the numbers must follow the constants."""
    from core.pipeline.given import LONG_GIVEN_KEEP, LONG_GIVEN_PASSAGES
    from tui.cli.check import AGAINST_HELP, VERIFY_AGAINST_HELP

    for help_text in (AGAINST_HELP, VERIFY_AGAINST_HELP):
        assert f"past {LONG_GIVEN_PASSAGES}" in help_text and f"the {LONG_GIVEN_KEEP} that match" in help_text


@pytest.mark.parametrize(
    ("content", "name", "expect"),
    [
        (None, "missing.md", "no such file"),
        ("   \n", "empty.txt", "is empty"),
        ('{"text": "fine"}\n{"text": \n', "bad.jsonl", "line 2"),
        ('{"title": "no text"}\n', "notext.jsonl", "line 1"),
        ("text", "doc.odt", "unsupported file type"),
        ("not a pdf", "doc.pdf", "not a readable PDF"),
        ("<html><script>x()</script><nav><a href='/'>Home</a></nav></html>", "menu.html", "no text outside its markup"),
    ],
)
def test_bad_against_files_exit_2_naming_file_and_line(runner, tmp_path, content, name, expect):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    for command in ("verify", "check"):
        res = runner.invoke(app, ["--db", str(tmp_path / "x.db"), command, "A claim.", "--against", str(path)])
        assert res.exit_code == 2
        assert name in res.stderr and expect in res.stderr
        assert not (tmp_path / "x.db").exists()  # refused before the database is opened


def test_grounding_loaders_write_the_aggrefact_rows(data_dir, tmp_path):
    from core.evaluate.grounding import load_dataset, load_rows, write_rows

    fx = data_dir / "fixtures"
    wice = load_dataset("wice", fx / "wice_dev_6.jsonl")
    assert [r.label for r in wice] == [0, 0, 0, 0, 1, 1]  # only "supported" is 1
    eqa = load_dataset("expertqa", fx / "expertqa_dev_5.jsonl")
    assert eqa and all("[" not in r.claim[-4:] for r in eqa) and {r.label for r in eqa} <= {0, 1}
    fc = load_dataset("factcheck-gpt", fx / "factcheck_gpt_dev_3.jsonl")
    assert fc and all(r.domain == "factcheck-gpt" for r in fc)
    out = tmp_path / "rows.jsonl"
    write_rows(wice + eqa + fc, out)
    back = load_rows(out)
    assert back == wice + eqa + fc


def test_grounding_metrics_by_hand():
    from core.evaluate.grounding import GroundingRow, domain_metrics, roc_auc

    assert roc_auc([1, 0, 1, 0], [0.9, 0.1, 0.4, 0.4]) == pytest.approx(0.875)  # one tie counts 1/2
    assert roc_auc([1, 1], [0.2, 0.3]) is None
    rows = [GroundingRow(str(i), "d", "c", y, dom) for i, (y, dom) in enumerate([(1, "a"), (0, "a"), (1, "b"), (0, "b")])]
    m = domain_metrics(rows, [0.9, 0.2, 0.3, 0.1], [1, 0, 0, 0])
    assert m["domains"]["a"]["bacc"] == 1.0 and m["domains"]["b"]["bacc"] == 0.5
    assert m["bacc"] == 0.75


def test_eval_grounding_reports_per_domain_with_baselines(runner, tmp_path, data_dir):
    from core.evaluate.grounding import load_dataset, write_rows

    fx = data_dir / "fixtures"
    rows = load_dataset("wice", fx / "wice_dev_6.jsonl")[3:6] + load_dataset("factcheck-gpt", fx / "factcheck_gpt_dev_3.jsonl")[:3]
    data = tmp_path / "rows.jsonl"
    write_rows(rows, data)
    out = tmp_path / "report.json"
    res = runner.invoke(app, ["--db", str(tmp_path / "e.db"), "eval", "grounding", "--data", str(data), "--json", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    emb = report["systems"]["embedded"]
    assert set(emb["domains"]) == {"wice", "factcheck-gpt"}
    assert emb["bacc"] == pytest.approx(sum(d["bacc"] for d in emb["domains"].values()) / 2)
    assert emb["threshold"] == 0.6 and emb["s_per_pair"] > 0
    assert {"baseline:lexical", "baseline:cosine"} <= set(report["systems"])
    # each row carries the values the baselines ranked by, so that runs can be paired and combined
    from core.evaluate.grounding import roc_auc

    labels = [r["label"] for r in report["rows"]]
    for name, low in (("lexical", 0.0), ("cosine", -1.0)):
        assert all(low <= r[name] <= 1.0 for r in report["rows"])
        auc = roc_auc(labels, [r[name] for r in report["rows"]])
        assert auc == pytest.approx(report["systems"][f"baseline:{name}"]["auc"], abs=1e-5)


def test_eval_grounding_bad_row_names_file_and_line(runner, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": 1, "doc": "d", "claim": "c", "label": 1}\n{"id": 2, "doc": "d", "claim": "c", "label": "yes"}\n')
    res = runner.invoke(app, ["--db", str(tmp_path / "e.db"), "eval", "grounding", "--data", str(data)])
    assert res.exit_code == 2 and "rows.jsonl, line 2" in res.stderr


PROFILE = """# Lanny Flaherty

Lanny Flaherty was an American actor. Lanny Flaherty appeared in the film Natural Born Killers. Lanny Flaherty was born in Pensacola, Florida.

## Career

Lanny Flaherty was an American actor.[1] Flaherty had roles in films such as Lonesome Dove and Natural Born Killers.[1]

## Early life

Flaherty was born in Pensacola, Florida, in 1949.[2]

## References

1. flaherty.txt
2. An interview that is not available offline.
"""


def test_markdown_structure_lead_sections_references():
    from core.pipeline.structured_doc import parse_markdown

    md = parse_markdown(PROFILE)
    assert md.title == "Lanny Flaherty" and md.lead.startswith("Lanny Flaherty was an American actor.")
    assert [h for h, _ in md.sections] == ["Career", "Early life"]
    assert md.references == {1: "flaherty.txt", 2: "An interview that is not available offline."}


def test_structured_command_scores_lead_body_sources_and_stores_them(runner, tmp_path, data_dir):
    contexts = json.loads((data_dir / "fixtures" / "factscore_flaherty_wikipedia_contexts.json").read_text())["contexts"]
    (tmp_path / "flaherty.txt").write_text(contexts[0]["text"])  # the real Wikipedia passage
    doc = tmp_path / "profile.md"
    doc.write_text(PROFILE)
    db = tmp_path / "s.db"
    res = runner.invoke(app, ["--db", str(db), "structured", str(doc), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    body = {c["text"]: c for c in report["body"]}
    # Two body sentences, split at ".[1] " with their markers; [2] has no file: no score (NULL, not 0).
    assert body["Flaherty was born in Pensacola, Florida, in 1949."]["score"] is None
    assert body["Lanny Flaherty was an American actor."]["score"] > 0  # the source says so
    lead = report["lead"]
    assert len(lead) == 3
    assert lead[0]["evidence"] and lead[0]["propagated"]["mean-mean"] > 0  # grounds out through [1]
    assert all(v is None for v in lead[2]["propagated"].values())  # B cites only the unavailable [2]
    from store import open_db
    from store import runs as rq

    stored = rq.run_scores(open_db(db), report["run_id"])
    assert "structured" in stored
    missing = runner.invoke(app, ["--db", str(db), "structured", str(doc), "--source", "1=nope.txt"])
    assert missing.exit_code == 2 and "nope.txt" in missing.stderr


def test_check_no_cache_recomputes_what_a_plain_rerun_reuses(runner, tmp_path, rag_files):
    md, _, a, _ = rag_files
    db = tmp_path / "runs.db"
    args = ["--db", str(db), "check", a.claim, "--against", str(md), "--format", "json"]

    def cached_events(extra):
        res = runner.invoke(app, args + extra)
        assert res.exit_code == 0, res.output
        run_id = json.loads(res.stdout[res.stdout.index("["):])[0]["run_id"]
        from store import open_db

        rows = open_db(db).execute("SELECT payload FROM events WHERE run_id = ? AND kind = 'verdict_ready'", [run_id])
        flags = [json.loads(r[0]).get("cached", False) for r in rows]
        assert flags
        return flags

    assert not any(cached_events([]))
    assert all(cached_events([]))  # the same text again: every claim's result comes from the stage cache
    assert not any(cached_events(["--no-cache"]))  # recomputed


class _SplitOnSemicolon:
    """A decomposer that splits on "; " (a stand-in for rules/atomic, whose output is model-made)."""

    name = "semicolon"

    def decompose(self, text: str):
        from core.decompose.base import Claim

        return [Claim(i, part, (0, len(text))) for i, part in enumerate(text.split("; "))]


def test_claim_split_scores_the_min_over_the_parts(splitter, verifier, wice_rows):
    """WiCE's Claim-Split in ``eval grounding``: a claim is supported only if every part is."""
    from core.evaluate.grounding import GroundingRow, evaluate_grounding

    row = wice_rows[4]
    copied = next(s for s in row.doc.splitlines() if "tasteful" in s).strip().rstrip(".")
    rows = [GroundingRow("true", row.doc, f"{copied}; {copied}", 1, "wice"),
            GroundingRow("half", row.doc, f"{copied}; The video was filmed on the surface of the Moon in 1969", 0, "wice")]
    report = evaluate_grounding(rows=rows, dataset="t", path="t.jsonl", verifier=verifier, splitter=splitter,
                                baselines=False, claim_splitter=_SplitOnSemicolon())
    emb = report["systems"]["embedded"]
    assert report["protocol"]["claim_split"] == "semicolon" and emb["claim_parts_per_pair"] == 2
    assert emb["bacc"] == 1.0  # the half-true claim falls on its false part, the true one stands


def test_fail_under_exits_6_naming_the_answers_below_it_after_storing_every_run(runner, tmp_path):
    """`check --jsonl - --against DOC --fail-under 0.5`: a pipeline's gate. The answer the page
    supports passes, the one it contradicts is named, a question is named as unscored without
    failing; every run is stored and printed, and the exit code (6) is not a failure of the
    tool (1)."""
    page = tmp_path / "eiffel.txt"
    page.write_text("The Eiffel Tower is a wrought-iron lattice tower in Paris, France. "
                    "It was completed in 1889.", encoding="utf-8")
    db = tmp_path / "gate.db"
    batch = ('{"id": "good", "text": "The Eiffel Tower is in Paris."}\n'
             '{"id": "bad", "text": "The Eiffel Tower is in Berlin."}\n'
             '{"id": "ask", "text": "What is the Eiffel Tower?"}\n')
    args = ["--db", str(db), "check", "--jsonl", "-", "--against", str(page), "--format", "jsonl"]
    res = runner.invoke(app, [*args, "--fail-under", "0.5"], input=batch.encode("utf-8"))
    assert res.exit_code == 6, res.output
    rows = {r["id"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert rows["good"]["scores"]["factual_precision"]["value"] == 1.0
    assert rows["bad"]["scores"]["factual_precision"]["value"] == 0.0
    assert rows["ask"]["scores"]["factual_precision"]["value"] is None  # a question: nothing to score
    assert f"1 of 3 answers below factual precision 0.5: run {rows['bad']['run_id']} (id bad) 0.00" in res.stderr
    assert f"1 of 3 answers have no checkable claim (no factual precision): run {rows['ask']['run_id']} (id ask)" in res.stderr
    # the same batch without the gate exits 0 and reuses the three stored runs
    again = runner.invoke(app, args, input=batch.encode("utf-8"))
    assert again.exit_code == 0, again.output
    assert sorted(r["run_id"] for r in map(json.loads, again.stdout.splitlines())) == sorted(r["run_id"] for r in rows.values())
    res = runner.invoke(app, [*args, "--fail-under", "1.5"], input=batch.encode("utf-8"))
    assert res.exit_code == 2 and "'--fail-under'" in res.output


def test_dumped_judgements_rescore_to_the_runs_own_verdicts(runner, tmp_path, data_dir):
    """`eval grounding --dump-judgements`: one line per claim sentence, of the given kind, and the
    shipped verdict file rescoring the lines (benchmarks/given_verdicts_probe.py) gives back each
    domain's verdict = supported BAcc of the run itself, so other verdict files can be scored on
    the same judgements without a model call."""
    from benchmarks.fit_verdicts import kind_of
    from benchmarks.given_verdicts_probe import fit_rows, load_lines, score
    from core.evaluate.grounding import load_dataset, write_rows

    fx = data_dir / "fixtures"
    rows = load_dataset("wice", fx / "wice_dev_6.jsonl")[3:6] + load_dataset("factcheck-gpt", fx / "factcheck_gpt_dev_3.jsonl")[:3]
    data, out, dump = tmp_path / "rows.jsonl", tmp_path / "report.json", tmp_path / "dump.jsonl"
    write_rows(rows, data)
    res = runner.invoke(app, ["--db", str(tmp_path / "e.db"), "eval", "grounding", "--data", str(data), "--no-baselines",
                              "--json", str(out), "--dump-judgements", str(dump)])
    assert res.exit_code == 0, res.output
    lines = load_lines(dump)
    assert [ln["id"] for ln in lines if ln["sentence"] == 0 and ln["part"] == 0] == [r.id for r in rows]
    assert {kind_of(ln) for ln in lines} == {"given"} and all(ln["judgements"] for ln in lines)
    shipped = "core/verify/data/verdict_model.json"
    by_domain = {d: [ln for ln in lines if ln["domain"] == d] for d in ("wice", "factcheck-gpt")}
    rescored = score(by_domain, [shipped, shipped], draws=20)
    domains = json.loads(out.read_text())["systems"]["embedded"]["verdict_supported"]["domains"]
    for d in by_domain:
        assert rescored["sets"][d]["bacc"] == [pytest.approx(domains[d]["bacc"])] * 2
        assert rescored["sets"][d]["paired"][0]["delta"] == 0.0
    fit = fit_rows(lines)
    assert {r["dataset"] for r in fit} <= {"wice-given-pool", "factcheck-gpt-given-pool"}
    assert all(r["sentences"] == 1 for r in fit) and len(fit) == sum(ln["sentences"] == 1 for ln in lines)


def test_dump_judgements_to_a_folder_is_refused_before_any_model_call(runner, tmp_path, data_dir):
    res = runner.invoke(app, ["--db", str(tmp_path / "e.db"), "eval", "grounding", "--dataset", "factcheck-gpt", "--path",
                              str(data_dir / "fixtures" / "factcheck_gpt_dev_3.jsonl"), "--dump-judgements", str(tmp_path)])
    assert res.exit_code == 2 and "--dump-judgements" in res.stderr and "Is a directory" in res.stderr
