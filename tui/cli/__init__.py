"""The ``claimscope`` command line (Typer). It drives the same core as the TUI.

One module per command group, each a set of commands on the apps of ``root.py`` (which also
holds the one error handler, a TyperGroup): ``sources.py`` (source add / list / remove),
``check.py`` (search, decompose, verify, check), ``runs.py`` (runs …, tui, demo),
``scores.py`` (agreement, icat, attribute, acu, characteristics), ``eval.py`` (every
benchmark), ``doctor.py`` (doctor). ``options.py`` builds stages through core.workbench and resolves options from the
settings; ``render.py`` prints. To add a command, add a function to the module of its group.

Exit codes: 0 success · 1 unexpected failure · 2 bad input or usage · 3 not found ·
4 database problem · 5 model problem · 6 an answer below check --fail-under ·
130 interrupted.
"""

from __future__ import annotations

import importlib

from tui.cli.root import app

for _group in ("sources", "check", "runs", "scores", "eval", "doctor"):  # importing a group registers its commands
    importlib.import_module(f"tui.cli.{_group}")

__all__ = ["app", "main"]


def main() -> None:
    app()
