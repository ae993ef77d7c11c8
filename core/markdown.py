"""Markdown as prose: an LLM answer's layout turned into sentences before decomposition, with
an exact map from every prose character back to the answer; a Markdown file's text read as
evidence the same way (core/ingest/sources.py).

Chat models answer in Markdown (headings, bullet and numbered lists, bold, links, code). Fed
as is, the parser takes "## Summary" for a sentence's subject, "1." for a sentence, and a
bullet list for one run-on sentence: a pasted answer gave the claims "## Summary was
German-born." and "1.". This pass writes what a reader reads:

- headings (ATX ``#`` and setext underlines; kept as sentences for documents indexed as
  evidence), horizontal rules, code fences with their code, and images are dropped — none of
  them states a fact to check;
- list markers (``-``, ``*``, ``+``, ``1.``, ``1)``, task boxes) and blockquote ``>`` are
  dropped, and every list item, like every paragraph, ends as a sentence: a block whose last
  word has no sentence-final punctuation gets a period (a zero-width insertion, so the map
  stays exact), and a lead-in's final colon or an item's final comma / semicolon becomes one;
- a reference section ("Sources:", "## References", "See also") is dropped with the list or the
  bare links under it, up to the next paragraph or heading: it names sources, it states nothing;
- emphasis (``**``, ``__``, ``*``, ``_``) and inline-code backticks are dropped around their
  text, struck-through text (``~~…~~``) is dropped with its text (its author withdrew it),
  links keep their text (``[text](url)`` → text; a numbered link ``[2](url)`` stays the
  citation marker ``[2]``, which :mod:`core.decompose.citations` then reads; so does a
  footnote ``[^2]``, whose definition line ``[^2]: …`` is dropped as a reference).

Text that shows none of these marks is returned unchanged, with the identity map, so a plain
answer decomposes exactly as before. A table row is a block of its own,
its cells left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a line that shows the answer is Markdown (checked before anything is rewritten)
_SIGNS = re.compile(
    r"(?m)^[ \t]{0,3}(?:#{1,6}[ \t]|[-*+][ \t]+\S|\d{1,3}[.)][ \t]+\S|>|```|~~~)"  # block marks
    r"|(?m:^[ \t]{0,3}(?:={3,}|-{3,}|\*{3,}|_{3,})[ \t]*$)"  # heading underlines, rules
    r"|\*\*\S|__\S|`[^`\n]+`|~~\S|!?\[[^\]\n]+\]\([^)\s]+\)|\[\^[^\]\s]+\]"  # inline marks
    r"|(?<![\w*])\*(?=\S)[^*\n]+(?<=\S)\*(?![\w*])"  # *emphasis*
)
_LINE = re.compile(r"[^\n]*\n?")  # lines end at "\n" only (str.splitlines also breaks at \x0b, \u2028 …)
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_ATX = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r"^[ \t]{0,3}(?:=+|-+)[ \t]*$")
_RULE = re.compile(r"^[ \t]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")
# the label of an answer's reference section, and a line that is only a link
_REFERENCES = re.compile(r"(?i)(?:sources?|references?|citations?|bibliography|works cited|further reading|"
                         r"see also|links|learn more|read more)\s*:?")
_URL_ONLY = re.compile(r"(?i)(?:\[\d+\]\s*)?(?:https?://|www\.)\S+")
# inline marks, in the order they are undone
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:[^)\s]+)(?:[ \t]+\"[^\"\n]*\")?\)")
_CITATION_TEXT = re.compile(r"\d+(?:\s*[-–,]\s*\d+)*")
_CODE = re.compile(r"`([^`\n]+)`")
_FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\]")  # "[^2]": the citation [2]; a named one ("[^note]") is dropped
_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^[^\]\s]+\]:")  # "[^2]: https://…": a reference
_STRIKE = re.compile(r"~~(?=\S)[^~\n]+?(?<=\S)~~")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
# a line that opens with a label, one to four words and a colon ("Born: 14 March 1879", "Known for:
# …"): an infobox copied line by line, a field of its own (core/decompose/fields.py reads it)
_FIELD = re.compile(r"^[ \t]*[A-Z][A-Za-z]*(?:[ \t][A-Za-z]+){0,3}:[ \t]+\S")
# the end of a sentence: final punctuation, then closing quotes / brackets and [n] markers
_ENDED = re.compile(r"[.!?…][\"'”’)\]]*(?:\s*\[\d[\d,\s–-]*\])*\s*$")


@dataclass(frozen=True)
class Mapped:
    """Text rewritten from an original: ``starts[i]`` / ``ends[i]`` are the original offsets
    of character ``i`` (an inserted character has ``starts[i] == ends[i]``, zero width)."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def identity(cls, text: str, at: int = 0) -> Mapped:
        return cls(text, tuple(range(at, at + len(text))), tuple(range(at + 1, at + len(text) + 1)))

    @classmethod
    def inserted(cls, text: str, at: int) -> Mapped:
        return cls(text, (at,) * len(text), (at,) * len(text))

    @classmethod
    def join(cls, parts: list[Mapped]) -> Mapped:
        return cls("".join(p.text for p in parts), tuple(x for p in parts for x in p.starts),
                   tuple(x for p in parts for x in p.ends))

    def piece(self, i: int, j: int) -> Mapped:
        return Mapped(self.text[i:j], self.starts[i:j], self.ends[i:j])

    def span(self, start: int, end: int, length: int | None = None) -> tuple[int, int]:
        """The original span of ``text[start:end]``: from its first character's start to its
        last one's end (an empty span sits where its position maps). ``length``: the
        original's length, for a position at the very end."""
        end = min(end, len(self.text))
        if start >= end:
            at = self.starts[start] if start < len(self.text) else (self.ends[-1] if self.ends else (length or 0))
            return at, at
        return self.starts[start], self.ends[end - 1]


def looks_like_markdown(text: str) -> bool:
    return _SIGNS.search(text) is not None


def markdown_to_prose(text: str, keep_headings: bool = False) -> Mapped:
    """The prose a reader reads in a Markdown answer, mapped back onto ``text`` (module
    docstring); text without Markdown marks comes back as it is. ``keep_headings``: a heading
    becomes a sentence of its own instead of being dropped — for documents indexed as
    evidence, where a section's heading often names what its lines are about."""
    if not looks_like_markdown(text):
        return Mapped.identity(text)
    parts: list[Mapped] = []
    block: list[Mapped] = []  # the current paragraph or list item, line by line
    block_lines = 0
    fence: str | None = None
    is_item = False  # the current block is a list item
    references = False  # inside a "Sources:" section: its items are references, not statements

    def close() -> None:
        nonlocal block, block_lines, is_item, references
        if block:
            joined = Mapped.join(block)
            if _REFERENCES.fullmatch(joined.text.strip()):
                references = True
            elif not (references and (is_item or _URL_ONLY.fullmatch(joined.text.strip()))):
                references = False
                parts.append(_end_as_sentence(joined))
        block, block_lines, is_item = [], 0, False

    for found in _LINE.finditer(text):
        raw, line_start = found.group(), found.start()
        if not raw:
            break
        body = raw.rstrip("\r\n")
        newline = Mapped.identity(raw[len(body):], line_start + len(body))
        if fence is not None:  # inside a code block: dropped up to its closing fence
            m = _FENCE.match(body)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not body[m.end():].strip():
                fence = None
            continue
        m = _FENCE.match(body)
        if m:
            close()
            fence = m.group(1)
            continue
        if not body.strip():
            close()
            parts.append(newline)
            continue
        if _SETEXT.match(body) and block_lines == 1 and not is_item and not _ITEM.match(body):
            if keep_headings:  # the line above was a heading ("Title\n=====")
                close()
            block, block_lines = [], 0
            parts.append(newline)
            continue
        if _FOOTNOTE_DEF.match(body):  # a footnote's definition names a source
            close()
            parts.append(newline)
            continue
        heading = _ATX.match(body)
        if heading or _RULE.match(body) or _TABLE_RULE.match(body):
            close()
            title = body[heading.end():].rstrip().rstrip("#").rstrip() if heading else ""
            if heading:
                references = bool(_REFERENCES.fullmatch(_inline(Mapped.identity(title)).text.strip()))
            if keep_headings and title.strip() and not references:
                at = line_start + heading.end()
                block = [_inline(Mapped.identity(title, at))]
                close()
            parts.append(newline)
            continue
        content_at = 0
        q = _QUOTE.match(body)
        if q:
            content_at = q.end()
        item = _ITEM.match(body[content_at:])
        if item or body.lstrip().startswith("|"):  # a list item or a table row starts a block
            close()
            content_at += item.end() if item else 0
            is_item = bool(item)
        content_at += len(body[content_at:]) - len(body[content_at:].lstrip())  # a continuation's indent
        line = _inline(Mapped.identity(body[content_at:], line_start + content_at))
        if not line.text.strip():
            close()
            parts.append(newline)
            continue
        field = bool(_FIELD.match(line.text))
        if field and block_lines and not is_item:  # "Born: 1879" under a lead-in line starts a block of its own
            close()
        block.append(line)
        block_lines += 1
        if field and not is_item:  # … and ends one: a field list without marks is one sentence per field
            close()
            parts.append(newline)
            continue
        if newline.text:  # a line break inside a block is a wrapped line: a space
            block.append(Mapped(" ", newline.starts[:1], newline.ends[-1:]))
    close()
    return Mapped.join(parts)


def _end_as_sentence(block: Mapped) -> Mapped:
    """A block (paragraph or list item) that ends as a sentence, followed by a line break."""
    text = block.text.rstrip()
    kept = block.piece(0, len(text))
    tail = Mapped.inserted("\n", block.ends[len(text) - 1] if text else 0)
    if not text or _ENDED.search(text):
        return Mapped.join([kept, tail])
    if text[-1] in ":;,":  # a lead-in or a list item of a running list: its mark ends the sentence
        dot = Mapped(".", kept.starts[-1:], kept.ends[-1:])
        return Mapped.join([kept.piece(0, len(text) - 1), dot, tail])
    return Mapped.join([kept, Mapped.inserted(".", kept.ends[-1]), tail])


def _inline(line: Mapped) -> Mapped:
    """Undo the inline marks of one line (module docstring)."""
    line = _sub(line, _IMAGE, lambda m: [])
    line = _sub(line, _LINK, lambda m: [(m.start(), m.end(1) + 1)] if _CITATION_TEXT.fullmatch(m.group(1)) else [m.span(1)])
    line = _sub(line, _CODE, lambda m: [m.span(1)])
    line = _sub(line, _FOOTNOTE, lambda m: [(m.start(), m.start() + 1), (m.start(1), m.end())] if m.group(1).isdigit() else [])
    line = _sub(line, _STRIKE, lambda m: [])
    line = _sub(line, _STRONG, lambda m: [m.span(2)])
    return _sub(line, _EMPHASIS, lambda m: [m.span(1) if m.group(1) is not None else m.span(2)])


def _sub(line: Mapped, pattern: re.Pattern, keep) -> Mapped:
    """Each match of ``pattern`` is replaced by the ranges ``keep(match)`` of the line."""
    out, at = [], 0
    for m in pattern.finditer(line.text):
        out.append(line.piece(at, m.start()))
        out.extend(line.piece(i, j) for i, j in keep(m))
        at = m.end()
    if not out:
        return line
    out.append(line.piece(at, len(line.text)))
    return Mapped.join(out)
