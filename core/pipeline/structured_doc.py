"""Structured documents from Markdown / text (``claimscope structured DOC``): the entry point
to PeopleProfiles' lead → body → source support (core/score/structured.py, seed 003 §4.2–4.4).

Document layout (Wikipedia-style):

* ``# Title`` (optional), then the **lead**: everything before the first ``##`` heading
  (in a text file without headings: the first paragraph);
* **body** sections: each ``## Heading`` and its text (without headings: each further
  paragraph), with ``[n]`` citation markers;
* a **reference list**: a section titled References / Sources / Notes / Bibliography (or
  the lines ``[n] …`` / ``n. …`` after such a line) — its numbers are the citation ids.

The referenced sources are files: ``--source N=FILE`` (as ``check --against``: .txt / .md,
or .jsonl whose lines are joined), or a reference line that names an existing file relative
to the document's folder. A reference without a file is unavailable: body claims citing
only it get no score (core/score/structured.py, NULL not 0).

The run is stored like any other (the document as its input text; the sources as given
documents, hash-deduplicated, core/pipeline/given.py) with the whole report as its ``structured``
score, valued at the share of unsupported lead claims.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.decompose.citations import find_markers
from core.errors import InputError
from core.score.structured import StructuredDoc, StructuredReport, parse_document
from models.nlp import SentenceSplitter

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_REF_TITLES = {"references", "sources", "notes", "bibliography", "citations", "works cited"}
_AFTER_MARKER = re.compile(r"([.!?][\"')\]]?(?:\[\d[\d,\s\-–]*\])+)[ \t]+")
_REF_LINE = re.compile(r"^\s*(?:\[(\d+)\]|(\d+)[.)])\s*(.*)$")


@dataclass
class MarkdownDoc:
    title: str
    lead: str
    sections: list[tuple[str, str]]  # (heading, text)
    references: dict[int, str]  # n → the reference line's text


def parse_markdown(text: str) -> MarkdownDoc:
    """Split a Markdown / text document into title, lead, body sections and references."""
    title, lead_lines, sections, refs = "", [], [], {}
    current: list[str] | None = None  # None: still in the lead
    heading = ""
    in_refs = False
    paragraphs_mode = not any(_HEADING.match(ln) and len(_HEADING.match(ln).group(1)) >= 2 for ln in text.splitlines())
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m and len(m.group(1)) == 1 and not title and current is None and not any(x.strip() for x in lead_lines):
            title = m.group(2)
            continue
        if m or line.strip().rstrip(":").lower() in _REF_TITLES:
            name = m.group(2) if m else line.strip().rstrip(":")
            if current is not None and not in_refs:
                sections.append((heading, "\n".join(current)))
            in_refs = name.strip().lower() in _REF_TITLES
            heading, current = name, []
            continue
        if in_refs:
            r = _REF_LINE.match(line)
            if r:
                refs[int(r.group(1) or r.group(2))] = r.group(3).strip()
            continue
        if current is None:
            lead_lines.append(line)
        else:
            current.append(line)
    if current is not None and not in_refs:
        sections.append((heading, "\n".join(current)))
    lead = "\n".join(lead_lines).strip()
    if paragraphs_mode and not sections:
        paras = [p.strip() for p in re.split(r"\n\s*\n", lead) if p.strip()]
        if len(paras) > 1:
            lead, sections = paras[0], [("", p) for p in paras[1:]]
    sections = [(h, t.strip()) for h, t in sections if t.strip()]
    if not lead:
        raise InputError("the document has no lead (text before the first ## section)")
    if not sections:
        raise InputError("the document has no body (## sections, or paragraphs after the lead)")
    return MarkdownDoc(title, lead, sections, refs)


def _sentences(text: str, splitter: SentenceSplitter) -> list[str]:
    """Sentences with their trailing ``[n]`` markers kept ("… 1889.[1] Next" → "… 1889.[1]")."""
    from core.pipeline.given import split_given

    # "… actor.[1] Flaherty had …": spaCy keeps "actor.[1]" as one token, so cut there first.
    text = _AFTER_MARKER.sub(r"\1\n", text)
    spans = split_given(text, splitter)
    out: list[str] = []
    for s, e in spans:
        sent = text[s:e].strip()
        lead = re.match(r"^((?:\[\d[\d,\s\-–]*\]\s*)+)", sent)
        if lead and out and find_markers(lead.group(1)):  # markers the splitter put at the next sentence's start
            out[-1] += " " + lead.group(1).strip()
            sent = sent[lead.end():].strip()
        if sent:
            out.append(sent)
    return out


def resolve_sources(md: MarkdownDoc, given: dict[int, Path], base: Path | None) -> dict[int, Path | None]:
    """Citation id → file: ``--source N=FILE`` first, else a reference line naming an existing
    file relative to the document's folder. Every cited or listed id gets an entry."""
    ids = set(md.references) | set(given)
    for _, text in md.sections:
        for m in find_markers(text):
            ids.update(m.ids)
    out: dict[int, Path | None] = {}
    for n in sorted(ids):
        if n in given:
            out[n] = given[n]
            continue
        ref = md.references.get(n, "")
        found = None
        if base is not None:
            for token in re.findall(r"[\w./\\-]+\.(?:txt|md|markdown|jsonl)\b", ref):
                candidate = (base / token).expanduser()
                if candidate.is_file():
                    found = candidate
                    break
        out[n] = found
    return out


def build_document(text: str, source_files: dict[int, Path | None], splitter: SentenceSplitter,
                   md: MarkdownDoc | None = None) -> tuple[StructuredDoc, dict[int, Any]]:
    """The :class:`StructuredDoc` core/score/structured.py verifies, and the loaded source records."""
    from core.pipeline.given import load_given_files

    md = md or parse_markdown(text)
    records: dict[int, Any] = {}
    sources: dict[str, str | None] = {}
    for n, path in source_files.items():
        if path is None:
            sources[str(n)] = None
            continue
        docs = load_given_files([path])
        text_n = "\n\n".join(d.text for d in docs)
        records[n] = docs[0] if len(docs) == 1 else type(docs[0])(docs[0].ext_id, docs[0].title, text_n)
        sources[str(n)] = text_n
    obj = {
        "lead": _sentences(md.lead, splitter),
        # The page title leads each section title: the grounding guard accepts evidence whose
        # title names the claim's subject ("Lanny Flaherty: Early life").
        "body": [{"title": ": ".join(x for x in (md.title, h) if x), "sentences": _sentences(t, splitter)}
                 for h, t in md.sections],
        "sources": sources,
    }
    return parse_document(obj, "document"), records


def report_dict(report: StructuredReport, doc: StructuredDoc) -> dict:
    """The report as stored in the run's ``structured`` score and printed with ``--json``."""
    body_by_id = {b.id: b for b in doc.body}
    return {
        "unsupported_lead": report.unsupported_lead,
        "unsupported_body": report.unsupported_body,
        "grounded_out": report.grounded_out,
        "mean_propagated": report.mean_propagated,
        "lead": [
            {**asdict(c), "evidence": [
                {"body_sentence": b, "section": doc.sections[body_by_id[b].section], "text": body_by_id[b].text,
                 "citations": list(body_by_id[b].citations),
                 "claims": [{"text": bc.text, "score": bc.score, "label": bc.label, "evidence": bc.evidence}
                            for bc in report.body if bc.sentence == b]}
                for b in c.evidence_sentences
            ]}
            for c in report.lead
        ],
        "body": [asdict(c) for c in report.body],
        "sources": {str(n): (t is not None) for n, t in doc.sources.items()},
    }


def store_structured(db: Any, text: str, report: dict, verifier: Any, given: list[Any]) -> int:
    """One run holding the document, its sources (as given documents) and the report."""
    from store import runs as rq
    from store.db import write_tx

    config = {
        "kind": "structured", "thresholds": asdict(verifier.t), "nli": verifier.nli.ref.model_id,
        "against": [{"document_id": d.document_id, "sha256": d.sha256, "title": d.title, "name": d.ext_id}
                    for d in given],
    }
    with write_tx(db):
        run_id = rq.create_run(db, text, config)
        rq.add_manifest(db, run_id, [verifier.nli.ref.manifest()], asdict(verifier.t))
        rq.set_score(db, run_id, "structured", report["unsupported_lead"], report)
        rq.set_run_status(db, run_id, "done")
    return run_id


def parse_source_options(values: list[str] | None) -> dict[int, Path]:
    """``["1=a.txt", "2=b.md"]`` → {1: Path("a.txt"), …}; a bad option is an input error."""
    out: dict[int, Path] = {}
    for v in values or []:
        n, sep, path = v.partition("=")
        if not sep or not n.strip().strip("[]").isdigit() or not path.strip():
            raise InputError(f"--source {v!r}: expected N=FILE (e.g. --source 1=refs/one.txt)")
        p = Path(path.strip()).expanduser()
        if not p.exists():
            raise InputError("no such file", p)
        out[int(n.strip().strip("[]"))] = p
    return out
