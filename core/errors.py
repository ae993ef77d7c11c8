"""Errors the user can act on. The CLI prints their message on one line and exits non-zero."""

from __future__ import annotations

from pathlib import Path


class ClaimscopeError(Exception):
    """Base of every error claimscope reports as a clear message instead of a traceback."""

    exit_code = 1


class InputError(ClaimscopeError):
    """Bad user input: the message names the file (and line) and what is wrong."""

    exit_code = 2

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class NotFoundError(ClaimscopeError):
    """A named thing (source, run) does not exist."""

    exit_code = 3
