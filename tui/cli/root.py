"""The root of the ``claimscope`` command line: the Typer apps, the one error handler, and
the top-level options (``--db``, ``--config``).

Exit codes: 0 success · 1 unexpected failure · 2 bad input or usage · 3 not found ·
4 database problem · 5 model problem · 6 an answer below check --fail-under ·
130 interrupted.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup

EXIT_CODES_HELP = (
    "Exit codes: 0 success, 1 unexpected failure, 2 bad input or usage, 3 not found, "
    "4 database problem, 5 model problem, 6 an answer below check --fail-under, 130 interrupted."
)


def _err_line(text: str) -> None:
    """One line on stderr, never wrapped, whatever the terminal."""
    print(text.replace("\n", " "), file=sys.stderr, flush=True)


class ClaimscopeGroup(TyperGroup):
    """The one error handler of every command: an error the user can act on becomes one line
    on stderr and its exit code (each error class carries its ``exit_code``: core.errors'
    ClaimscopeError family, store.errors.StoreError = 4, models.registry.ModelError = 5). Every
    command runs inside the root group's ``invoke``, sub-apps included, so catching here
    covers them all."""

    def invoke(self, ctx: click.Context) -> Any:
        from core.errors import ClaimscopeError
        from models.registry import ModelError
        from store.errors import StoreError

        try:
            return super().invoke(ctx)
        except ClaimscopeError as exc:
            _err_line(f"claimscope: error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except (StoreError, sqlite3.Error) as exc:  # sqlite3: e.g. a disk full, or a file damaged after opening
            _err_line(f"claimscope: database error: {exc}")
            raise typer.Exit(StoreError.exit_code) from None
        except ModelError as exc:
            _err_line(f"claimscope: model error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err_line("claimscope: interrupted; nothing half-written was kept")
            raise typer.Exit(130) from None


app = typer.Typer(
    name="claimscope",
    cls=ClaimscopeGroup,
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
        self.workbench: Any = None  # core.workbench.Workbench, built on first use (tui.cli.options)


def state_of(ctx: typer.Context) -> State:
    if not isinstance(ctx.obj, State):
        ctx.obj = State()
    return ctx.obj


def _print_version(value: bool) -> None:
    if value:
        from core.evaluate.report import claimscope_version

        print(f"claimscope {claimscope_version()}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    db: Annotated[
        Path | None, typer.Option("--db", help="Database file (default: user data dir; env CLAIMSCOPE_DB).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Settings TOML file (env CLAIMSCOPE_CONFIG).")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit.")
    ] = False,
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Idle OpenMP threads sleep instead of spin-waiting: on a loaded 2-core machine spinning
    # threads steal each other's CPU (measured: training 7 → 21 examples/s under load).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    st = state_of(ctx)
    st.db_path, st.config = db, config
    if ctx.invoked_subcommand is None:
        from tui.cli.runs import tui

        ctx.invoke(tui, ctx=ctx)
