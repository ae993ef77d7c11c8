"""The ``claimscope`` command line (Typer). It drives the same core as the TUI.

Exit codes: 0 success · 1 unexpected failure · 2 bad input or usage · 3 not found ·
4 database problem · 5 model problem · 130 interrupted.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated

import typer

EXIT_CODES_HELP = (
    "Exit codes: 0 success, 1 unexpected failure, 2 bad input or usage, 3 not found, "
    "4 database problem, 5 model problem, 130 interrupted."
)

app = typer.Typer(
    name="claimscope",
    help="claimscope — claim verification workbench: decompose, retrieve, verify, score. Offline.",
    epilog=EXIT_CODES_HELP,
    invoke_without_command=True,  # no command: open the workbench (TUI)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
source_app = typer.Typer(help="Manage knowledge sources (index, list, remove).", no_args_is_help=True)
eval_app = typer.Typer(help="Benchmarks: quality and speed figures on public datasets.", no_args_is_help=True)
runs_app = typer.Typer(help="Stored runs: list them, show one.", no_args_is_help=True)
app.add_typer(source_app, name="source")
app.add_typer(runs_app, name="runs")
app.add_typer(eval_app, name="eval")


class State:
    """Per-invocation options from the top-level callback (no global state in the core)."""

    def __init__(self) -> None:
        self.db_path: Path | None = None
        self.config: Path | None = None


def _state(ctx: typer.Context) -> State:
    if not isinstance(ctx.obj, State):
        ctx.obj = State()
    return ctx.obj


@app.callback()
def _main(
    ctx: typer.Context,
    db: Annotated[
        Path | None, typer.Option("--db", help="Database file (default: user data dir; env CLAIMSCOPE_DB).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Settings TOML file (env CLAIMSCOPE_CONFIG).")
    ] = None,
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Idle OpenMP threads sleep instead of spin-waiting: on a loaded 2-core machine spinning
    # threads steal each other's CPU (measured: training 7 → 21 examples/s under load).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    st = _state(ctx)
    st.db_path, st.config = db, config
    if ctx.invoked_subcommand is None:
        ctx.invoke(tui, ctx=ctx)


def handle_errors(fn):
    """Turn every error the user can act on into one line on stderr and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from core.errors import ClaimscopeError
        from models.registry import ModelError
        from store.db import StoreError

        def err_line(text: str) -> None:  # one line, never wrapped, whatever the terminal
            print(text.replace("\n", " "), file=sys.stderr, flush=True)

        try:
            return fn(*args, **kwargs)
        except ClaimscopeError as exc:
            err_line(f"claimscope: error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except StoreError as exc:
            err_line(f"claimscope: database error: {exc}")
            raise typer.Exit(4) from None
        except sqlite3.Error as exc:  # e.g. a disk full, or a file damaged after it was opened
            err_line(f"claimscope: database error: {exc}")
            raise typer.Exit(4) from None
        except ModelError as exc:
            err_line(f"claimscope: model error: {exc}")
            raise typer.Exit(5) from None
        except KeyboardInterrupt:
            err_line("claimscope: interrupted; nothing half-written was kept")
            raise typer.Exit(130) from None

    return wrapper


def _settings(ctx: typer.Context):
    from core.settings import load_settings

    st = _state(ctx)
    settings = load_settings(st.config)
    return settings.with_overrides(db_path=st.db_path)


def _db(ctx: typer.Context):
    from store import open_db

    return open_db(_settings(ctx).db_path)


def _workbench(ctx: typer.Context):
    """The stages the settings describe (the TUI builds its runs from the same object)."""
    from core.workbench import Workbench

    return Workbench(_settings(ctx))


def _verifier(ctx: typer.Context, spec: str, grounding: bool = True):
    """The verifier with the settings' thresholds and the grounding guard (evidence must
    mention the claim's subject): an NLI cross-encoder, or an LLM judge for ``llm`` / a
    ``.gguf`` path (models/llm_judge.py)."""
    from core.workbench import RunOptions

    wb = _workbench(ctx)
    return wb.verifier(RunOptions.from_settings(wb.settings).with_(verifier=spec.strip(), grounding=grounding))


GROUNDING_HELP = "Only evidence that names the claim's subject (in its text or document title) decides."
MODE_HELP = "Retrieval: bm25, dense, hybrid (RRF), or with an LLM query expansion: hyde or query2doc."
PROMPT_HELP = "HyDE prompt preset: encyclopedic, scientific or factcheck (default: the settings'; Query2doc has its own)."
EXPAND_LLM_HELP = "GGUF model writing hyde / query2doc expansions: embedded (SmolLM2) or a .gguf path."


def _expander(ctx: typer.Context, mode: str, prompt: str | None, llm: str | None):
    """The query expander of an expansion mode (None for the others), built like the TUI's."""
    from core.workbench import Workbench

    return Workbench(_settings(ctx).with_overrides(hyde_prompt=prompt, llm=llm)).expander(mode)


def raise_input(message: str):
    """Bad command-line input: reported like any other input error (exit code 2)."""
    from core.errors import InputError

    raise InputError(message)


def _embedder_factory(spec: str):
    """A loader called only when a model is needed (``claimscope --help`` imports no torch)."""
    from functools import partial

    from models.embed import load_embedder

    return partial(load_embedder, spec)


def _llm_factory(spec: str):
    from functools import partial

    from models.llm import load_llm

    return partial(load_llm, spec)


# ---------------------------------------------------------------- sources


@source_app.command("add")
@handle_errors
def source_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Source name; 'wiki-vital' without PATH indexes the built-in source.")],
    path: Annotated[Path | None, typer.Argument(help="File or folder to index.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="auto, jsonl, scifact, folder or csv.")
    ] = "auto",
    text_column: Annotated[str, typer.Option(help="CSV: column holding the text.")] = "text",
    title_column: Annotated[str, typer.Option(help="CSV: column holding the title.")] = "title",
    id_column: Annotated[str, typer.Option(help="CSV: column holding the document id.")] = "id",
    url_column: Annotated[str, typer.Option(help="CSV: column holding the URL.")] = "url",
) -> None:
    """Index a knowledge source (re-adding a changed file re-indexes only what changed)."""
    from core.index import add_source
    from core.sources import BUILTINS, CsvColumns, load_builtin, load_documents
    from models.nlp import SpacySentenceSplitter
    from tui.console import err, progress_bar

    settings = _settings(ctx)
    if path is None:
        if name not in BUILTINS:
            raise_input(f"PATH is required (only built-in sources need none: {', '.join(BUILTINS)})")
        builtin = BUILTINS[name]
        docs, fmt_used, where, attribution, licence = load_builtin(name), "builtin", None, builtin.attribution, builtin.licence
    else:
        cols = CsvColumns(text=text_column, title=title_column, id=id_column, url=url_column)
        docs = load_documents(path, fmt, cols)
        fmt_used = fmt if fmt != "auto" else _detected(path)
        where, attribution, licence = str(path.expanduser().resolve()), None, None
    db = _db(ctx)
    embedder = _embedder_factory(settings.embedder)()  # a bad model is reported before any progress output
    err.print(f"indexing {len(docs)} documents into source {name!r} …")
    with progress_bar() as update:
        report = add_source(
            db,
            name,
            docs,
            fmt=fmt_used,
            path=where,
            embedder=embedder,
            splitter=SpacySentenceSplitter(),
            attribution=attribution,
            licence=licence,
            chunk_words=settings.chunk_words,
            chunk_overlap=settings.chunk_overlap,
            progress=update,
        )
    err.print(
        f"source {name}: {report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged; {report.passages_added} new passages "
        f"({report.passages_embedded} embedded, the rest from the cache) in {report.seconds:.1f} s"
    )


def _detected(path: Path) -> str:
    from core.sources import detect_format

    return detect_format(path.expanduser())


@source_app.command("list")
@handle_errors
def source_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List indexed sources with their sizes, attribution and licence."""
    from rich.table import Table

    from store.sources import list_sources
    from tui.console import out

    sources = list_sources(_db(ctx))
    if as_json:
        out.print_json(data=[s.__dict__ for s in sources])
        return
    if not sources:
        out.print("no sources yet: `claimscope source add wiki-vital` indexes the built-in one")
        return
    table = Table("name", "format", "documents", "passages", "index s", "licence", "attribution / path")
    for s in sources:
        table.add_row(
            s.name,
            s.format,
            str(s.n_documents),
            str(s.n_passages),
            f"{s.index_seconds:.1f}" if s.index_seconds else "",
            s.licence or "",
            s.attribution or s.path or "",
        )
    out.print(table)


@source_app.command("remove")
@handle_errors
def source_remove(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Source to remove.")]) -> None:
    """Remove a source, its passages and its vector index."""
    from core.index import remove_source
    from tui.console import err

    remove_source(_db(ctx), name)
    err.print(f"removed source {name}")


def _searcher(ctx: typer.Context, db, sources: list[str] | None):
    """A Searcher over ``db``; built-in sources that are asked for (or, on an empty database,
    the default wiki-vital) are indexed on first use, with a progress bar, then reused."""
    from core.retrieve import Searcher
    from tui.console import err, progress_bar

    wb = _workbench(ctx)
    missing = wb.missing_builtins(db, tuple(sources or ()))
    if missing:
        err.print(f"first use of the built-in source {', '.join(missing)}: indexing it once (a few minutes on 2 cores)")
        with progress_bar() as update:
            wb.ensure_sources(db, tuple(sources or ()), progress=update)
    return Searcher(db, wb.embedder, rrf_k=wb.settings.rrf_k)


# ---------------------------------------------------------------- search


@app.command()
@handle_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (a claim or question).")],
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Source name (repeatable; default: all).")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", "-m", help=MODE_HELP)] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="Number of passages.")] = 10,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per passage on stdout.")] = False,
) -> None:
    """Ranked passages with title, each retriever's score and rank, and the best-matching
    sentence. With --mode hyde / query2doc the LLM's pseudo-document is shown on stderr,
    marked as generated: it shapes the query and is never evidence."""
    from core.settings import check_text_size

    check_text_size(query, "the query")
    db = _db(ctx)
    searcher = _searcher(ctx, db, source)
    expander = _expander(ctx, mode, prompt, llm)
    expansion = expander.expand(query, db) if expander is not None else None
    if expansion is not None:
        print_expansion(expansion)
    hits = searcher.search(query, k=k, mode=mode, sources=source, expansion=expansion)
    print_hits(hits, mode, as_json, searcher)


def print_expansion(expansion, matched: bool | None = None) -> None:
    """The generated pseudo-document(s) on stderr, labelled as generated text."""
    from rich.text import Text

    from tui.console import err

    cached = ", cached" if expansion.cached else f", {expansion.seconds:.1f} s"
    err.print(Text(f"{expansion.method} expansion by {expansion.model.get('model_id')} ({expansion.preset} prompt{cached}) "
                   "— generated text, not evidence:", style="bold yellow"))
    for doc in expansion.documents:
        err.print(Text("  " + doc.replace("\n", " "), style="dim italic"))
    if matched is not None:
        err.print(Text("  leakage audit: the expansion already states the retrieved evidence" if matched
                       else "  leakage audit: no generated sentence is entailed by the retrieved evidence",
                       style="yellow" if matched else "dim"))


def print_hits(hits, mode: str, as_json: bool, searcher) -> None:
    from rich.text import Text

    from store.sources import get_source
    from tui.console import err, out

    if as_json:
        for h in hits:
            sys.stdout.write(
                json.dumps(
                    {
                        "rank": h.rank,
                        "source": h.passage.source,
                        "doc_id": h.passage.doc_ext_id,
                        "title": h.passage.title,
                        "url": h.passage.url,
                        "passage_id": h.passage.id,
                        "scores": h.scores,
                        "ranks": h.ranks,
                        "sentence": h.sentence_text,
                        "text": h.passage.text,
                    }
                )
                + "\n"
            )
        return
    if not hits:
        err.print("no passages matched")
        return
    for h in hits:
        parts = [f"{mode} {h.score:.4g}"] + [
            f"{name} {h.scores[name]:.4g} (#{h.ranks[name]})" for name in h.scores if name != mode
        ]
        line = Text(f"{h.rank:>2}. ", style="bold")
        line.append(h.passage.title or "(untitled)", style="bold cyan")
        line.append(f"  [{h.passage.source}:{h.passage.doc_ext_id}]  ", style="dim")
        line.append(" · ".join(parts), style="dim")
        out.print(line)
        if h.sentence_text:
            out.print(Text("    › " + h.sentence_text, style="green"))
    notes = {h.passage.source for h in hits}
    for name in sorted(notes):
        info = get_source(searcher.db, name)
        if info and info.licence:
            err.print(f"[{name}] {info.licence}, {info.attribution}", markup=False)


# ---------------------------------------------------------------- decompose


@app.command()
@handle_errors
def decompose(
    text: Annotated[str | None, typer.Argument(help="The text to split into claims.")] = None,
    decomposer: Annotated[str, typer.Option(help="rules (atomic, decontextualised), sentence, or llm (GGUF model).")] = "rules",
    jsonl: Annotated[Path | None, typer.Option(help="Batch: one JSON object per line with 'text' and optional 'id'; JSONL out.")] = None,
    llm: Annotated[str, typer.Option(help="GGUF model for --decomposer llm: embedded or a path to a .gguf file.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per claim.")] = False,
) -> None:
    """Split a text into claims, each with its character span; questions, abstentions,
    opinions and advice are kept but marked not checkable. With --jsonl, every input line
    gives one output line per claim, tagged with the input's id."""
    from rich.text import Text

    from core.decompose import make_decomposer
    from models.nlp import SpacySentenceSplitter
    from tui.console import err, out

    if (text is None) == (jsonl is None):
        raise_input("give either a text or --jsonl FILE")
    if text is not None and not text.strip():
        raise_input("the text is empty")
    items = _check_inputs(text, None, jsonl)  # also refuses a text over the size limit
    dec = make_decomposer(decomposer, SpacySentenceSplitter, llm_spec=llm)
    for ext_id, body in items:
        claims = dec.decompose(body)
        for warning in getattr(dec, "warnings", []):
            err.print(f"claimscope: warning: {'input ' + str(ext_id) + ': ' if ext_id else ''}{warning}", markup=False)
        for c in claims:
            if as_json or jsonl is not None:
                obj = {"idx": c.idx, "text": c.text, "span": list(c.span), "checkable": c.checkable,
                       "note": c.note, "context": c.context}
                sys.stdout.write(json.dumps({"id": ext_id, **obj} if jsonl is not None else obj) + "\n")
                continue
            line = Text(f"{c.idx + 1:>3}. ")
            line.append(c.text, style="" if c.checkable else "dim")
            if not c.checkable:
                line.append(f"  [not checkable: {c.note}]", style="yellow")
            elif c.note:
                line.append(f"  [{c.note}]", style="dim")
            out.print(line)


# ---------------------------------------------------------------- verify


@app.command()
@handle_errors
def verify(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim to verify.")],
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Source name (repeatable; default: all).")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", "-m", help=MODE_HELP)] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Passages to verify against.")] = 10,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a local folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Verify one claim against a knowledge source: verdict, signed support score, evidence.
    With --mode hyde / query2doc the expansion is audited for leakage against the evidence."""
    from core.pipeline import verify_claim
    from core.settings import check_text_size

    check_text_size(claim, "the claim")
    db = _db(ctx)
    searcher = _searcher(ctx, db, source)
    expander = _expander(ctx, mode, prompt, llm)
    splitter = _workbench(ctx).splitter() if expander is not None else None
    result = verify_claim(db, searcher, _verifier(ctx, verifier, grounding), claim, sources=source, k=k, mode=mode,
                          expander=expander, splitter=splitter)
    if result.expansion is not None and not as_json:
        print_expansion(result.expansion, result.leakage.matched if result.leakage else None)
    print_verdict(result, as_json)


VERDICT_STYLE = {"supported": "bold green", "refuted": "bold red", "not_enough_info": "bold", "conflicting": "bold yellow"}


def print_verdict(result, as_json: bool) -> None:
    from rich.text import Text

    from models.nli import LABELS
    from tui.console import out

    v = result.verdict
    by_id = {h.passage.id: h for h in result.hits}
    ranked = sorted(v.judgements, key=lambda j: -max(j.probs[0], j.probs[2]))
    if as_json:
        def pair(j):
            h = by_id[j.unit.passage_id]
            return {
                "doc_id": h.passage.doc_ext_id, "title": h.passage.title, "source": h.passage.source,
                "passage_rank": h.rank, "unit": j.unit.kind, "sentences": list(j.unit.sentences),
                "text": j.unit.text, "probs": dict(zip(LABELS, map(float, j.probs), strict=True)),
                "support": j.support,
            }
        obj = {
            "run_id": result.run_id, "claim": result.claim, "verdict": v.label, "support": v.support,
            "deciding": pair(v.deciding) if v.deciding else None, "pairs": [pair(j) for j in ranked],
        }
        if result.expansion is not None:  # generated text, kept apart from the evidence pairs
            obj["expansion"] = {
                "method": result.expansion.method, "preset": result.expansion.preset,
                "documents": list(result.expansion.documents), "model": result.expansion.model.get("model_id"),
                "matched": result.leakage.matched if result.leakage else None,
            }
        sys.stdout.write(json.dumps(obj) + "\n")
        return
    head = Text("verdict: ")
    head.append(v.label, style=VERDICT_STYLE[v.label])
    head.append(f"   support {v.support:+.2f}   (run {result.run_id})", style="dim")
    out.print(head)
    for j in ranked[:5]:
        h = by_id[j.unit.passage_id]
        mark = "▶" if j is v.deciding else " "
        line = Text(f" {mark} E {j.probs[0]:.2f}  N {j.probs[1]:.2f}  C {j.probs[2]:.2f}  ")
        line.append(f"{h.passage.title} [{h.passage.source}:{h.passage.doc_ext_id}] {j.unit.kind}", style="cyan")
        out.print(line)
        out.print(Text("     " + j.unit.text[:300], style="green" if j is v.deciding else ""))


# ---------------------------------------------------------------- check

CHECK_HELP = (
    "Check a text: split it into claims, retrieve evidence for each, verify, score. "
    "Give the text as an argument, or --file F, or --jsonl F (one object per line with "
    "'text' and optional 'id'; one run per line). Results go to stdout (or --out), progress "
    "to stderr. An interrupted run is kept: finish it with --resume RUN. Re-running the same "
    "--jsonl file resumes it: a line whose id and text already have a run made with the same "
    "settings reuses that run (finishing it if it was interrupted) instead of starting a new one. "
    "A text (or batch line) over 100,000 characters is refused: split it. "
    "Exit codes: 0 done, 2 bad input, 3 unknown run or source, 130 interrupted (resumable)."
)


@app.command(help=CHECK_HELP)
@handle_errors
def check(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="The text to check.")] = None,
    file: Annotated[Path | None, typer.Option("--file", help="Read the text from this file.")] = None,
    jsonl: Annotated[Path | None, typer.Option("--jsonl", help="Batch: JSONL with 'text' (and 'id').")] = None,
    resume: Annotated[int | None, typer.Option("--resume", help="Finish an interrupted run.")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Write JSONL results here.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or jsonl.")] = "table",
    source: Annotated[list[str] | None, typer.Option("--source", "-s", help="Source (repeatable).")] = None,
    mode: Annotated[str, typer.Option("--mode", "-m", help=MODE_HELP)] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Passages per claim.")] = 10,
    decomposer: Annotated[str, typer.Option(help="Decomposer: rules (atomic claims) or sentence.")] = "rules",
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    prompt: Annotated[str | None, typer.Option("--prompt", help=PROMPT_HELP)] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    claim_date: Annotated[
        str | None, typer.Option(help="When the text was written, YYYY[-MM[-DD]]: later evidence is flagged.")
    ] = None,
    against: Annotated[list[Path] | None, typer.Option("--against", help=AGAINST_HELP)] = None,
) -> None:
    from core.decompose import make_decomposer
    from core.pipeline import Pipeline
    from models.nlp import SpacySentenceSplitter
    from store import runs as rq
    from tui.console import err, progress_bar

    if fmt not in ("table", "json", "jsonl"):
        raise_input(f"unknown format {fmt!r} (table, json or jsonl)")
    given = [x is not None for x in (text, file, jsonl, resume)]
    if sum(given) != 1:
        raise_input("give exactly one of: TEXT, --file F, --jsonl F, --resume RUN")
    inputs = _check_inputs(text, file, jsonl)
    settings = _settings(ctx)
    db = _db(ctx)
    if resume is not None and rq.get_run(db, resume) is None:
        from core.errors import NotFoundError

        raise NotFoundError(f"no run {resume} in {settings.db_path}")
    pipeline = _against_pipeline(ctx, db, against, resume, source, mode, decomposer, verifier, grounding)
    if pipeline is None:
        searcher = _searcher(ctx, db, source)
        expander = _expander(ctx, mode, prompt, llm)
        pipeline = Pipeline(
            db, make_decomposer(decomposer, SpacySentenceSplitter), searcher, _verifier(ctx, verifier, grounding),
            sources=source, k=k, mode=mode, expander=expander,
            splitter=_workbench(ctx).splitter() if expander is not None else None,
        )
    sink = out_path.open("w", encoding="utf-8") if out_path else None
    results = []
    run_id = resume
    try:
        with progress_bar() as update:
            def listen(event):
                if event.kind == "run_started":
                    update(f"run {event.run_id}", 0, event.payload["claims"])
                elif event.kind == "verdict_ready":
                    update(f"run {event.run_id}", 1, None)

            for ext_id, body in inputs or [(None, None)]:
                # A batch line already run with the same settings (an earlier, interrupted
                # invocation) is resumed or reused, never started twice.
                prior = rq.find_run(db, ext_id, rq.input_hash(body), pipeline.config()) if jsonl and body else None
                run_id = resume if body is None else (
                    prior.id if prior else pipeline.start(body, ext_id, listen, claim_date=claim_date))
                if prior is not None:
                    update(f"run {run_id}", 0, len(rq.run_claims(db, run_id)))
                if prior is None or prior.status != "done":
                    pipeline.resume(run_id, listen)
                result = {
                    "run_id": run_id, "id": rq.get_run(db, run_id).external_id,
                    "claims": rq.run_results(db, run_id), "scores": rq.run_scores(db, run_id),
                }
                results.append(result)
                if sink:
                    sink.write(json.dumps(result) + "\n")
                    sink.flush()
    except KeyboardInterrupt:
        err.print(f"interrupted: finish with `claimscope check --resume {run_id}`", markup=False)
        raise typer.Exit(130) from None
    finally:
        if sink:
            sink.close()
    _print_check(results, fmt)


AGAINST_HELP = (
    "Check against these documents only (repeatable): .txt/.md = one document per file, .jsonl = one per "
    "line with 'text' and optional 'title', 'id', 'url'. No knowledge source is used; every passage of "
    "the documents is judged. The documents are stored with the run."
)


def _against_pipeline(ctx, db, against, resume, source, mode, decomposer, verifier, grounding):
    """The pipeline of a run against given documents (core/given.py): ``--against`` files,
    or the stored documents of the run being resumed; None for a knowledge-source run."""
    from core.given import given_from_config, given_pipeline, load_given_files
    from core.workbench import RunOptions
    from store import runs as rq

    stored = given_from_config(db, rq.get_run(db, resume).config) if resume is not None else None
    if not against and stored is None:
        return None
    if against and (source or mode != "hybrid"):
        raise_input("--against checks against the given documents only: drop --source / --mode")
    if against and resume is not None:
        raise_input("--resume reuses the run's stored documents: drop --against")
    docs = load_given_files(against) if against else None
    wb = _workbench(ctx)
    options = RunOptions.from_settings(wb.settings).with_(decomposer=decomposer, verifier=verifier.strip(),
                                                           grounding=grounding)
    return given_pipeline(wb, db, options, docs=docs, stored=stored)


def _check_inputs(text, file, jsonl) -> list[tuple[str | None, str]]:
    """(external id, text) per run to create; [] when resuming. Every text is checked here
    (empty, too long, not text) so a bad batch line stops the batch before anything runs."""
    from core.errors import InputError
    from core.settings import check_text_size
    from core.sources import _field, _jsonl_records, read_text_file

    if text is not None:
        if not text.strip():
            raise InputError("the text is empty")
        check_text_size(text, "the text")
        return [(None, text)]
    if file is not None:
        file = file.expanduser()
        if not file.exists():
            raise InputError("no such file", file)
        if file.is_dir():
            raise InputError("is a directory, expected a text file", file)
        body = read_text_file(file)
        if not body.strip():
            raise InputError("is empty", file)
        check_text_size(body, "the text", file)
        return [(file.name, body)]
    if jsonl is not None:
        jsonl = jsonl.expanduser()
        if not jsonl.exists():
            raise InputError("no such file", jsonl)
        items = []
        for lineno, obj in _jsonl_records(jsonl):
            body = obj.get("text")
            if not isinstance(body, str) or not body.strip():
                raise InputError("needs a non-empty string field 'text'", jsonl, lineno)
            check_text_size(body, "field 'text'", jsonl, lineno)
            ext_id = _field(obj, "id", (str, int), jsonl, lineno, required=False)
            items.append((str(lineno if ext_id is None else ext_id), body))
        if not items:
            raise InputError("contains no inputs", jsonl)
        return items
    return []


def _print_check(results: list[dict], fmt: str) -> None:
    from rich.text import Text

    from tui.console import out

    if fmt == "jsonl":
        for r in results:
            sys.stdout.write(json.dumps(r) + "\n")
        return
    if fmt == "json":
        sys.stdout.write(json.dumps(results, indent=2) + "\n")
        return
    for r in results:
        fp = r["scores"].get("factual_precision", {}).get("value")
        score = f"  factual precision {fp:.2f}" if fp is not None else "  (not scored yet)"
        out.print(Text(f"run {r['run_id']}" + (f" ({r['id']})" if r["id"] else "") + score, style="bold"))
        for c in r["claims"]:
            line = Text(f" {c['idx'] + 1:>2}. ")
            label = c["verdict"] or ("not checkable" if not c["checkable"] else c["status"])
            line.append(f"{label:<16}", style=VERDICT_STYLE.get(c["verdict"] or "", "dim"))
            line.append(f"{c['support']:+.2f}  " if c["support"] is not None else "       ")
            line.append(c["text"])
            out.print(line)
            ev = c["evidence"]
            if ev:
                src = "given" if ev["source"] == "_given" else ev["source"]  # core/given.py's reserved source
                body = " ".join(ev["text"][:200].split())
                out.print(Text(f"       ↳ {ev['title']} [{src}:{ev['doc_id']}]: {body}", style="dim"))


@app.command()
@handle_errors
def structured(
    ctx: typer.Context,
    document: Annotated[Path, typer.Argument(help="Markdown or text: lead, ## body sections with [n] markers, references.")],
    source: Annotated[list[str] | None, typer.Option("--source", "-s", help="N=FILE: the text of reference [n] (repeatable).")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Lead → body → source support (PeopleProfiles): each lead sentence with the body sentences that
    support it and, through their citations, the sources; signed scores with mean and product propagation."""
    from tui.structured_view import run_structured

    run_structured(_workbench(ctx), _db(ctx), document, source, verifier.strip(), grounding, as_json)


# ---------------------------------------------------------------- runs


@runs_app.command("list")
@handle_errors
def runs_list(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Past runs, newest first: status, claims, factual precision."""
    from rich.table import Table

    from store.runs import list_runs
    from tui.console import out

    rows = list_runs(_db(ctx), limit)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table("run", "created", "status", "claims", "precision", "input")
    for r in rows:
        fp = r["factual_precision"]
        table.add_row(str(r["id"]), r["created_at"], r["status"], str(r["claims"]),
                      "" if fp is None else f"{fp:.2f}", (r["external_id"] or r["input"])[:60])
    out.print(table)


@runs_app.command("show")
@handle_errors
def runs_show(
    ctx: typer.Context,
    run: Annotated[int, typer.Argument(help="Run id.")],
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    beta: Annotated[float | None, typer.Option(help="Show ICAT with this β (not stored; default: the stored β).")] = None,
) -> None:
    """One stored run: its claims, verdicts, deciding evidence and every stored score (no model is run)."""
    from core.errors import NotFoundError
    from store import runs as rq

    db = _db(ctx)
    row = rq.get_run(db, run)
    if row is None:
        raise NotFoundError(f"no run {run}")
    result = {"run_id": run, "id": row.external_id, "claims": rq.run_results(db, run), "scores": rq.run_scores(db, run)}
    _with_beta(result, beta)
    _print_check([result], "json" if fmt == "json" else "table")
    if fmt != "json":
        _print_scores(result["scores"])


@runs_app.command("export")
@handle_errors
def runs_export(
    ctx: typer.Context,
    run: Annotated[int, typer.Argument(help="Run id.")],
    out_path: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl (lossless), csv or md (report).")] = "md",
) -> None:
    """Export a stored run: JSONL (every claim with all evidence and judgements), CSV (a row
    per claim with its deciding evidence) or a Markdown report."""
    from core.export import export_run
    from tui.console import err

    written = export_run(_db(ctx), run, fmt, out_path)
    err.print(f"exported run {run} to {written}", markup=False)


@runs_app.command("delete")
@handle_errors
def runs_delete(ctx: typer.Context, run: Annotated[int, typer.Argument(help="Run id.")]) -> None:
    """Delete a stored run and everything recorded with it."""
    from core.errors import NotFoundError
    from store.db import write_tx
    from store.inspect import delete_run
    from tui.console import err

    db = _db(ctx)
    with write_tx(db):
        if not delete_run(db, run):
            raise NotFoundError(f"no run {run}")
    err.print(f"deleted run {run}", markup=False)


# ---------------------------------------------------------------- workbench


@app.command()
@handle_errors
def tui(ctx: typer.Context) -> None:
    """Open the workbench (also what `claimscope` alone does)."""
    from core.workbench import Workbench
    from tui.app import ClaimscopeApp

    settings = _settings(ctx)
    ClaimscopeApp(Workbench(settings), settings_path=_state(ctx).config).run()


# ---------------------------------------------------------------- demo


DEMO_ANSWER = (
    "Marie Curie was a Polish-born physicist and chemist. She discovered polonium and radium. "
    "She was the first woman to win a Nobel Prize. The Eiffel Tower is located in Berlin. "
    "Photosynthesis converts light energy into chemical energy."
)


@app.command()
@handle_errors
def demo(ctx: typer.Context) -> None:
    """The main job on the embedded defaults: check a short answer against the built-in
    wiki-vital source (indexed on first use), then show the evidence search behind it."""
    from core.decompose import make_decomposer
    from core.pipeline import Pipeline
    from models.nlp import SpacySentenceSplitter
    from store import runs as rq
    from tui.console import out

    db = _db(ctx)
    searcher = _searcher(ctx, db, ["wiki-vital"])
    out.print(f"[bold]claimscope check[/bold] {json.dumps(DEMO_ANSWER)} --source wiki-vital")
    pipeline = Pipeline(db, make_decomposer("rules", SpacySentenceSplitter), searcher, _verifier(ctx, "embedded"),
                        sources=["wiki-vital"], k=10)
    run_id = pipeline.start(DEMO_ANSWER, "demo")
    pipeline.resume(run_id)
    _print_check([{"run_id": run_id, "id": "demo", "claims": rq.run_results(db, run_id),
                   "scores": rq.run_scores(db, run_id)}], "table")
    q = "Marie Curie discovered radium"
    out.print(f"\n[bold]claimscope search[/bold] {json.dumps(q)} --source wiki-vital --mode hybrid -k 3")
    print_hits(searcher.search(q, k=3, mode="hybrid", sources=["wiki-vital"]), "hybrid", False, searcher)


# ---------------------------------------------------------------- eval


@eval_app.command("retrieval")
@handle_errors
def eval_retrieval(
    ctx: typer.Context,
    claims: Annotated[Path, typer.Option(help="Claims JSONL (SciFact format).")],
    corpus: Annotated[Path, typer.Option(help="Corpus JSONL (SciFact format).")],
    dataset: Annotated[str, typer.Option(help="Dataset format: scifact.")] = "scifact",
    modes: Annotated[
        str, typer.Option(help="Comma-separated: bm25,dense,hybrid,hyde,query2doc.")
    ] = "bm25,dense,hybrid",
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")] = "5,10",
    index_kinds: Annotated[
        str, typer.Option(help="Dense index kinds to compare: flat (exact), hnsw.")
    ] = "flat,hnsw",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="HyDE prompt preset (SciFact: scientific).")] = "scientific",
    max_tokens: Annotated[int, typer.Option(min=1, max=2048, help="Expansion length cap (seed 000: 512).")] = 512,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Document-level recall@k / ndcg@k of each retrieval mode, index build time and query
    latency; hyde / query2doc also report the seconds each expansion took. With --db the
    generated expansions are kept (stage cache) for `eval leakage` on the same database."""
    from core.evaluate.retrieval import evaluate_retrieval, format_table
    from core.expand import ExpansionParams
    from models.nlp import SpacySentenceSplitter
    from tui.console import progress_bar

    settings = _settings(ctx)
    if dataset != "scifact":
        raise_input(f"unknown retrieval dataset {dataset!r} (supported: scifact)")
    with progress_bar() as update:
        report = evaluate_retrieval(
            claims_path=claims,
            corpus_path=corpus,
            modes=[m.strip() for m in modes.split(",") if m.strip()],
            ks=[int(x) for x in k.split(",") if x.strip()],
            index_kinds=[x.strip() for x in index_kinds.split(",") if x.strip()],
            embedder_factory=_embedder_factory(settings.embedder),
            splitter_factory=SpacySentenceSplitter,
            db_path=_state(ctx).db_path,
            limit=limit,
            progress=update,
            llm_factory=_llm_factory(llm or settings.llm),
            hyde_prompt=prompt,
            params=ExpansionParams(max_tokens=max_tokens),
        )
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("leakage")
@handle_errors
def eval_leakage(
    ctx: typer.Context,
    claims: Annotated[Path, typer.Option(help="Claims JSONL (SciFact format, with gold evidence).")],
    corpus: Annotated[Path, typer.Option(help="Corpus JSONL (SciFact format).")],
    methods: Annotated[str, typer.Option(help="Comma-separated: query2doc,hyde.")] = "query2doc,hyde",
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs.")] = "5,10",
    repeats: Annotated[int, typer.Option(min=1, max=16, help="Generations per claim (seed 000: 8), mean ± SE.")] = 1,
    llm: Annotated[str | None, typer.Option(help=EXPAND_LLM_HELP)] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="HyDE prompt preset (SciFact: scientific).")] = "scientific",
    max_tokens: Annotated[int, typer.Option(min=1, max=2048, help="Expansion length cap (seed 000: 512).")] = 512,
    verifier: Annotated[str, typer.Option(help="NLI model labelling (gold evidence, generated sentence) pairs.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    min_entailment: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Also require P(entailment) ≥ this (0: the NLI argmax alone).")
    ] = 0.0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Seed 000's leakage audit (§3.3, Table 4): the share of claims whose expansion already
    states the gold evidence (matched), and recall@k / ndcg@k of each expansion and its
    unexpanded baseline on all, matched and unmatched claims."""
    from core.evaluate.leakage import evaluate_leakage, format_table
    from core.expand import ExpansionParams
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter
    from tui.console import progress_bar

    settings = _settings(ctx)
    nli = load_nli(verifier, device=settings.device)
    with progress_bar() as update:
        report = evaluate_leakage(
            claims_path=claims, corpus_path=corpus, embedder_factory=_embedder_factory(settings.embedder),
            splitter_factory=SpacySentenceSplitter, nli=nli, llm_factory=_llm_factory(llm or settings.llm),
            methods=[m.strip() for m in methods.split(",") if m.strip()],
            ks=[int(x) for x in k.split(",") if x.strip()], hyde_prompt=prompt,
            params=ExpansionParams(max_tokens=max_tokens), repeats=repeats, db_path=_state(ctx).db_path,
            limit=limit, progress=update, min_entailment=min_entailment,
        )
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("verifier")
@handle_errors
def eval_verifier(
    ctx: typer.Context,
    dataset: Annotated[
        str, typer.Option(help="fever-symmetric, vitaminc, scifact, climate-fever, wice or nli.")
    ],
    path: Annotated[Path, typer.Option(help="The dataset file (scifact: the claims JSONL).")],
    corpus: Annotated[Path | None, typer.Option(help="scifact: the corpus JSONL.")] = None,
    split: Annotated[
        str | None, typer.Option(help="vitaminc: 'dev' keeps only the pages the verifier never trained on.")
    ] = None,
    models: Annotated[
        str, typer.Option(help="Comma-separated NLI models: embedded, local folders, cached HF ids.")
    ] = "embedded",
    baselines: Annotated[bool, typer.Option("--baselines", help="Add majority, lexical and cosine baselines.")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the calibration / evaluation split.")] = 0,
    device: Annotated[str, typer.Option(help="cpu or cuda.")] = "cpu",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Accuracy, macro-F1, per-class F1, ECE (before/after temperature) and pairs/s of NLI models vs baselines."""
    import time

    from core.evaluate.verifier import evaluate_verifier, format_table
    from models.nli import load_nli
    from tui.console import progress_bar

    settings = _settings(ctx)
    t0 = time.perf_counter()
    loaded = {name.strip(): load_nli(name.strip(), device=device) for name in models.split(",") if name.strip()}
    load_s = time.perf_counter() - t0
    with progress_bar() as update:
        report = evaluate_verifier(
            dataset=dataset, path=path, corpus=corpus, models=loaded, baselines=baselines, limit=limit,
            embedder_factory=_embedder_factory(settings.embedder) if baselines else None,
            progress=update, seed=seed, split=split, device=device,
        )
    report["timing"]["models_load_s"] = load_s
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("verdicts")
@handle_errors
def eval_verdicts(
    ctx: typer.Context,
    path: Annotated[Path, typer.Option(help="Climate-FEVER dev JSONL (claims with 5 evidence sentences).")],
    dataset: Annotated[str, typer.Option(help="climate-fever.")] = "climate-fever",
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    seed: Annotated[int, typer.Option(help="Seed of the fit / held-out split of claims.")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Claim verdicts (supported / refuted / NEI / conflicting) from several evidence sentences; fits the thresholds."""
    from core.evaluate.verdicts import evaluate_verdicts, format_table
    from tui.console import progress_bar

    if dataset != "climate-fever":
        raise_input(f"unknown verdict dataset {dataset!r} (supported: climate-fever)")
    with progress_bar() as update:
        report = evaluate_verdicts(path=path, verifier=_verifier(ctx, verifier, grounding), seed=seed, limit=limit, progress=update)
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("decompose")
@handle_errors
def eval_decompose(
    ctx: typer.Context,
    path: Annotated[list[Path], typer.Option(help="A dataset JSONL; repeat --path to run several files in one go.")],
    dataset: Annotated[str, typer.Option(help="factscore, factcheck-gpt, or auto (detected per file).")] = "auto",
    decomposers: Annotated[str, typer.Option(help="Comma-separated: sentence,rules,llm.")] = "sentence,rules",
    match: Annotated[str, typer.Option(help="Claim matching: nli (bidirectional entailment) or embedding.")] = "nli",
    verifier: Annotated[str, typer.Option(help="NLI model for --match nli.")] = "embedded",
    llm: Annotated[str, typer.Option(help="GGUF model of the llm decomposer: embedded or a .gguf path.")] = "embedded",
    limit: Annotated[int | None, typer.Option(help="Only the first N answers of each file.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Precision, recall and F1 of produced claims against human atomic claims; claims and ms per sentence."""
    from core.decompose import make_decomposer
    from core.evaluate.decompose import evaluate_decompose, evaluate_decompose_sets, format_table
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter
    from tui.console import progress_bar

    settings = _settings(ctx)
    decs = {n.strip(): make_decomposer(n.strip(), SpacySentenceSplitter, llm_spec=llm) for n in decomposers.split(",") if n.strip()}
    matcher = load_nli(verifier) if match == "nli" else _embedder_factory(settings.embedder)()
    with progress_bar() as update:
        if len(path) == 1:
            report = evaluate_decompose(dataset=dataset, path=path[0], decomposers=decs, matcher=matcher, method=match,
                                        limit=limit, progress=update)
        else:
            report = evaluate_decompose_sets(sets=[(dataset, p) for p in path], decomposers=decs, matcher=matcher,
                                             method=match, limit=limit, progress=update)
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


# ---------------------------------------------------------------- scores, attribution, agreement (issue 6)


def _with_beta(result: dict, beta: float | None) -> None:
    """Recompute a stored ICAT score with another β for display (seed 004 §6.5: β is a live
    control; nothing is re-run or stored)."""
    from core.score import ICAT_KIND, icat_from_detail

    icat = result["scores"].get(ICAT_KIND)
    if beta is None or not icat or not icat.get("detail"):
        return
    detail = icat_from_detail(icat["detail"], result["claims"], beta)
    result["scores"][ICAT_KIND] = {"value": detail["icat"], "detail": detail}


def _print_scores(scores: dict) -> None:
    """One line per stored score kind, with what it counted."""
    from tui.console import out

    for kind, s in sorted(scores.items()):
        v, d = s.get("value"), s.get("detail") or {}
        shown = "—" if v is None else f"{v:.3f}"
        if kind == "factual_precision":
            extra = (f"{d.get('supported', 0)}/{d.get('verified', 0)} supported, {d.get('pending', 0)} pending, "
                     f"{d.get('abstentions', 0)} abstentions, {d.get('not_checkable', 0)} not checkable")
            if d.get("abstained"):
                extra += "; the answer abstained (no precision, as FActScore)"
        elif kind == "icat":
            names = {a["id"]: a["text"] for a in d.get("aspects", [])}
            gaps = ", ".join(names.get(g, str(g)) for g in d.get("gaps", [])) or "none"
            extra = (f"ICAT-β={d.get('beta', 1):g}: factuality {d.get('factuality', 0):.3f}, coverage "
                     f"{d.get('coverage', 0):.3f} ({len(d.get('covered', []))}/{d.get('n_aspects', 0)} aspects; "
                     f"alignment {d.get('alignment', {}).get('method', '?')}); gaps: {gaps}")
        elif kind == "attribution":
            extra = ", ".join(f"{k} {n}" for k, n in (d.get("labels") or {}).items())
        else:
            extra = ""
        out.print(f"  {kind:<18} {shown:>6}  {extra}", markup=False, highlight=False)


@app.command()
@handle_errors
def agreement(
    ctx: typer.Context,
    runs: Annotated[list[int], typer.Argument(help="Run ids (one or more).")],
    binary: Annotated[bool, typer.Option("--binary", help="Supported vs not, instead of the four verdicts.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Agreement of model verdicts with human labels (TUI or imported): Cohen's κ,
    Krippendorff's α (nominal), confusion matrix; per run and across the runs."""
    from dataclasses import asdict

    from core.agreement import runs_agreement
    from tui.console import err, out

    result = runs_agreement(_db(ctx), runs, binary)
    missing = [rid for rid, a in result["runs"].items() if a.n == 0]
    if missing:
        err.print(f"no human labels in run(s) {', '.join(map(str, missing))}: label claims in the TUI, or import "
                  "a dataset's labels (`claimscope eval factuality … --store`)", markup=False)
    if as_json:
        sys.stdout.write(json.dumps({"runs": {str(k): asdict(v) for k, v in result["runs"].items()},
                                     "all": asdict(result["all"])}) + "\n")
        return

    def fmt(x):
        return "—" if x is None else f"{x:.3f}"

    rows = list(result["runs"].items()) + ([("all", result["all"])] if len(runs) > 1 else [])
    for name, a in rows:
        if a.n == 0:
            continue
        out.print(f"run {name}: n {a.n}  agreement {fmt(a.observed)}  Cohen κ {fmt(a.kappa)}  "
                  f"Krippendorff α {fmt(a.alpha)}  labels from {dict(a.origins)}", markup=False)
        out.print("  human \\ model   " + "".join(f"{lab[:14]:>15}" for lab in a.labels), markup=False)
        for h in a.labels:
            out.print(f"  {h[:15]:<16}" + "".join(f"{a.confusion[h][m]:>15}" for m in a.labels), markup=False)


@app.command()
@handle_errors
def icat(
    ctx: typer.Context,
    run: Annotated[int, typer.Argument(help="Run id.")],
    aspect: Annotated[list[str] | None, typer.Option("--aspect", "-a", help="An aspect of the query (repeatable).")] = None,
    aspects_from: Annotated[
        str, typer.Option(help="Where aspects come from: user (--aspect), llm (ICAT-A) or source (document labels, ICAT-M).")
    ] = "user",
    align: Annotated[str, typer.Option(help="Claim → aspect alignment: embedding (default), llm or source.")] = "embedding",
    query: Annotated[str | None, typer.Option(help="The query the answer responds to.")] = None,
    beta: Annotated[float, typer.Option(help="ICAT-β: weight of coverage against factuality.")] = 1.0,
    llm: Annotated[str, typer.Option(help="GGUF model for --aspects-from llm / --align llm.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored detail as JSON.")] = False,
) -> None:
    """ICAT (seed 004): factuality, coverage of the query's aspects by supported claims, and
    ICAT-β; aligns the run's claims to the aspects and stores the score with the run."""
    from core.errors import NotFoundError
    from core.score import (
        LLMJSONAdapter,
        aspects_from_list,
        aspects_from_source_labels,
        generate_aspects,
        run_source_labels,
        set_run_icat,
    )
    from store import runs as rq

    db = _db(ctx)
    if rq.get_run(db, run) is None:
        raise NotFoundError(f"no run {run}")
    gen = None
    if "llm" in (aspects_from, align):
        from models.llm import load_llm

        gen = LLMJSONAdapter(load_llm(llm))
    if aspects_from == "user":
        if not aspect:
            raise_input("give the aspects with --aspect (or --aspects-from llm|source)")
        aspects = aspects_from_list(aspect)
    elif aspects_from == "llm":
        if not query:
            raise_input("--aspects-from llm needs --query")
        aspects = generate_aspects(gen, query)
    elif aspects_from == "source":
        aspects = aspects_from_source_labels([run_source_labels(db, run)[0]])
        if not aspects:
            raise_input(f"the documents retrieved for run {run} carry no aspect labels (meta \"aspects\")")
    else:
        raise_input(f"unknown --aspects-from {aspects_from!r} (user, llm or source)")
    encode = _embedder_factory(_settings(ctx).embedder)().encode if align == "embedding" else None
    set_run_icat(db, run, aspects, method=align, query=query, beta=beta, encode=encode, llm=gen)
    scores = rq.run_scores(db, run)
    if as_json:
        sys.stdout.write(json.dumps(scores["icat"]["detail"]) + "\n")
        return
    _print_scores({"icat": scores["icat"]})


@eval_app.command("attribution")
@handle_errors
def eval_attribution(
    ctx: typer.Context,
    path: Annotated[Path, typer.Option("--path", "--data", help="ExpertQA JSONL (e.g. ../shared/data/expertqa/dev.jsonl).")],
    dataset: Annotated[str, typer.Option(help="expertqa.")] = "expertqa",
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    partial: Annotated[bool, typer.Option(help="Label Partial via atomic facts (rules decomposer; slower).")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N answers.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """AutoAIS vs the experts' support labels (Complete vs not): precision, recall, F1 per system (Table 6)."""
    from core.attribution import Attributor
    from core.evaluate.attribution import evaluate_attribution, format_table
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter
    from tui.console import progress_bar

    if dataset != "expertqa":
        raise_input(f"unknown attribution dataset {dataset!r} (supported: expertqa)")
    decomposer = None
    if partial:
        from core.decompose_rules import RulesDecomposer

        decomposer = RulesDecomposer()
    attributor = Attributor(load_nli(verifier), SpacySentenceSplitter(), decomposer=decomposer)
    with progress_bar() as update:
        report = evaluate_attribution(path=path, attributor=attributor, limit=limit, progress=update)
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("grounding")
@handle_errors
def eval_grounding(
    ctx: typer.Context,
    data: Annotated[Path | None, typer.Option("--data", help="Rows {id, doc, claim, label 1|0, domain?} (JSONL).")] = None,
    dataset: Annotated[str | None, typer.Option(help="Convert on the fly: wice, expertqa or factcheck-gpt (with --path).")] = None,
    path: Annotated[Path | None, typer.Option("--path", help="The --dataset's own file.")] = None,
    convert: Annotated[Path | None, typer.Option("--convert", help="Only write the --dataset as --data rows here.")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    baselines: Annotated[bool, typer.Option(help="Lexical-overlap and embedding-cosine baselines in the same run.")] = True,
    ablations: Annotated[bool, typer.Option(help="Also score other aggregations (windows only, sentences only, ...).")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N rows.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Claim vs given document (LLM-AggreFact protocol): balanced accuracy per domain and mean, AUC, time per pair."""
    from core.evaluate.grounding import evaluate_grounding, format_table, load_dataset, write_rows
    from core.workbench import RunOptions
    from tui.console import err, progress_bar

    if (data is None) == (dataset is None):
        raise_input("give --data F.jsonl or --dataset NAME --path F")
    if dataset is not None and path is None:
        raise_input(f"--dataset {dataset} needs --path (its file)")
    rows = load_dataset("jsonl", data) if data is not None else load_dataset(dataset, path)
    if convert is not None:
        err.print(f"wrote {write_rows(rows, convert)} rows to {convert}", markup=False)
        return
    wb = _workbench(ctx)
    options = RunOptions.from_settings(wb.settings).with_(verifier=verifier.strip(), grounding=grounding)
    with progress_bar() as update:
        report = evaluate_grounding(
            rows=rows, dataset=dataset or data.stem, path=path or data, verifier=wb.verifier(options),
            splitter=wb.splitter(), embedder_factory=wb.embedder if baselines else None, baselines=baselines,
            ablations=ablations, limit=limit, chunk_words=wb.settings.chunk_words,
            chunk_overlap=wb.settings.chunk_overlap, progress=update,
        )
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@eval_app.command("factuality")
@handle_errors
def eval_factuality(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Option(help="factscore or factcheck-gpt.")],
    path: Annotated[list[Path], typer.Option("--path", "--data", help="Dataset JSONL (repeatable).")],
    source: Annotated[str, typer.Option("--source", "-s", help="factscore: the knowledge source to search.")] = "wiki-vital",
    mode: Annotated[str, typer.Option("--mode", "-m", help="Retrieval: bm25, dense or hybrid.")] = "hybrid",
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Passages per claim.")] = 10,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    grounding: Annotated[bool, typer.Option(help=GROUNDING_HELP)] = True,
    store: Annotated[bool, typer.Option("--store", help="Keep each answer as a run, human labels as annotations.")] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N answers of each file.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """Claim verdicts vs human labels (κ, F1), per-answer factual precision vs the human one, claims without evidence."""
    from core.evaluate.factuality import DATASETS, evaluate_factuality, format_table
    from models.nlp import SpacySentenceSplitter
    from tui.console import progress_bar

    if dataset not in DATASETS:
        raise_input(f"unknown factuality dataset {dataset!r} ({', '.join(DATASETS)})")
    db = _db(ctx)
    searcher = _searcher(ctx, db, [source]) if dataset == "factscore" else None
    with progress_bar() as update:
        report = evaluate_factuality(
            dataset=dataset, paths=path, verifier=_verifier(ctx, verifier, grounding), searcher=searcher,
            splitter=SpacySentenceSplitter(), source=source, k=k, mode=mode, limit=limit, db=db, store=store,
            progress=update,
        )
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


@app.command()
@handle_errors
def attribute(
    ctx: typer.Context,
    expertqa: Annotated[Path, typer.Option(help="ExpertQA JSONL: the answers to attribute.")],
    index: Annotated[int, typer.Option(min=1, help="Which question (line order, from 1).")] = 1,
    system: Annotated[str | None, typer.Option(help="Which system's answer (default: the first).")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model: embedded, a folder or a cached HF id.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored detail as JSON.")] = False,
) -> None:
    """Attribution of a cited answer (ExpertQA, seed 002): each claim against the sources it
    cites — Complete / Partial / Incomplete / Missing / N/A — stored as a run."""
    from core.attribution import AnswerAttribution, Attributor, store_attribution
    from core.decompose_rules import RulesDecomposer
    from core.evaluate.attribution import load_expertqa
    from models.nli import load_nli
    from models.nlp import SpacySentenceSplitter
    from tui.console import out

    answers = load_expertqa(expertqa)
    questions = list(dict.fromkeys(a.question for a in answers))
    if index > len(questions):
        raise_input(f"{expertqa} has {len(questions)} questions, not {index}")
    mine = [a for a in answers if a.question == questions[index - 1] and (system is None or a.system == system)]
    if not mine:
        raise_input(f"question {index} has no answer by system {system!r}")
    ans = mine[0]
    att = Attributor(load_nli(verifier), SpacySentenceSplitter(), decomposer=RulesDecomposer())
    result = AnswerAttribution([att.attribute_claim(i, c.text, c.citations, ans.sources) for i, c in enumerate(ans.claims)])
    text = " ".join(c.text for c in ans.claims)
    run_id = store_attribution(_db(ctx), text, result, ans.sources, f"{expertqa.name}:{index}:{ans.system}")
    if as_json:
        sys.stdout.write(json.dumps({"run_id": run_id, **result.detail()}) + "\n")
        return
    score = "—" if result.score is None else f"{result.score:.2f}"
    out.print(f"run {run_id}: {ans.system} on {ans.question!r}: AutoAIS {score}; {result.labels}", markup=False)
    for c in result.claims:
        p = f" P(entail) {c.check.probs[0]:.2f}" if c.check else ""
        out.print(f" {c.idx + 1:>2}. {c.label:<10}{p}  cites {list(c.citations) or '-'}  {c.text}", markup=False)
        for i, s, pe in (c.check.sentences if c.check else ()):
            out.print(f"       ↳ sentence {i + 1} ({pe:.2f}): {s[:160]}", markup=False, style="dim")
        for a, ok in c.atoms:
            out.print(f"       · {'✓' if ok else '✗'} {a}", markup=False, style="dim")


# ---------------------------------------------------------------- end of issue 6 commands

# ---------------------------------------------------------------- context usage, characteristics


@app.command()
@handle_errors
def acu(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim.")],
    evidence: Annotated[str, typer.Option("--evidence", "-e", help="One piece of evidence (text).")],
    stance: Annotated[
        str | None,
        typer.Option(help="The evidence's stance (supports, insufficient-supports, insufficient-neutral, "
                          "insufficient-contradictory, insufficient-refutes, refutes); default: the verifier's."),
    ] = None,
    claimant: Annotated[str | None, typer.Option(help="Who made the claim (the prompt's Claimant line).")] = None,
    shots: Annotated[int, typer.Option(help="0 or 3 worked examples (seed 001 Tables 12–14).")] = 3,
    llm: Annotated[str | None, typer.Option(help="GGUF model: embedded (SmolLM2) or a .gguf path.")] = None,
    verifier: Annotated[str, typer.Option(help="NLI model giving the stance when --stance is not given.")] = "embedded",
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Context usage (seed 001 §5): P(True / None / False) for the claim alone and with the
    evidence, ΔP rescaled (Eq. 1), and ACU summed with the stance's signs on [−3, 3];
    negative = context repulsion."""
    from core.acu import ContextUsageScorer, normalise_stance, stance_from_nli
    from core.settings import check_text_size
    from tui.console import out

    for text, what in ((claim, "the claim"), (evidence, "the evidence")):
        if not text.strip():
            raise_input(f"{what} is empty")
        check_text_size(text, what)
    if shots not in (0, 3):
        raise_input("--shots must be 0 or 3")
    source = "human"
    if stance is not None:
        stance = normalise_stance(stance)
    else:
        stance, source = stance_from_nli(_verifier(ctx, verifier, grounding=False).nli.predict([(evidence, claim)])[0]), "verifier"
    wb = _workbench(ctx)
    wb = wb.with_settings(wb.settings.with_overrides(llm=llm))
    scorer = ContextUsageScorer(wb.llm(), shots=shots)
    usage = scorer.score(claim, evidence, stance, claimant)
    if as_json:
        sys.stdout.write(json.dumps({**usage.as_dict(), "stance_source": source, "model": scorer.manifest()}) + "\n")
        return
    out.print(f"stance: {stance} ({source}); {scorer.llm.ref.model_id}, {shots}-shot", markup=False)
    out.print(f"{'':<8}{'P(t|C)':>9}{'P(t|C,E)':>10}{'ΔP':>8}{'D':>4}", markup=False)
    from core.acu import DIRECTION

    for t in ("True", "None", "False"):
        out.print(f"{t:<8}{usage.p_claim[t]:>9.3f}{usage.p_evidence[t]:>10.3f}{usage.delta[t]:>+8.3f}"
                  f"{DIRECTION[stance][t]:>+4d}", markup=False)
    flags = [f for f, on in (("context repulsion", usage.repulsion), ("memory conflict", usage.memory_conflict)) if on]
    out.print(f"ACU {usage.acu_sum:+.3f} on [−3, 3] (mean form {usage.acu_mean:+.3f})"
              + (f" — {', '.join(flags)}" if flags else ""), markup=False)


@app.command()
@handle_errors
def characteristics(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim.")],
    evidence: Annotated[str, typer.Option("--evidence", "-e", help="The evidence text.")],
    url: Annotated[str | None, typer.Option(help="Where the evidence comes from (site flags).")] = None,
    claim_date: Annotated[str | None, typer.Option(help="The claim's date, YYYY[-MM[-DD]].")] = None,
    evidence_date: Annotated[str | None, typer.Option(help="The evidence's publication date.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The context characteristics of a claim–evidence pair (seed 001 §4.1): similarity,
    readability, lengths, entity overlap, hedging, source references, verdict words, site
    flags and whether the evidence was published after the claim."""
    from tui.console import out

    for text, what in ((claim, "the claim"), (evidence, "the evidence")):
        if not text.strip():
            raise_input(f"{what} is empty")
    c = _workbench(ctx).characterizer().characterize(
        claim, evidence, url=url, claim_date=claim_date, evidence_date=evidence_date)
    if as_json:
        sys.stdout.write(json.dumps(c.as_dict()) + "\n")
        return
    for key, value in c.as_dict().items():
        out.print(f"{key:<26}{value}", markup=False)
    out.print(f"{'flags':<26}{', '.join(c.flags()) or '-'}", markup=False)


@eval_app.command("acu")
@handle_errors
def eval_acu(
    ctx: typer.Context,
    data: Annotated[Path, typer.Option(help="JSONL of {claim, evidence, stance[, claimant, id]}, or Climate-FEVER.")],
    shots: Annotated[int, typer.Option(help="0 or 3 worked examples.")] = 3,
    llm: Annotated[str | None, typer.Option(help="GGUF model: embedded (SmolLM2) or a .gguf path.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
) -> None:
    """ACU over labelled (claim, evidence, stance) pairs, as seed 001 Table 22: mean ΔP per
    answer and stance, mean ACU sum, context-repulsion and memory-conflict shares, seconds per pair."""
    from core.acu import ContextUsageScorer
    from core.evaluate.acu import evaluate_acu, format_table, load_acu_pairs
    from models.llm import load_llm
    from tui.console import progress_bar

    if shots not in (0, 3):
        raise_input("--shots must be 0 or 3")
    pairs = load_acu_pairs(data)
    scorer = ContextUsageScorer(load_llm(llm or _settings(ctx).llm), shots=shots)
    with progress_bar() as update:
        report = evaluate_acu(pairs, scorer, limit=limit, progress=update)
    report["data"] = str(data)
    sys.stdout.write(format_table(report) + "\n")
    _write_report(report, json_out)


def _write_report(report: dict, json_out: Path | None) -> None:
    from tui.console import err

    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
        err.print(f"report written to {json_out}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
