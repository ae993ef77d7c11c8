"""SQLite persistence for claimscope.

Everything a user sees is stored here first (sources, passages, runs, claims, evidence,
verdicts, scores, model manifests). This package depends on sqlite-utils only; it never
imports the TUI, textual or any model code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from store.errors import SchemaTooNewError, StoreError

if TYPE_CHECKING:
    from store.db import open_db, write_tx

__all__ = ["SchemaTooNewError", "StoreError", "open_db", "write_tx"]


def __getattr__(name: str) -> Any:
    """``open_db`` and ``write_tx`` load ``store.db`` (and sqlite-utils, ~0.1 s) on first use
    (PEP 562), so a command that never opens the database, or the error handler that only
    needs :class:`StoreError`, starts without them."""
    if name in ("open_db", "write_tx"):
        from store import db

        return getattr(db, name)
    raise AttributeError(f"module 'store' has no attribute {name!r}")
