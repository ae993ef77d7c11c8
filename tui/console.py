"""Terminal output helpers: data on stdout, progress and diagnostics on stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False)


@contextlib.contextmanager
def progress_bar() -> Iterator:
    """A rich progress bar on stderr, fed by the core's ``(stage, done, total)`` callbacks."""
    with Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    ) as bar:
        tasks: dict[str, int] = {}

        def update(stage: str, advance: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], advance=advance, total=total)

        yield update
