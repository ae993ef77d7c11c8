"""A minimal Word writer for the tests: real ``.docx`` files (Office Open XML parts in a zip, as
Word writes them: content types, package relationships, ``word/document.xml``,
``docProps/core.xml``), read by core/ingest/docx.py as any other. Why not ship .docx files: the
tests draw their text from ../shared/data, never copied into the repository."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>
</Types>"""
RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>
</Relationships>"""


def paragraph(text: str, style: str | None = None, numbered: bool = False, deleted: str = "", inserted: str = "") -> str:
    """One ``w:p``: ``text`` in two runs (Word splits runs at every change of formatting), with an
    optional tracked deletion and insertion after it."""
    props = ""
    if style or numbered:
        props = "<w:pPr>" + (f'<w:pStyle w:val="{style}"/>' if style else "") + (
            '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>' if numbered else "") + "</w:pPr>"
    half = len(text) // 2
    runs = "".join(f'<w:r><w:t xml:space="preserve">{escape(part)}</w:t></w:r>' for part in (text[:half], text[half:]) if part)
    if deleted:
        runs += f'<w:del w:id="1" w:author="ed"><w:r><w:delText xml:space="preserve">{escape(deleted)}</w:delText></w:r></w:del>'
    if inserted:
        runs += f'<w:ins w:id="2" w:author="ed"><w:r><w:t xml:space="preserve">{escape(inserted)}</w:t></w:r></w:ins>'
    return f"<w:p>{props}{runs}</w:p>"


def table(rows: list[list[str]]) -> str:
    cells = "".join("<w:tr>" + "".join(f"<w:tc>{paragraph(c)}</w:tc>" for c in row) + "</w:tr>" for row in rows)
    return f"<w:tbl>{cells}</w:tbl>"


def make_docx(body: list[str], title: str | None = None) -> bytes:
    """The bytes of a .docx whose body holds ``body`` (``paragraph`` / ``table`` XML, in order)."""
    document = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{W_NS}">'
                f"<w:body>{''.join(body)}<w:sectPr/></w:body></w:document>")
    core = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties '
            'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/">'
            + (f"<dc:title>{escape(title)}</dc:title>" if title else "") + "</cp:coreProperties>")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CONTENT_TYPES)
        z.writestr("_rels/.rels", RELS)
        z.writestr("word/document.xml", document)
        z.writestr("docProps/core.xml", core)
    return buf.getvalue()
