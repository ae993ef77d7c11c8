"""The HTML report of a run and the batch page (core/pipeline/report_html.py), on a real run
with the shipped verifier over a source whose documents carry hostile markup: every piece of
untrusted text (answer, evidence, titles, URLs) must come out escaped, and a reader must see
each claim's verdict and its deciding sentence highlighted."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from core.decompose.base import SentenceDecomposer
from core.ingest.index import add_source
from core.ingest.sources import load_documents
from core.pipeline.export import batch_run_path, export_batch, export_run
from core.pipeline.report_html import histogram_svg, run_html
from core.pipeline.runner import Pipeline
from core.retrieve.searcher import Searcher
from core.verify.verifier import Verifier
from models.nli import load_nli
from store import open_db
from tui.cli import app

DOCS = [
    {"id": "curie", "title": "<img src=x onerror=alert(1)>Marie Curie", "url": "javascript:alert(2)",
     "text": "Marie Curie discovered radium in 1898. <script>alert('evidence')</script> "
             "She was born in Warsaw in 1867."},
    {"id": "tower", "title": "Eiffel Tower", "url": "https://example.org/eiffel?a=1&b=<2>",
     "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889."},
]
ANSWER = ("Marie Curie discovered radium in 1898. The Eiffel Tower is located in Berlin. "
          "<script>alert('answer')</script>")


class Tags(HTMLParser):
    """Every start tag and attribute the browser would build from the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, embedder, splitter):
    """(db path, two run ids) over the hostile source."""
    folder = tmp_path_factory.mktemp("report")
    corpus = folder / "hostile.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    path = folder / "report.db"
    db = open_db(path)
    add_source(db, "hostile", load_documents(corpus), fmt="jsonl", path=str(corpus), embedder=embedder,
               splitter=splitter)
    pipe = Pipeline(db, SentenceDecomposer(splitter), Searcher(db, lambda: embedder), Verifier(load_nli()),
                    sources=["hostile"], k=2)
    runs = []
    for text in (ANSWER, "Marie Curie was born in Warsaw in 1867."):
        run_id = pipe.start(text)
        pipe.resume(run_id)
        runs.append(run_id)
    return path, runs


def test_run_report_escapes_untrusted_text_and_shows_verdicts(hostile):
    path, (run_id, _) = hostile
    page = run_html(open_db(path), run_id)
    tags = tags_of(page)
    names = [t for t, _ in tags]
    # Nothing executable or fetched: no script element, no image, no external style sheet
    assert "script" not in names and "img" not in names and "link" not in names
    assert not any(k.startswith("on") for _, attrs in tags for k in attrs)
    assert "&lt;script&gt;alert(&#x27;evidence&#x27;)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(&#x27;answer&#x27;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;Marie Curie" in page
    hrefs = [attrs["href"] for t, attrs in tags if t == "a" and "href" in attrs]
    assert not any(h.lower().startswith("javascript") for h in hrefs)  # a javascript: URL stays text
    assert "https://example.org/eiffel?a=1&b=<2>" in hrefs or not any("example.org" in h for h in hrefs)
    # The reader's view: each claim with its verdict, and the answer's spans link to them
    first = re.search(r'<section class="claim (v-\w+)" id="claim-1">(.*?)</section>', page, re.S)
    assert first is not None and "Marie Curie discovered radium in 1898." in first.group(2)
    assert first.group(1) == "v-sup" and ">supported</span>" in first.group(2)
    # the deciding sentence is highlighted inside the whole passage, the rest of it not
    assert "<mark>Marie Curie discovered radium in 1898.</mark>" in first.group(2)
    assert '<a href="#claim-1" class="v-sup"' in page
    assert 'id="claim-2"' in page and "The Eiffel Tower is located in Berlin." in page
    assert "factual precision" in page and "Run manifest" in page
    assert re.search(r"<td>nli</td><td><code>[^<]+</code></td><td><code>[0-9a-f]{16}…</code>", page)


def test_batch_page_links_each_run_report(hostile, tmp_path):
    path, runs = hostile
    out = tmp_path / "batch.html"
    written = export_batch(open_db(path), runs, out)
    assert written[0] == out and set(written[1:]) == {batch_run_path(out, r) for r in runs}
    page = out.read_text(encoding="utf-8")
    hrefs = [a["href"] for t, a in tags_of(page) if t == "a"]
    assert hrefs == [batch_run_path(out, r).name for r in runs]
    assert all((tmp_path / h).read_text(encoding="utf-8").startswith("<!DOCTYPE html>") for h in hrefs)
    assert "<svg" in page and "&lt;script&gt;" in page and "<script" not in page


def test_histogram_counts_values_per_bin():
    svg = histogram_svg([0.0, 0.05, 0.55, 1.0, 1.0])
    titles = re.findall(r"<title>([\d.]+)–([\d.]+): (\d+)</title>", svg)
    assert len(titles) == 10
    counts = {lo: int(n) for lo, _, n in titles}
    assert counts["0.0"] == 2 and counts["0.5"] == 1 and counts["0.9"] == 2  # 1.0 falls in the last bin
    assert sum(counts.values()) == 5


def test_cli_html_export_and_batch(hostile, tmp_path):
    path, runs = hostile
    runner = CliRunner()
    one = tmp_path / "one.html"
    res = runner.invoke(app, ["--db", str(path), "runs", "export", str(runs[0]), "--format", "html", "-o", str(one)])
    assert res.exit_code == 0, res.output
    assert one.read_text(encoding="utf-8") == run_html(open_db(path), runs[0])
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"id": str(r), "run_id": r}) + "\n" for r in runs), encoding="utf-8")
    res = runner.invoke(app, ["--db", str(path), "runs", "export", "--batch", str(results), "--format", "html",
                              "-o", str(tmp_path / "b.html")])
    assert res.exit_code == 0, res.output
    assert all(batch_run_path(tmp_path / "b.html", r).exists() for r in runs)
    for args, code in (
        (["runs", "export", str(runs[0]), str(runs[1]), "--format", "md", "-o", str(tmp_path / "x.md")], 2),
        (["runs", "export", str(runs[0]), "999", "--format", "html", "-o", str(tmp_path / "x.html")], 3),
        (["runs", "export", "-o", str(tmp_path / "x.html")], 2),
        (["runs", "export", "--batch", str(one), "--format", "html", "-o", str(tmp_path / "x.html")], 2),
    ):
        res = runner.invoke(app, ["--db", str(path), *args])
        assert res.exit_code == code, (args, res.output)
    assert not (tmp_path / "x.html").exists()  # a missing run writes nothing
    with pytest.raises(Exception, match="unknown export format"):
        export_run(open_db(path), runs[0], "pdf", tmp_path / "x.pdf")


def test_report_in_a_real_browser(hostile, tmp_path):
    """Headless Chromium opens the report: every claim on the page, the four verdict colours
    distinct, the answer's span colours in the screenshot's pixels, no horizontal overflow at
    1280 px (benchmarks/report_browser.py). `make test` installs Chromium and sets
    CLAIMSCOPE_REQUIRE_BROWSER=1, so there a missing browser fails instead of skipping."""
    import os

    from benchmarks.report_browser import check, chromium
    from store.inspect import run_claim_views

    if chromium() is None:
        if os.environ.get("CLAIMSCOPE_REQUIRE_BROWSER"):
            pytest.fail("CLAIMSCOPE_REQUIRE_BROWSER is set but no Chromium is installed (apt-get install -y chromium)")
        pytest.skip("no Chromium installed (apt-get install -y chromium; `make test` installs it)")
    path, runs = hostile
    run_id = runs[0]
    db = open_db(path)
    page = export_run(db, run_id, "html", tmp_path / "report.html")
    claims = [c.text for c in run_claim_views(db, run_id)]
    found = check(page, tmp_path / "report.png", claims)
    assert found["problems"] == [], found
    assert found["claims_on_page"] == len(claims) == 3
    assert found["scroll_width"] <= found["client_width"] <= 1280
    assert len(set(map(tuple, found["colours"].values()))) == 4
    assert found["answer_span_colours"]["v-sup"] in {tuple(c) for c in found["colours"].values()}
    # the batch page too: no overflow at 1280 px, its histogram drawn
    from benchmarks.report_browser import probe

    batch = export_batch(db, runs, tmp_path / "batch.html")[0]
    seen = probe(batch)
    assert seen["scrollWidth"] <= seen["clientWidth"] <= 1280, seen["wide"]
