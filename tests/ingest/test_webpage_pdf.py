"""Saved web pages, PDFs and Word files as documents (core/ingest/webpage.py, core/ingest/pdf.py,
core/ingest/docx.py): the prose a reader sees, from real text (a WiCE web page, SciFact abstracts)
set in real HTML, PDF and .docx files; read alike as evidence and as an answer; bad files refused
with a clear message."""

from __future__ import annotations

import html
import json

import pytest
from typer.testing import CliRunner

from core.errors import InputError
from core.ingest.pdf import reflow_pages
from core.ingest.sources import load_documents, read_document_file
from core.ingest.webpage import decode_html, html_to_page
from core.pipeline.given import load_given_files
from tests.ingest.docx_writer import make_docx, paragraph, table
from tests.ingest.pdf_writer import make_pdf, print_lines
from tui.cli import app

MENU = ["Full Episodes", "Shows A-Z", "TV Schedule", "Shows News", "2019 VMAs", "Catfish: The TV Show"]


@pytest.fixture(scope="module")
def mtv(data_dir):
    """WiCE's supported fixture row: the MTV review's title, byline and paragraphs (its evidence
    lines 4–15) and the site's menu (lines 17–32), as the page showed them."""
    row = json.loads((data_dir / "fixtures" / "wice_dev_6.jsonl").read_text().splitlines()[4])
    ev = row["evidence"]
    assert ev[4].startswith("# ") and ev[17] == MENU[0]
    return {"claim": row["claim"], "title": ev[4][2:], "byline": ev[6], "paragraphs": [ev[5], *ev[7:16]]}


def page_html(mtv: dict, charset: str = "utf-8") -> str:
    """The review as a news site serves it: menus, a cookie banner, scripts, a share bar, a hidden
    teaser, a sidebar of links and a footer around one <article>."""
    e = html.escape
    menu = "".join(f'<li><a href="/{i}">{e(m)}</a></li>' for i, m in enumerate(MENU))
    paras = "\n".join(f"<p>{e(p)}</p>" if i else f'<p class="dek">{e(p)}</p>' for i, p in enumerate(mtv["paragraphs"]))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="{charset}">
<title>{e(mtv["title"])} - MTV</title>
<link rel="canonical" href="https://www.mtv.com/news/style-video">
<script>var nav = "<p>Breaking news in a script</p>";</script><style>p {{ margin: 0 }}</style></head>
<body>
<header class="site-header"><a href="/">MTV</a><nav><ul>{menu}</ul></nav></header>
<div id="cookie-consent">We use cookies to improve your experience. <button>Accept all</button></div>
<article>
<header><h1>{e(mtv["title"])}</h1><p class="byline">{e(mtv["byline"])}</p></header>
<div class="share-social"><a href="#">Share on Facebook</a> <a href="#">Tweet</a></div>
{paras}
<div hidden>Subscribe to our newsletter for more.</div>
<div class="article-body">Related: <a href="/x">Catfish: The TV Show</a></div>
</article>
<aside><h3>Trending</h3><ul><li><a href="/t">Teen Mom OG</a></li></ul></aside>
<footer><p>© 2015 Viacom International Inc. All Rights Reserved.</p></footer>
</body></html>"""


def test_a_saved_page_reads_as_its_article(mtv):
    page = html_to_page(page_html(mtv))
    lines = page.text.splitlines()
    assert page.title == mtv["title"]  # the article's <h1>, not "… - MTV"
    assert page.url == "https://www.mtv.com/news/style-video"
    assert lines[:2] == [mtv["title"], mtv["byline"]]
    assert lines[2:2 + len(mtv["paragraphs"])] == mtv["paragraphs"]  # every paragraph, whole, in order
    for chrome in [*MENU, "Breaking news", "cookies", "Share on", "Subscribe", "Trending", "Viacom"]:
        assert chrome not in page.text


def test_a_saved_page_is_one_given_document_and_one_source_document(tmp_path, mtv):
    """``--against`` and ``source add`` read a page alike (core/ingest/sources.read_document_file):
    title, prose and the page's own URL."""
    (tmp_path / "review.html").write_text(page_html(mtv))
    (given,) = load_given_files([tmp_path / "review.html"])
    (indexed,) = load_documents(tmp_path)  # a folder source
    expect = "\n".join([mtv["title"], mtv["byline"], *mtv["paragraphs"]])
    for doc in (given, indexed):
        assert (doc.title, doc.text, doc.url) == (mtv["title"], expect, "https://www.mtv.com/news/style-video")


def test_check_against_a_saved_page(tmp_path, mtv):
    (tmp_path / "review.html").write_text(page_html(mtv))
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "c.db"), "verify", mtv["claim"],
                                   "--against", str(tmp_path / "review.html"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {(p["title"], p["source"]) for p in out["pairs"]} == {(mtv["title"], "_given")}
    judged = {p["text"] for p in out["pairs"] if p["unit"] == "sentence"}
    assert mtv["paragraphs"][3] in judged  # "The new "Style" video, which debuted …, is mature, tasteful …"
    assert not judged & {*MENU, "Accept all", "Teen Mom OG"}  # no menu line was judged


def test_page_encodings_as_a_browser_reads_them():
    body = "<p>Caf\u00e9 M\u00fcller opened in 1925.</p>"
    expect = "Caf\u00e9 M\u00fcller opened in 1925."
    declared = f'<html><head><meta charset="windows-1252"></head><body>{body}</body></html>'.encode("cp1252")
    undeclared = f"<html><body>{body}</body></html>".encode("cp1252")  # not UTF-8: read as windows-1252
    bom = b"\xef\xbb\xbf" + f"<html><body>{body}</body></html>".encode()
    http_equiv = (f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
                  f"</head><body>{body}</body></html>").encode("latin-1")
    for data in (declared, undeclared, bom, http_equiv):
        assert html_to_page(decode_html(data, "p.html")).text == expect
    stray = b'<meta charset="utf-8"><p>Caf\xe9 opened in 1925.</p>'  # declared UTF-8, one windows-1252 byte
    assert html_to_page(decode_html(stray, "p.html")).text == "Caf\ufffd opened in 1925."  # as a browser shows it
    with pytest.raises(InputError, match="NUL byte"):
        decode_html("<p>x</p>".encode("utf-16-le"), "p.html")


def test_page_structure_becomes_lines():
    page = html_to_page(
        "<body><main><h2>Early life</h2><p>Born in <b>London</b>,<br>raised in Kent.</p>"
        "<table><tr><th>Born</th><td>10 December 1815<br>London</td></tr><tr><th>Died</th><td>1852</td></tr></table>"
        "<ul><li>First item<li>Second item</ul><pre>line one\nline two</pre>"
        '<p>Text with a citation.<sup class="reference"><a href="#c1">[1]</a></sup> More &amp; more.</p>'
        '<p style="display: none">hidden</p><span aria-hidden="true">icon</span>'
        "<div><a href='/a'>A</a> <a href='/b'>B</a> <a href='/c'>C</a></div></main></body>")
    assert page.text.splitlines() == [
        "Early life", "Born in London,", "raised in Kent.", "Born | 10 December 1815, London", "Died | 1852",
        "First item", "Second item", "line one", "line two", "Text with a citation. More & more.",
    ]
    assert page.title == ""  # no og:title, <h1> or <title>: the file's name stands in (read_document_file)


RUNNING_HEAD = "Journal of Test Results 12 (2020) 1-9"


@pytest.fixture(scope="module")
def abstracts(data_dir):
    """Three SciFact abstracts (title, sentences) whose text Helvetica's latin-1 can draw."""
    out = []
    for line in (data_dir / "fixtures" / "scifact_mini_corpus.jsonl").read_text().splitlines():
        doc = json.loads(line)
        sentences = [s.strip() for s in doc["abstract"] if s.strip()]
        text = " ".join(sentences)
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            continue
        if len(sentences) >= 4:
            out.append((doc["title"].strip(), sentences))
        if len(out) == 3:
            return out
    raise AssertionError("three latin-1 abstracts expected in the SciFact fixture")


def paper_pdf(abstracts) -> bytes:
    """The abstracts printed as a paper: one per page, a running head and a page number on each,
    lines wrapped at 72 characters with end-of-line hyphens."""
    pages = [[RUNNING_HEAD, title, *print_lines(" ".join(sentences)), str(i)]
             for i, (title, sentences) in enumerate(abstracts, start=1)]
    return make_pdf(pages, title="Three abstracts")


def test_a_pdf_reads_as_whole_sentences(tmp_path, abstracts):
    (tmp_path / "paper.pdf").write_bytes(paper_pdf(abstracts))
    doc = read_document_file(tmp_path / "paper.pdf")
    assert doc.title == "Three abstracts"
    lines = doc.text.replace("\u2019", "'").splitlines()  # Helvetica's standard encoding draws ' as ’
    titles = [title for title, _ in abstracts]
    starts = [lines.index(title) for title in titles] + [len(lines)]  # each title a line of its own
    for (_, sentences), start, end in zip(abstracts, starts, starts[1:], strict=False):
        # the printed lines between two titles join back into the abstract, whole, hyphens undone
        assert " ".join(" ".join(lines[start + 1:end]).split()) == " ".join(" ".join(sentences).split())
    assert RUNNING_HEAD not in doc.text and not any(ln.strip().isdigit() for ln in lines)
    # a line break only where a sentence ends (given documents split sentences at line breaks)
    assert all(ln.rstrip().endswith((".", "?", "!", ")")) or ln in titles for ln in lines)


def test_reflow_rules_on_printed_lines():
    pages = [["Header Line", "1 Introduction",
              "We measured the running time of the new sorting algo-",
              "rithm on a large corpus of Franco-",
              "Prussian war records, and on pre- and post-treatment ﬁles",
              "kept by the archive since the spring of the year 1871.",
              "Short heading",
              "The next paragraph starts here and it goes on for a while",
              "until it ends here.", "1"],
             ["Header Line", "The second page holds a sentence that runs on across the",
              "line break and the page break.", "2"],
             ["Header Line", "Page three ends a paragraph on this line without a stop",
              "3.1 Methods", "1.2. Version",
              "We used a model that was trained on all of the records above.", "3"]]
    assert reflow_pages(["\n".join(p) for p in pages]).splitlines() == [
        "1 Introduction",
        "We measured the running time of the new sorting algorithm on a large corpus of Franco-Prussian war records, "
        "and on pre- and post-treatment files kept by the archive since the spring of the year 1871.",
        "Short heading",
        "The next paragraph starts here and it goes on for a while until it ends here.",
        "The second page holds a sentence that runs on across the line break and the page break.",
        "Page three ends a paragraph on this line without a stop",  # a numbered heading starts its own line …
        "3.1 Methods",
        "1.2. Version",  # … and so does a heading after it
        "We used a model that was trained on all of the records above.",
    ]


def test_pdfs_and_pages_in_a_source_folder(tmp_path, abstracts, mtv):
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / "paper.pdf").write_bytes(paper_pdf(abstracts))
    (folder / "review.htm").write_text(page_html(mtv))
    (folder / "scan.pdf").write_bytes(make_pdf([[], []]))  # no text layer: nothing to index, skipped
    docs = load_documents(folder)
    assert [(d.ext_id, d.title) for d in docs] == [("paper.pdf", "Three abstracts"), ("review.htm", mtv["title"])]


@pytest.mark.parametrize(("name", "data", "expect"), [
    ("scan.pdf", make_pdf([[], []]), "holds no text layer"),
    ("broken.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "not a readable PDF"),
    ("binary.html", "<p>x</p>".encode("utf-16-le"), "NUL byte"),
])
def test_unreadable_documents_exit_2_naming_the_file(tmp_path, name, data, expect):
    (tmp_path / name).write_bytes(data)
    for command in ("check", "verify"):
        res = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), command, "A claim.", "--against", str(tmp_path / name)])
        assert res.exit_code == 2, res.output
        assert name in res.stderr and expect in res.stderr
    assert not (tmp_path / "x.db").exists()  # refused before the database is opened


def test_an_answer_saved_as_a_page_or_a_pdf_is_checked_as_its_prose(tmp_path, mtv, abstracts):
    """``check --file`` / ``decompose --file`` read a page or a PDF as a Markdown answer of its
    lines (core/ingest/webpage.blocks_markdown): headings dropped, a sentence per paragraph, no
    menu, no running head, no page number."""
    (tmp_path / "review.html").write_text(page_html(mtv))
    (tmp_path / "paper.pdf").write_bytes(paper_pdf(abstracts[:1]))
    runner = CliRunner()

    def claims(name: str) -> list[str]:
        res = runner.invoke(app, ["decompose", "--decomposer", "sentence", "--file", str(tmp_path / name), "--json"])
        assert res.exit_code == 0, res.output
        return [json.loads(line)["text"] for line in res.stdout.splitlines()]

    page = claims("review.html")
    assert mtv["title"] not in page and not set(page) & set(MENU)
    assert page[:2] == [mtv["byline"] + ".", mtv["paragraphs"][0]]  # the byline a paragraph of its own (a period added)
    assert mtv["paragraphs"][3] in page  # "The new "Style" video, which debuted …"
    title, sentences = abstracts[0]
    paper = [c.replace("\u2019", "'") for c in claims("paper.pdf")]
    assert title not in paper and RUNNING_HEAD not in " ".join(paper)
    assert paper[0] == sentences[0]  # the title was a heading (set over the measure): dropped
    empty = tmp_path / "scan.pdf"
    empty.write_bytes(make_pdf([[]]))
    res = runner.invoke(app, ["check", "--file", str(empty)])
    assert res.exit_code == 2 and "scan.pdf" in res.stderr and "no text layer" in res.stderr


def review_docx(mtv: dict, title: str | None = None) -> bytes:
    """The review as a Word draft: a Title-styled title, the byline, the paragraphs (one with a
    tracked deletion and an insertion), a bulleted list and a table."""
    body = [paragraph(mtv["title"], style="Title"), paragraph(mtv["byline"])]
    body += [paragraph(p, deleted=" (draft: check the date)") if i == 3 else
             paragraph(p, inserted=" (updated)") if i == 5 else paragraph(p)
             for i, p in enumerate(mtv["paragraphs"])]
    body += [paragraph("Menu", style="Heading2"), paragraph(MENU[0], numbered=True), paragraph(MENU[1], numbered=True),
             table([["Published", "2015-02-13"], ["Author", mtv["byline"]]])]
    return make_docx(body, title)


def test_a_word_document_reads_as_its_paragraphs(tmp_path, mtv):
    from core.ingest.docx import read_docx

    (tmp_path / "review.docx").write_bytes(review_docx(mtv))
    title, blocks = read_docx(tmp_path / "review.docx")
    assert title == mtv["title"]  # no dc:title: the first heading
    paragraphs = [p + " (updated)" if i == 5 else p for i, p in enumerate(mtv["paragraphs"])]
    assert blocks == [("h1", mtv["title"]), ("p", mtv["byline"]), *(("p", p) for p in paragraphs),
                      ("h2", "Menu"), ("li", MENU[0]), ("li", MENU[1]),  # tracked changes read as accepted
                      ("p", "Published | 2015-02-13"), ("p", f"Author | {mtv['byline']}")]
    (tmp_path / "titled.docx").write_bytes(review_docx(mtv, title="MTV review"))
    (given,) = load_given_files([tmp_path / "titled.docx"])
    assert given.title == "MTV review" and given.text.splitlines()[2] == mtv["paragraphs"][0]
    res = CliRunner().invoke(app, ["decompose", "--decomposer", "sentence", "--file", str(tmp_path / "review.docx"), "--json"])
    assert res.exit_code == 0, res.output
    claims = [json.loads(line)["text"] for line in res.stdout.splitlines()]
    assert mtv["title"] not in claims and mtv["paragraphs"][3] in claims and MENU[0] + "." in claims  # a list item a sentence


def spreadsheet() -> bytes:
    """An .xlsx renamed .docx: a zip without word/document.xml."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    return buf.getvalue()


@pytest.mark.parametrize(("name", "data", "expect"), [
    ("notzip.docx", b"PK\x03\x04 but not a zip", "not a Word document"),
    ("sheet.docx", spreadsheet(), "no word/document.xml"),
    ("empty.docx", make_docx([paragraph("   ")]), "holds no text in its paragraphs"),
])
def test_bad_word_files_exit_2_naming_the_file(tmp_path, name, data, expect):
    (tmp_path / name).write_bytes(data)
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "check", "A claim.", "--against", str(tmp_path / name)])
    assert res.exit_code == 2, res.output
    assert name in res.stderr and expect in res.stderr
