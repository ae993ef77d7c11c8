"""``claimscope structured``: build, verify, store and print a structured document's
lead → body → source support (core/pipeline/structured_doc.py, core/score/structured.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.text import Text


def run_structured(workbench, db, document: Path, source: list[str] | None, verifier_spec: str, grounding: bool,
                   as_json: bool) -> dict:
    from core.errors import InputError
    from core.ingest.sources import read_text_file
    from core.pipeline.given import load_given_files, store_given
    from core.pipeline.structured_doc import (
        build_document,
        parse_markdown,
        parse_source_options,
        report_dict,
        resolve_sources,
        store_structured,
    )
    from core.score.structured import verify_document
    from core.workbench import RunOptions

    document = document.expanduser()
    if not document.exists():
        raise InputError("no such file", document)
    if document.is_dir():
        raise InputError("is a directory, expected a .md or .txt document", document)
    text = read_text_file(document)
    if not text.strip():
        raise InputError("is empty", document)
    try:
        md = parse_markdown(text)
    except InputError as exc:
        raise InputError(str(exc), document) from None
    files = resolve_sources(md, parse_source_options(source), document.parent)
    splitter = workbench.splitter()
    doc, _ = build_document(text, files, splitter, md)
    # PeopleProfiles defines support by the NLI scores and thresholds (core/score/structured.py),
    # so structured runs keep the threshold rule rather than the learned verdicts.
    options = RunOptions.from_settings(workbench.settings).with_(verifier=verifier_spec, grounding=grounding,
                                                                 verdict_rule="rules")
    verifier = workbench.verifier(options)
    report = report_dict(verify_document(doc, verifier, splitter), doc)
    report["document"] = {"path": str(document), "title": md.title,
                          "sources": {str(n): (str(p) if p else None) for n, p in files.items()}}
    given = store_given(db, load_given_files([p for p in files.values() if p is not None]), splitter) if any(files.values()) else []
    run_id = store_structured(db, text, report, verifier, given)
    report["run_id"] = run_id
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        print_structured(report)
    return report


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _num(x) -> str:
    return "  —  " if x is None else f"{x:+.2f}"


def structured_lines(report: dict) -> list[Text]:
    """The report as lines of Rich text: the CLI prints them, the workbench's screen shows them."""
    lines: list[Text] = []
    doc = report.get("document") or {}
    lines.append(Text(f"run {report.get('run_id', '')}  {doc.get('title') or doc.get('path', '')}: structured support",
                      style="bold"))
    lines.append(Text(f"  unsupported lead claims {_pct(report['unsupported_lead'])}  ·  unsupported body claims "
                      f"{_pct(report['unsupported_body'])}  ·  lead claims grounded out in sources "
                      f"{_pct(report['grounded_out'])}"))
    mp = report["mean_propagated"]
    lines.append(Text("  mean propagated (sentence-set): " + "  ".join(f"{k} {_num(v)}" for k, v in mp.items()),
                      style="dim"))
    missing = [n for n, ok in report["sources"].items() if not ok]
    if missing:
        lines.append(Text(f"  sources without text (claims citing only them are not scored): {', '.join(missing)}",
                          style="yellow"))
    for c in report["lead"]:
        line = Text(f" {c['idx'] + 1:>2}. ")
        style = "green" if c["label"] == "supported" else "red" if c["label"] == "refuted" else "dim"
        line.append(f"{c['label']:<16}", style=style)
        line.append(f"{_num(c['score'])}  {c['text']}")
        lines.append(line)
        lines.append(Text("      propagated: " + "  ".join(f"{k} {_num(v)}" for k, v in c["propagated"].items()),
                          style="dim"))
        for ev in c["evidence"]:
            cites = "".join(f"[{n}]" for n in ev["citations"]) or "(uncited)"
            lines.append(Text(f"      ← {ev['section'] or 'body'}: {ev['text'][:160]} {cites}", style="cyan"))
            for bc in ev["claims"]:
                source = f"source: {' '.join(bc['evidence'][:140].split())}" if bc["evidence"] else ""
                lines.append(Text(f"          {bc['label'] or 'no source':<16}{_num(bc['score'])}  {source}", style="dim"))
    return lines


def print_structured(report: dict) -> None:
    from tui.console import out

    for line in structured_lines(report):
        out.print(line)
