"""A Word document (``.docx``) read as its prose: paragraphs, headings, list items, table rows.

Why: reports, briefs and drafts reach a fact-checker as Word files as often as PDFs, and an
answer or a report to check is often pasted into one. A ``.docx`` file is a zip of XML parts
(ECMA-376, Office Open XML); its text is in ``word/document.xml``, so the standard library reads
it (``zipfile``, ``xml.etree``) and no dependency is needed.

What is read (ECMA-376 Part 1, §17.3 paragraphs and runs, §17.4 tables):
- each paragraph (``w:p``) is one line: the text of its runs (``w:t``), tabs as spaces; a
  paragraph styled ``Title`` or ``Heading 1``–``Heading 6`` (``w:pStyle``) is a heading, one with
  numbering properties (``w:numPr``) a list item, as :mod:`core.ingest.webpage` gives its blocks;
- each table row (``w:tr``) is one line, its cells joined with " | " (as a web page's rows);
- tracked changes read as accepted: inserted runs (``w:ins``) are text, deleted ones
  (``w:delText``) are not; field codes (``w:instrText``), comments, footnotes and headers are
  other parts or other elements, and are not read.
- the title is the document's ``dc:title`` (``docProps/core.xml``) unless empty, else its first
  heading, else the file's name.

Bad input is refused naming the file: not a zip, no ``word/document.xml`` (another Office
format), a part larger than :data:`MAX_PART_BYTES` uncompressed (a zip bomb), malformed XML.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from core.errors import InputError

DOCX_SUFFIXES = (".docx",)
MAX_PART_BYTES = 64 * 1024 * 1024  # uncompressed; the largest real reports are a few MB of XML
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
# Word's style ids: "Heading1" (English), "berschrift1" (German: Word drops the "Ü"), "Titre1", …
HEADING_STYLE = re.compile(r"^(?:heading|berschrift|überschrift|titre|titolo|encabezado|kop)\s*([1-6])$", re.I)
SPACE = re.compile(r"\s+")


def read_docx(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """A Word document's title and lines, each ("h1" … "h6", heading), ("li", item) or ("p", text)."""
    try:
        with zipfile.ZipFile(path) as z:
            body = ElementTree.fromstring(_part(z, "word/document.xml", path)).find(f"{W}body")
            core = _part(z, "docProps/core.xml", path, required=False)
    except zipfile.BadZipFile:
        raise InputError("not a Word document (.docx is a zip file; this is not one)", path) from None
    except ElementTree.ParseError as exc:
        raise InputError(f"not a readable Word document (malformed XML: {exc})", path) from None
    blocks = list(_blocks(body)) if body is not None else []
    title = ""
    if core:
        try:
            element = ElementTree.fromstring(core).find(DC_TITLE)
            title = SPACE.sub(" ", element.text or "").strip() if element is not None else ""
        except ElementTree.ParseError:
            title = ""
    if not title:
        title = next((text for kind, text in blocks if kind.startswith("h")), "") or path.stem
    return title, blocks


def _part(z: zipfile.ZipFile, name: str, path: Path, required: bool = True) -> bytes | None:
    try:
        info = z.getinfo(name)
    except KeyError:
        if required:
            raise InputError(f"not a Word document: no {name} in it (another Office format?)", path) from None
        return None
    if info.file_size > MAX_PART_BYTES:
        raise InputError(f"{name} unpacks to {info.file_size:,} bytes, over {MAX_PART_BYTES:,}: refused", path)
    return z.read(info)


def _blocks(body: ElementTree.Element):
    for child in body:
        if child.tag == f"{W}p":
            text = _paragraph_text(child)
            if text:
                yield _paragraph_kind(child), text
        elif child.tag == f"{W}tbl":
            for row in child.iter(f"{W}tr"):
                cells = [" ".join(t for t in (_paragraph_text(p) for p in tc.iter(f"{W}p")) if t)
                         for tc in row.iter(f"{W}tc")]
                line = " | ".join(c for c in cells if c)
                if line:
                    yield "p", line
        elif child.tag == f"{W}sdt":  # a content control (a cover page, a table of contents) holds paragraphs too
            content = child.find(f"{W}sdtContent")
            if content is not None:
                yield from _blocks(content)


def _paragraph_text(p: ElementTree.Element) -> str:
    parts = []
    for el in p.iter():
        if el.tag == f"{W}t":
            parts.append(el.text or "")
        elif el.tag in (f"{W}tab", f"{W}br", f"{W}cr"):
            parts.append(" ")
    return SPACE.sub(" ", "".join(parts)).strip()


def _paragraph_kind(p: ElementTree.Element) -> str:
    props = p.find(f"{W}pPr")
    if props is None:
        return "p"
    style = props.find(f"{W}pStyle")
    name = (style.get(f"{W}val") or "") if style is not None else ""
    if name.lower() == "title":
        return "h1"
    m = HEADING_STYLE.match(name)
    if m:
        return f"h{m.group(1)}"
    if props.find(f"{W}numPr") is not None or name.lower().startswith("listparagraph"):
        return "li"
    return "p"
