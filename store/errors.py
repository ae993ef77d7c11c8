"""The store's errors, apart from ``store.db`` so that catching them (the CLI's one error
handler) imports neither sqlite-utils nor the schema."""

from __future__ import annotations


class StoreError(Exception):
    """A database problem the user can act on (corrupt file, wrong path, …). The CLI exits
    with ``exit_code`` (the store never imports core, so it is not a ClaimscopeError)."""

    exit_code = 4


class SchemaTooNewError(StoreError):
    """The database was written by a newer claimscope; we refuse to touch it."""
