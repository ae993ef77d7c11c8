"""``claimscope source add | list | remove``: index, list and remove knowledge sources."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tui.cli.options import database, raise_input, settings_of, workbench_of
from tui.cli.root import source_app

# ---------------------------------------------------------------- sources


@source_app.command("add")
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
    ray: Annotated[bool, typer.Option("--ray", help="Embed the passages in batches on Ray workers "
                                      "(pip install 'claimscope[cluster]'); this process writes the source.")] = False,
    address: Annotated[str | None, typer.Option("--address", help="With --ray: a running Ray cluster (HOST:PORT).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=1024, help="With --ray: embedding actors.")] = 2,
    sentence_vectors: Annotated[bool, typer.Option(
        "--sentence-vectors/--no-sentence-vectors",
        help="Also embed every sentence on its own (what the default retrieval mode, hybrid-sentence, "
             "reads; about half the time of the passage pass). Without: a hybrid-sentence run embeds "
             "them first; bm25, dense and hybrid never need them.")] = True,
) -> None:
    """Index a knowledge source (re-adding a changed file re-indexes only what changed)."""
    from core.ingest.index import add_source
    from core.ingest.sources import BUILTINS, CsvColumns, load_builtin, load_documents
    from tui.console import err, progress_bar

    settings = settings_of(ctx)
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
    if ray or address:
        from core.pipeline.cluster import import_ray

        import_ray()  # without the extra: "install claimscope[cluster]", before anything is read
    db = database(ctx)
    wb = workbench_of(ctx)
    if ray or address:
        from core.pipeline.cluster import ClusterOptions, RayEmbedder

        embedder = RayEmbedder(settings.embedder, ClusterOptions(address, workers))  # actors load the model
    else:
        embedder = wb.embedder()  # a bad model is reported before any progress output
    err.print(f"indexing {len(docs)} documents into source {name!r} …")
    with progress_bar() as update:
        report = add_source(
            db,
            name,
            docs,
            fmt=fmt_used,
            path=where,
            embedder=embedder,
            splitter=wb.index_splitter(),
            attribution=attribution,
            licence=licence,
            chunk_words=settings.chunk_words,
            chunk_overlap=settings.chunk_overlap,
            progress=update,
            sentence_vectors=sentence_vectors,
        )
    err.print(
        f"source {name}: {report.added} added, {report.updated} updated, {report.removed} removed, "
        f"{report.unchanged} unchanged; {report.passages_added} new passages "
        f"({report.passages_embedded} embedded, the rest from the cache), {report.sentences_embedded} new sentence "
        f"vectors, in {report.seconds:.1f} s"
    )


def _detected(path: Path) -> str:
    from core.ingest.sources import detect_format

    return detect_format(path.expanduser())


@source_app.command("list")
def source_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List indexed sources with their sizes, attribution and licence."""
    from rich.table import Table

    from store.sources import list_sources
    from tui.console import out

    sources = list_sources(database(ctx))
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
def source_remove(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Source to remove.")]) -> None:
    """Remove a source, its passages and its vector index."""
    from core.ingest.index import remove_source
    from tui.console import err

    remove_source(database(ctx), name)
    err.print(f"removed source {name}")
