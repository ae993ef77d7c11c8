"""``claimscope runs list | show | export | delete``, and ``tui`` / ``demo``: stored runs and
the workbench."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from tui.cli.options import STDIN, check_inputs, database, raise_input, searcher_of, verifier_of, workbench_of
from tui.cli.render import print_check, print_hits, print_scores, with_beta
from tui.cli.root import app, runs_app, state_of

# ---------------------------------------------------------------- runs


@runs_app.command("list")
def runs_list(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Past runs, newest first: status, claims, factual precision."""
    from rich.table import Table

    from store.runs import list_runs
    from tui.console import out

    rows = list_runs(database(ctx), limit)
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
def runs_show(
    ctx: typer.Context,
    run: Annotated[int, typer.Argument(help="Run id.")],
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    beta: Annotated[float | None, typer.Option(help="Show ICAT with this β (not stored; default: the stored β).")] = None,
) -> None:
    """One stored run: its claims, verdicts, deciding evidence and every stored score (no model is run)."""
    from core.errors import NotFoundError
    from store import runs as rq

    db = database(ctx)
    row = rq.get_run(db, run)
    if row is None:
        raise NotFoundError(f"no run {run}")
    result = {"run_id": run, "id": row.external_id, "claims": rq.run_results(db, run), "scores": rq.run_scores(db, run)}
    with_beta(result, beta)
    print_check([result], "json" if fmt == "json" else "table")
    if fmt != "json":
        print_scores(result["scores"])


@runs_app.command("export")
def runs_export(
    ctx: typer.Context,
    runs: Annotated[list[int] | None, typer.Argument(help="Run id(s); several only with --format html.")] = None,
    out_path: Annotated[Path, typer.Option("--out", "-o", help="File to write.")] = ...,
    fmt: Annotated[str, typer.Option("--format", help="jsonl (lossless), csv, md (report) or html (report).")] = "md",
    batch: Annotated[Path | None, typer.Option(
        "--batch", help="The JSONL that `check --jsonl` printed or wrote (--out): export its runs as one HTML batch.")] = None,
) -> None:
    """Export a stored run: JSONL (every claim with all evidence and judgements), CSV (a row
    per claim with its deciding evidence), a Markdown report, or an HTML report (one
    self-contained file: the answer coloured by verdict, each claim's deciding sentence
    highlighted, scores, models). Several runs (or --batch) with --format html: OUT is a
    batch page with the distribution of per-answer factual precision, and each run's report
    is written next to it as OUT-run-N.html."""
    from core.errors import InputError
    from core.pipeline.export import export_batch, export_run
    from tui.console import err

    ids = list(runs or [])
    if batch is not None:
        ids += _batch_run_ids(batch)
    if not ids:
        raise InputError("give a run id, or --batch FILE")
    if len(ids) == 1 and batch is None:
        written = export_run(database(ctx), ids[0], fmt, out_path)
        err.print(f"exported run {ids[0]} to {written}", markup=False)
        return
    if fmt != "html":
        raise InputError("several runs export only as --format html (a batch page)")
    pages = export_batch(database(ctx), ids, out_path)
    err.print(f"exported {len(pages) - 1} runs: batch page {pages[0]}, run reports beside it", markup=False)


def _batch_run_ids(path: Path) -> list[int]:
    """The run ids of a `check --jsonl` result file, in order (one JSON object per line)."""
    from core.errors import InputError

    try:
        lines = path.expanduser().read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    ids = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            ids.append(int(obj["run_id"]))
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{path}:{n}: not a `check --jsonl` result line (no run_id)") from None
    return ids


@runs_app.command("delete")
def runs_delete(ctx: typer.Context, run: Annotated[int, typer.Argument(help="Run id.")]) -> None:
    """Delete a stored run and everything recorded with it."""
    from core.errors import NotFoundError
    from store.db import write_tx
    from store.inspect import delete_run
    from tui.console import err

    db = database(ctx)
    with write_tx(db):
        if not delete_run(db, run):
            raise NotFoundError(f"no run {run}")
    err.print(f"deleted run {run}", markup=False)


# ---------------------------------------------------------------- workbench


@app.command()
def tui(
    ctx: typer.Context,
    file: Annotated[Path | None, typer.Argument(help="An answer to open in the editor (a text, Markdown, saved web page, PDF or Word file).")] = None,
) -> None:
    """Open the workbench (also what `claimscope` alone does), with FILE's answer in the editor
    when one is given. The file is checked before the screen opens, as `check --file` checks it,
    so a bad file is one line on the terminal, not a broken screen."""
    from tui.app import ClaimscopeApp

    opened = None
    if file is not None:
        if str(file) == STDIN:
            raise_input("the workbench reads the keyboard from the terminal: give a file, not '-' (or use check --file -)")
        [(_, text)] = check_inputs(None, file, None)
        opened = (str(file), text)
    ClaimscopeApp(workbench_of(ctx), settings_path=state_of(ctx).config, opened=opened).run()


# ---------------------------------------------------------------- demo


DEMO_ANSWER = (
    "Marie Curie was a Polish-born physicist and chemist. She discovered polonium and radium. "
    "She was the first woman to win a Nobel Prize. The Eiffel Tower is located in Berlin. "
    "Photosynthesis converts light energy into chemical energy."
)


@app.command()
def demo(ctx: typer.Context) -> None:
    """The main job on the embedded defaults: check a short answer against the built-in
    wiki-vital source (indexed on first use), then show the evidence search behind it."""
    from core.pipeline.runner import Pipeline
    from core.retrieve.searcher import DEFAULT_MODE
    from store import runs as rq
    from tui.console import out

    db = database(ctx)
    searcher = searcher_of(ctx, db, ["wiki-vital"], DEFAULT_MODE)
    out.print(f"[bold]claimscope check[/bold] {json.dumps(DEMO_ANSWER)} --source wiki-vital")
    pipeline = Pipeline(db, workbench_of(ctx).decomposer("rules"), searcher, verifier_of(ctx, "embedded"),
                        sources=["wiki-vital"], k=10)
    run_id = pipeline.start(DEMO_ANSWER, "demo")
    pipeline.resume(run_id)
    print_check([{"run_id": run_id, "id": "demo", "claims": rq.run_results(db, run_id),
                   "scores": rq.run_scores(db, run_id)}], "table")
    q = "Marie Curie discovered radium"
    out.print(f"\n[bold]claimscope search[/bold] {json.dumps(q)} --source wiki-vital --mode {DEFAULT_MODE} -k 3")
    print_hits(searcher.search(q, k=3, mode=DEFAULT_MODE, sources=["wiki-vital"]), DEFAULT_MODE, False, searcher)
