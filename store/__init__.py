"""SQLite persistence for claimscope.

Everything a user sees is stored here first (sources, passages, runs, claims, evidence,
verdicts, scores, model manifests). This package depends on sqlite-utils only; it never
imports the TUI, textual or any model code.
"""

from store.db import SchemaTooNewError, StoreError, open_db, write_tx

__all__ = ["SchemaTooNewError", "StoreError", "open_db", "write_tx"]
