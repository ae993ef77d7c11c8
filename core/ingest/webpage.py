"""A saved web page (``.html`` / ``.htm``) read as the prose a person reads on it.

Why: the documents a fact-checker holds are mostly web pages saved from a browser, and the
evidence of the web-claim sets (WiCE, Factcheck-GPT, ExpertQA) is web pages too. Read as text,
a page is mostly menus, scripts, cookie banners and footers; as evidence, each of those lines
is one more unit for the verifier to judge and one more chance of a spurious "refutes".

What is kept, in the spirit of Mozilla Readability (the reader view of Firefox):
- **the main content**: the page's ``<main>`` (or ``role="main"``) element, else its only
  ``<article>``, else ``<body>``; a container holding under :data:`MIN_MAIN_CHARS` characters
  of text falls back to the body (some pages wrap only a teaser in ``<article>``);
- **without chrome**: ``<script>``, ``<style>``, ``<nav>``, ``<aside>``, forms, buttons, inline
  SVG, hidden elements (``hidden``, ``aria-hidden="true"``, ``display:none``), landmark roles
  other than the main one, and site headers and footers (a ``<header>`` / ``<footer>`` inside
  the main content is the article's own byline or note and stays);
- **unlikely candidates**: an element whose ``class`` or ``id`` matches Readability's
  ``unlikelyCandidates`` pattern (banner, breadcrumbs, comment, cookie, footer, menu, related,
  sidebar, social, sponsor, …) and not its ``okMaybeItsACandidate`` one (article, body,
  column, content, main) is dropped, and so are Wikipedia's citation markers ``[1]``, edit
  links and navigation boxes (MediaWiki's ``reference``, ``mw-editsection``, ``navbox``);
- **no link lists**: a list, table or division whose text is over half link text
  (Readability's link density, the 0.5 it uses for long blocks) is navigation, not prose.

Each block (paragraph, heading, list item, table row, line break) becomes one line: a given
document's line breaks are sentence boundaries (core/pipeline/given.py), and a heading or a list
item carries no full stop. Table cells of a row are joined with " | ". Text inside ``<pre>``
keeps its lines. Character references are decoded by the standard library's parser.

Bytes are decoded as the WHATWG encoding-sniffing algorithm does for a file: a byte-order mark,
else a ``<meta charset>`` (or ``http-equiv="Content-Type"``) in the first 1,024 bytes, else
UTF-8 when the bytes are valid UTF-8, else windows-1252 (the standard's fallback for English
pages); a byte the encoding does not map reads as U+FFFD, as in a browser. Pages older than UTF-8
are common among saved pages; refusing them helps nobody.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from core.errors import InputError

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
MIN_MAIN_CHARS = 200  # a main / article element with less text than this is a teaser: read the body
LINK_DENSITY_MAX = 0.5  # Readability's threshold for long blocks (``_cleanConditionally``)

# Readability.js (mozilla/readability, REGEXPS.unlikelyCandidates / okMaybeItsACandidate), with
# "cookie" and "consent" for today's banners and MediaWiki's chrome classes.
UNLIKELY = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|"
    r"header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|"
    r"supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|cookie|consent|"
    r"(?:^|\s)reference(?:\s|$)|mw-editsection|navbox|noprint|mw-jump-link",
    re.I,
)
MAYBE_CANDIDATE = re.compile(r"and|article|body|column|content|main|shadow", re.I)

SKIP_TAGS = frozenset({
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed",
    "nav", "aside", "form", "button", "select", "textarea", "input", "label", "dialog", "head",
    "audio", "video", "picture", "map",
})
CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog",
                          "alertdialog", "menu", "menubar", "toolbar", "alert", "status"})
BLOCK_TAGS = frozenset({
    "address", "article", "blockquote", "body", "caption", "dd", "details", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hgroup", "hr", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "thead",
    "tfoot", "tr", "ul", "html",
})
CELL_TAGS = frozenset({"td", "th"})
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
DENSITY_TAGS = frozenset({"ul", "ol", "dl", "table", "div", "section"})
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})
# An open <p> (or <li> …) ends where the next block starts: HTML's implied end tags.
CLOSES = {
    "p": BLOCK_TAGS,
    "li": frozenset({"li"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "tr": frozenset({"tr"}),
    "td": frozenset({"td", "th", "tr"}),
    "th": frozenset({"td", "th", "tr"}),
    "option": frozenset({"option"}),
}
SPACE = re.compile(r"[ \t\n\r\f\v\u00a0\u200b]+")
TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|::|·|•)\s+")


@dataclass
class Node:
    """An element of the page: its tag, attributes and children (nodes or text)."""

    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)


@dataclass(frozen=True)
class WebPage:
    """What a page holds as a document: its title, its prose (one block a line) and the URL it
    names as its own (``<link rel="canonical">`` or ``og:url``), if any."""

    title: str
    text: str
    url: str | None = None
    blocks: tuple[tuple[str, str], ...] = ()  # (kind, line): "h1" … "h6", "li" or "p"; text is their lines

    @property
    def markdown(self) -> str:
        return blocks_markdown(self.blocks)


class _TreeBuilder(HTMLParser):
    """The page as a tree of :class:`Node`, tolerant as browsers are: void elements never open,
    implied end tags close an open ``<p>`` / ``<li>`` / cell, and a stray end tag is ignored."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack: list[Node] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for open_tag, closed_by in CLOSES.items():
            if tag in closed_by and any(n.tag == open_tag for n in self.stack[1:]):
                # close the innermost open_tag, unless a table or list boundary lies between
                for i in range(len(self.stack) - 1, 0, -1):
                    t = self.stack[i].tag
                    if t == open_tag:
                        del self.stack[i:]
                        break
                    if t in ("table", "ul", "ol", "dl", "div", "section", "article", "main", "body"):
                        break
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID_TAGS:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def decode_html(data: bytes, where: str | Path) -> str:
    """A page's bytes as text, by the WHATWG sniffing order (module docstring); NUL bytes (a
    binary file, or UTF-16 without its mark) are refused with a message naming ``where``."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return _decoded(data[len(bom):], enc, where)
    declared = _declared_encoding(data[:1024])
    if declared:
        return _decoded(data, declared, where)
    try:
        return _decoded(data, "utf-8", where, errors="strict")
    except UnicodeDecodeError:
        return _decoded(data, "windows-1252", where)


def _declared_encoding(head: bytes) -> str | None:
    m = re.search(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", head, re.I)
    if not m:
        return None
    name = m.group(1).decode("ascii").lower()
    try:
        name = codecs.lookup(name).name
    except LookupError:
        return None
    # WHATWG: a page that declares UTF-16 in its markup is read as UTF-8 (the markup was readable
    # as ASCII, so it is not UTF-16); and latin-1 / ascii labels mean windows-1252.
    if name.startswith("utf-16"):
        return "utf-8"
    if name in ("latin-1", "iso8859-1", "ascii"):
        return "windows-1252"
    return name


def _decoded(data: bytes, encoding: str, where: str | Path, errors: str = "replace") -> str:
    """``data`` decoded; a byte the encoding does not map becomes U+FFFD, as a browser shows it
    (one stray byte in a saved page is no reason to refuse it), unless ``errors`` is "strict"."""
    text = data.decode(encoding, errors=errors)
    if "\x00" in text:
        raise InputError("contains a NUL byte: not a web page", where)
    return text


def read_webpage(path: Path) -> WebPage:
    """A saved page's title and prose (empty when it holds none: the caller says so)."""
    return html_to_page(decode_html(path.read_bytes(), path))


def html_to_page(html: str) -> WebPage:
    """The title, prose and own URL of a page given as HTML text (module docstring)."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    root = builder.root
    content = _main_container(root)
    blocks = _prose_blocks(content, inside_main=content.tag not in ("body", "#root", "html"))
    return WebPage(_title(root, content), "\n".join(text for _, text in blocks), _own_url(root), tuple(blocks))


def _walk(node: Node):
    yield node
    for child in node.children:
        if isinstance(child, Node):
            yield from _walk(child)


def _find(root: Node, pred) -> list[Node]:
    return [n for n in _walk(root) if pred(n)]


def _main_container(root: Node) -> Node:
    body = next(iter(_find(root, lambda n: n.tag == "body")), root)
    candidates = _find(body, lambda n: n.tag == "main" or n.attrs.get("role") == "main")
    if not candidates:
        articles = _find(body, lambda n: n.tag == "article")
        candidates = articles if len(articles) == 1 else []
    for node in candidates:
        if len(_plain_text(node)) >= MIN_MAIN_CHARS:
            return node
    return body


def _skipped(node: Node, inside_main: bool) -> bool:
    """Chrome, hidden or unlikely: the element and all it holds are no part of the prose."""
    a = node.attrs
    if node.tag in SKIP_TAGS or "hidden" in a or a.get("aria-hidden", "").lower() == "true":
        return True
    style = a.get("style", "").replace(" ", "").lower()
    if "display:none" in style or "visibility:hidden" in style:
        return True
    if a.get("role", "").lower() in CHROME_ROLES:
        return True
    if node.tag in ("header", "footer") and not inside_main:
        return True
    marks = f"{a.get('class', '')} {a.get('id', '')}".strip()
    if marks and UNLIKELY.search(marks) and not MAYBE_CANDIDATE.search(marks) and node.tag not in ("body", "main", "article"):
        return True
    return node.tag == "sup" and "reference" in a.get("class", "").split()


def _plain_text(node: Node) -> str:
    return SPACE.sub(" ", "".join(_texts(node, inside_main=True))).strip()


def _texts(node: Node, inside_main: bool):
    for child in node.children:
        if isinstance(child, str):
            yield child
        elif not _skipped(child, inside_main):
            yield from _texts(child, inside_main)


def _link_density(node: Node, inside_main: bool) -> float:
    """The share of a block's (kept) text that is link text, whitespace not counted."""
    total, linked = _text_lengths(node, inside_main, in_link=False)
    return linked / total if total else 0.0


def _text_lengths(node: Node, inside_main: bool, in_link: bool) -> tuple[int, int]:
    total = linked = 0
    for child in node.children:
        if isinstance(child, str):
            n = len(SPACE.sub("", child))
            total += n
            linked += n if in_link else 0
        elif not _skipped(child, inside_main):
            t, k = _text_lengths(child, inside_main, in_link or child.tag == "a")
            total += t
            linked += k
    return total, linked


def _prose_blocks(content: Node, inside_main: bool) -> list[tuple[str, str]]:
    """The page's lines, each with its kind: "h1" … "h6" (a heading), "li" (a list item) or "p"."""
    lines: list[tuple[str, str]] = []
    current: list[str] = []
    cells = [0]  # how many table cells are open: a <br> inside one separates, it does not end the row
    kinds = ["p"]  # the kind of the innermost heading or list item being read

    def flush() -> None:
        line = SPACE.sub(" ", "".join(current)).strip()
        current.clear()
        if line.strip(" |"):
            lines.append((kinds[-1], line.strip(" |").strip()))

    def visit(node: Node) -> None:
        for child in node.children:
            if isinstance(child, str):
                current.append(child)
                continue
            if _skipped(child, inside_main):
                continue
            tag = child.tag
            if tag in DENSITY_TAGS and _link_density(child, inside_main) > LINK_DENSITY_MAX:
                continue
            if tag == "br":
                if cells[0]:
                    current.append(", ")
                else:
                    flush()
            elif tag == "pre":
                flush()
                for raw in "".join(_texts(child, inside_main)).splitlines():
                    current.append(raw)
                    flush()
            elif tag in CELL_TAGS:
                if SPACE.sub("", "".join(current)):
                    current.append(" | ")
                cells[0] += 1
                visit(child)
                cells[0] -= 1
            elif tag in BLOCK_TAGS:
                flush()
                kinds.append(tag if tag in HEADING_TAGS or tag == "li" else kinds[-1])
                visit(child)
                flush()
                kinds.pop()
            else:
                visit(child)

    visit(content)
    flush()
    return lines


def blocks_markdown(blocks: Sequence[tuple[str, str]]) -> str:
    """Blocks as Markdown, for an answer to check (``check --file page.html``): headings as
    ``#`` lines and list items as ``-`` lines, so that the decomposers read the page as they read
    a Markdown answer (core/markdown.py: headings dropped, each list item a sentence); paragraphs
    apart by blank lines, where a sentence always ends."""
    out: list[str] = []
    for i, (kind, text) in enumerate(blocks):
        if kind in HEADING_TAGS:
            line = "#" * int(kind[1]) + " " + text
        elif kind == "li":
            line = "- " + text
        else:
            line = text
        tight = kind == "li" and i > 0 and blocks[i - 1][0] == "li"
        out.append(("\n" if tight else "\n\n") + line if out else line)
    return "".join(out)


def _title(root: Node, content: Node) -> str:
    for n in _walk(root):
        if n.tag == "meta" and n.attrs.get("property", "").lower() == "og:title" and n.attrs.get("content", "").strip():
            return SPACE.sub(" ", n.attrs["content"]).strip()
    h1 = next(iter(_find(content, lambda n: n.tag == "h1")), None)
    if h1 is not None and _plain_text(h1):
        return _plain_text(h1)
    title = next(iter(_find(root, lambda n: n.tag == "title")), None)
    if title is None:
        return ""
    text = SPACE.sub(" ", "".join(c for c in title.children if isinstance(c, str))).strip()
    # "Marie Curie - Wikipedia" → "Marie Curie": the site's name after the last separator goes
    parts = TITLE_SEPARATORS.split(text)
    return " - ".join(parts[:-1]) if len(parts) > 1 else text


def _own_url(root: Node) -> str | None:
    for n in _walk(root):
        rel = n.attrs.get("rel", "").lower().split()
        if n.tag == "link" and "canonical" in rel and n.attrs.get("href", "").startswith(("http://", "https://")):
            return n.attrs["href"]
    for n in _walk(root):
        if n.tag == "meta" and n.attrs.get("property", "").lower() == "og:url" and n.attrs.get("content", "").startswith(("http://", "https://")):
            return n.attrs["content"]
    return None
