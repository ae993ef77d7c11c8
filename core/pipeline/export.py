"""Export a stored run to JSONL, CSV or a Markdown report (TUI export screen and
``claimscope runs export``). Reads only the store; no model is run.

- JSONL: one object per claim with its verdict, probabilities, human annotation, every
  evidence passage (retrieval scores and ranks, each NLI judgement, its ACU once scored) and,
  apart from the evidence, the query expansion it was retrieved with and its leakage-audit
  result — lossless for analysis.
- CSV: one row per claim with the deciding evidence — for spreadsheets.
- Markdown: a readable report: scores, the claims table, and each claim's deciding sentence.
- HTML: one self-contained page for people who do not run a terminal
  (core/pipeline/report_html.py); a batch of runs gets a summary page plus one page per run.
Files are written to a temp name and renamed, so an interrupted export leaves no half file.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import asdict
from pathlib import Path

import sqlite_utils

from core.errors import InputError, NotFoundError
from store import runs as rq
from store.inspect import ClaimView, claim_view, run_claim_views

FORMATS = {"jsonl": ".jsonl", "csv": ".csv", "md": ".md", "html": ".html"}


def _claims(db: sqlite_utils.Database, run_id: int) -> list[ClaimView]:
    if rq.get_run(db, run_id) is None:
        raise NotFoundError(f"no run {run_id}")
    return [claim_view(db, c.id) for c in run_claim_views(db, run_id)]


def _deciding(c: ClaimView) -> tuple[dict | None, dict | None]:
    """(evidence, judgement) that decided the verdict, as plain dicts."""
    for e in c.evidence:
        for j in e.judgements:
            if j.id == c.deciding_judgement_id:
                return asdict(e) | {"judgements": None}, asdict(j)
    return None, None


def to_jsonl(db: sqlite_utils.Database, run_id: int) -> str:
    lines = []
    for c in _claims(db, run_id):
        item = asdict(c)
        item["run_id"] = run_id
        lines.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")


CSV_COLUMNS = (
    "run_id", "idx", "claim", "span_start", "span_end", "checkable", "note", "verdict", "support",
    "p_entailment", "p_neutral", "p_contradiction", "evidence_title", "evidence_doc_id", "evidence_url",
    "evidence_source", "evidence_text", "human_label", "human_judgement", "original_text",
    "expansion_method", "expansion_matched", "claim_date",
)


def to_csv(db: sqlite_utils.Database, run_id: int) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for c in _claims(db, run_id):
        ev, j = _deciding(c)
        probs = j["probs"] if j else (None, None, None)
        w.writerow([
            run_id, c.idx, c.text, *(c.span or (None, None)), int(c.checkable), c.note, c.verdict, c.support,
            *probs, ev and ev["title"], ev and ev["doc_id"], ev and ev["url"], ev and ev["source"],
            j and j["text"], c.human_label, c.human_judgement, c.original_text,
            c.expansion.method if c.expansion else None, c.expansion_matched, c.claim_date,
        ])
    return buf.getvalue()


def _md_cell(text: object) -> str:
    return str("" if text is None else text).replace("|", "\\|").replace("\n", " ")


def to_markdown(db: sqlite_utils.Database, run_id: int) -> str:
    run = rq.get_run(db, run_id)
    claims = _claims(db, run_id)
    scores = rq.run_scores(db, run_id)
    out = [f"# claimscope run {run_id}", "", f"- created: {run.created_at}", f"- status: {run.status}"]
    if run.external_id:
        out.append(f"- input id: {run.external_id}")
    cfg = run.config
    out.append(f"- configuration: `{json.dumps(cfg, sort_keys=True)}`")
    models = db.execute("SELECT role, model_id, sha256 FROM model_manifest WHERE run_id = ?", [run_id]).fetchall()
    for role, model_id, sha in models:
        out.append(f"- {role}: {model_id}" + (f" (sha256 {sha[:12]}…)" if sha else ""))
    out += ["", "## Scores", "", "| score | value |", "|---|---|"]
    for kind, s in sorted(scores.items()):
        value = s["value"]
        out.append(f"| {kind} | {value:.3f} |" if isinstance(value, float) else f"| {kind} | {_md_cell(value)} |")
    out += ["", "## Input", "", *(f"> {line}" for line in run.input_text.splitlines() or [""]), ""]
    out += ["## Claims", "", "| # | claim | verdict | support | human |", "|---|---|---|---|---|"]
    for c in claims:
        verdict = c.verdict or (f"not checkable ({c.note})" if not c.checkable else c.status)
        support = f"{c.support:+.2f}" if c.support is not None else ""
        human = c.human_label or c.human_judgement or ""
        out.append(f"| {c.idx + 1} | {_md_cell(c.text)} | {verdict} | {support} | {human} |")
    out += ["", "## Evidence", ""]
    for c in claims:
        ev, j = _deciding(c)
        if ev is None:
            continue
        p = j["probs"]
        out += [
            f"### {c.idx + 1}. {c.text}", "",
            f"**{c.verdict}** — {ev['title']} ({ev['source']}:{ev['doc_id']})" + (f" <{ev['url']}>" if ev["url"] else ""),
            "", f"> {j['text']}", "",
            f"P(entail) {p[0]:.2f} · P(neutral) {p[1]:.2f} · P(contradict) {p[2]:.2f}", "",
        ]
    return "\n".join(out) + "\n"


def to_html(db: sqlite_utils.Database, run_id: int) -> str:
    from core.pipeline.report_html import run_html

    return run_html(db, run_id)


WRITERS = {"jsonl": to_jsonl, "csv": to_csv, "md": to_markdown, "html": to_html}


def export_run(db: sqlite_utils.Database, run_id: int, fmt: str, path: Path) -> Path:
    """Write the run in ``fmt`` to ``path`` atomically; returns the path written."""
    if fmt not in WRITERS:
        raise InputError(f"unknown export format {fmt!r} (jsonl, csv, md or html)")
    path = _target(path)
    _write(path, WRITERS[fmt](db, run_id))
    return path


def _target(path: Path) -> Path:
    path = path.expanduser()
    if path.is_dir():
        raise InputError("is a directory, expected a file name", path)
    if not path.parent.is_dir():
        raise InputError("folder does not exist", path.parent)
    return path


def _write(path: Path, body: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(body, encoding="utf-8", newline="")
    os.replace(tmp, path)


def batch_run_path(path: Path, run_id: int) -> Path:
    """Where a batch page's run report goes: next to the page, named after it."""
    return path.with_name(f"{path.stem}-run-{run_id}.html")


def export_batch(db: sqlite_utils.Database, run_ids: list[int], path: Path) -> list[Path]:
    """An HTML batch page at ``path`` (distribution of per-answer precision, a row per run)
    and each run's own report next to it (:func:`batch_run_path`), linked from its row.
    Every run is checked first, so a missing one writes nothing. Returns the paths written,
    the batch page first."""
    from core.pipeline.report_html import batch_html, run_html

    if not run_ids:
        raise InputError("no runs to export")
    path = _target(path)
    for rid in run_ids:
        if rq.get_run(db, rid) is None:
            raise NotFoundError(f"no run {rid}")
    pages = {batch_run_path(path, rid): run_html(db, rid) for rid in dict.fromkeys(run_ids)}
    page = batch_html(db, list(dict.fromkeys(run_ids)), lambda rid: batch_run_path(path, rid).name)
    for p, body in pages.items():
        _write(p, body)
    _write(path, page)
    return [path, *pages]
