"""A PDF's text layer read as prose (``.pdf`` given documents and knowledge-source files).

Why: reports, papers and court documents reach a fact-checker as PDFs, and SciFact-style
claims are checked against papers. The text comes from pypdf (pure Python, BSD; no pickle, no
network); what pypdf gives is the page as drawn: one line of text per printed line, words
hyphenated at line ends, the running head and the page number on every page. Read as it is, a
given document's line breaks are sentence boundaries (core/pipeline/given.py), so every printed
line would become a "sentence" of half a sentence. So the text is reflowed:

- **running heads and feet go**: a line (its digits ignored) that opens or closes at least half
  of the pages, in a document of three pages or more, is the journal's name or a page number,
  and so is a line that is a number alone;
- **printed lines join into sentences**: a line break is kept only where a sentence or a
  paragraph ends (the line ends in . ! ? : or a closing quote / bracket after one, or is followed
  by a blank line) or after a heading (a line off the page's measure, under 60 % or over 115 % of
  its usual line length, with no closing punctuation, followed by a capitalised or numbered line:
  body text wraps at the measure, a title set in larger type does not), and around a numbered
  section heading ("2.4. The glob files", "III. Methods"); elsewhere the lines join with a space;
- **hyphenation is undone**: "algo-" at a line's end and "rithm" after it join to "algorithm";
  a hyphen is kept when the next line starts with a capital or a digit ("Franco-" / "Prussian"),
  and so is a suspended one ("pre-" / "and post-treatment");
- **ligatures are spelled out** (ﬁ → fi), as a reader sees them and the tokenizer expects.

A PDF with no text layer (a scan) or an encrypted one is refused with a message that says what
to do; nothing is guessed by OCR.
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from pathlib import Path

from core.errors import InputError

PDF_SUFFIXES = (".pdf",)
HEADING_SHARE = 0.6  # a line shorter than this share of the usual line length may be a heading
OVER_MEASURE = 1.15  # … or longer than this share of it: set in a larger type, not wrapped body text
RUNNING_SHARE = 0.5  # a line opening / closing this share of the pages is a running head / foot
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
ENDS_SENTENCE = re.compile(r"[.!?:][\"'”’)\]]*$")
PAGE_NUMBER = re.compile(r"^(?:page\s+)?[-–]?\s*\d{1,4}\s*[-–]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
NUMBERED_HEADING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.)\s+[A-Z]")  # "2.4. The glob files", "III. Methods"
SUSPENDED = frozenset({"and", "or", "nor", "to", "as", "but", "versus", "vs."})  # "2- and 3-fold"
JUNK_TITLE = re.compile(r"^(?:untitled|microsoft word\b|document\d*$)|\.(?:docx?|pdf|tex|dvi|indd|qxd)$", re.I)


def read_pdf(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """A PDF's title and reflowed lines, each ("h2", heading) or ("p", text) (none when it has no
    text layer); a file that is not a readable PDF, or is encrypted, is refused naming the file
    (module docstring)."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - pypdf is a dependency
        raise InputError("reading a PDF needs the pypdf package (pip install pypdf)", path) from exc

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd PDF syntax are not the user's business
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not _decrypt(reader):
            raise InputError("is encrypted: save a copy without a password and give that", path)
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except InputError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise InputError(f"not a readable PDF ({exc})", path) from None
    blocks = reflow_blocks(pages)  # none for a scan: the caller says so (core/ingest/sources.py)
    return pdf_title(str(meta_title), "\n".join(text for _, text in blocks), path), blocks


def _decrypt(reader) -> bool:
    """An encrypted PDF that opens with the empty password (many do: only printing is locked)."""
    try:
        return bool(reader.decrypt(""))
    except Exception:  # pypdf raises several kinds here, a missing AES library among them
        return False


def pdf_title(meta_title: str, text: str, path: Path) -> str:
    """The metadata title unless it is a file name or a word processor's default, else the
    first line if it reads as a title (under 200 characters), else the file's stem."""
    title = " ".join(meta_title.split())
    if title and not JUNK_TITLE.search(title):
        return title
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first if 0 < len(first) < 200 else path.stem


def reflow_pages(pages: list[str]) -> str:
    """The text of every page, running heads and page numbers removed, printed lines joined
    into sentences (module docstring); pages are joined as one flow, since a sentence runs on
    across a page break."""
    return "\n".join(text for _, text in reflow_blocks(pages))


def reflow_blocks(pages: list[str]) -> list[tuple[str, str]]:
    """:func:`reflow_pages`'s lines, each with its kind: "h2" for a heading the reflow kept on a
    line of its own (so an answer read from a PDF drops it as a Markdown heading), else "p"."""
    page_lines = [[ln.translate(LIGATURES).strip() for ln in p.splitlines()] for p in pages]
    running = _running_lines(page_lines)
    lines: list[str] = []
    for pl in page_lines:
        for ln in pl:
            if PAGE_NUMBER.match(ln) or (ln and _shape(ln) in running):
                continue
            lines.append(ln)
    return _join_lines(lines)


def _shape(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.lower().split()))


def _running_lines(page_lines: list[list[str]]) -> set[str]:
    """Lines (digits ignored) among the first or last two of at least half of the pages."""
    if len(page_lines) < 3:
        return set()
    seen: Counter[str] = Counter()
    for pl in page_lines:
        kept = [ln for ln in pl if ln]
        seen.update({_shape(ln) for ln in kept[:2] + kept[-2:]})
    need = max(2, int(len(page_lines) * RUNNING_SHARE + 0.999))
    return {shape for shape, n in seen.items() if n >= need}


def _join_lines(lines: list[str]) -> list[tuple[str, str]]:
    lengths = [len(ln) for ln in lines if ln]
    usual = statistics.median(sorted(lengths)[len(lengths) // 2:]) if lengths else 0  # the longer half: full lines
    out: list[tuple[str, str]] = []
    current = ""
    for i, line in enumerate(lines):
        if not line:
            if current:
                out.append(("p", current))
                current = ""
            continue
        numbered = bool(NUMBERED_HEADING.match(line)) and len(line) < HEADING_SHARE * usual and not ENDS_SENTENCE.search(line)
        if numbered and current:  # "2.4. The glob files" after a sentence that did not end at its line
            out.append(("p", current))
            current = ""
        if not current:
            current = line
        elif current.endswith("-") and line.split(maxsplit=1)[0] in SUSPENDED:
            current = f"{current} {line}"  # "pre- and post-treatment": a suspended hyphen, kept
        elif current.endswith("-") and len(current) > 1 and current[-2].isalpha() and line[0].islower():
            current = current[:-1] + line  # hyphenated at the line's end
        else:
            current = f"{current} {line}" if not current.endswith("-") else current + line
        nxt = next((ln for ln in lines[i + 1:i + 2]), "")
        off_measure = len(line) < HEADING_SHARE * usual or len(line) > OVER_MEASURE * usual
        heading = (current == line and off_measure and not ENDS_SENTENCE.search(line)
                   and not line.endswith(("-", ",")) and (nxt[:1].isupper() or nxt[:1].isdigit()))
        if ENDS_SENTENCE.search(current) or heading or numbered:
            out.append(("h2" if (heading or numbered) and current == line and not ENDS_SENTENCE.search(line) else "p",
                        current))
            current = ""
    if current:
        out.append(("p", current))
    return out
