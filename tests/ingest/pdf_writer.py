"""A minimal PDF writer for the tests: real PDF 1.4 files (Helvetica text, one line per entry,
an xref table, an optional /Title), which pypdf reads as any other PDF. Why not ship PDF files:
the tests draw their text from ../shared/data, never copied into the repository."""

from __future__ import annotations


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """The bytes of a PDF whose page i draws ``pages[i]`` top-down, one printed line per entry
    (latin-1 text; an empty page draws nothing, as a scanned page without a text layer)."""
    objects: list[bytes] = [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]  # 1: the font
    page_ids: list[int] = []
    for lines in pages:
        ops = ["BT /F1 10 Tf 13 TL 56 760 Td", *(f"({_escape(ln)}) Tj T*" for ln in lines), "ET"]
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        objects.append(b"")  # the page, written once the page tree's number is known
        page_ids.append(len(objects))
    objects.append(b"")
    tree = len(objects)
    for pid in page_ids:
        objects[pid - 1] = (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                            b"/Resources << /Font << /F1 1 0 R >> >> >>" % (tree, pid - 1))
    objects[tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % pid for pid in page_ids), len(page_ids))
    objects.append(b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    catalog = len(objects)
    info = None
    if title is not None:
        objects.append(b"<< /Title (%s) >>" % _escape(title).encode("latin-1"))
        info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = b"<< /Size %d /Root %d 0 R%s >>" % (len(objects) + 1, catalog, b" /Info %d 0 R" % info if info else b"")
    out += b"trailer\n%s\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


def print_lines(text: str, width: int = 72) -> list[str]:
    """``text`` set in printed lines of about ``width`` characters, as a typesetter would: words
    wrapped, and a long word that would overflow hyphenated at the line's end ("radio-" /
    "activity"), so that the reflow has something to undo."""
    lines, current = [], ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        elif len(word) >= 8 and word.isalpha() and len(current) + 1 + len(word) // 2 + 1 <= width:
            cut = len(word) // 2
            lines.append(f"{current} {word[:cut]}-")
            current = word[cut:]
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines
