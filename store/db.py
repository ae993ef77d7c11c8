"""Opening the database: WAL, foreign keys, busy timeout, migrations, transactions.

Why these settings:
- WAL lets the TUI read while a CLI process writes (one writer, many readers).
- ``busy_timeout`` makes a second writer wait instead of failing with "database is locked".
- Writes go through :func:`write_tx`, which starts ``BEGIN IMMEDIATE``: the write lock is
  taken up front, so two writers queue on the busy timeout instead of dead-locking on a
  read-to-write upgrade (where SQLite returns SQLITE_BUSY without waiting).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from store.errors import SchemaTooNewError, StoreError
from store.migrations import MIGRATIONS, SCHEMA_VERSION, current_version

BUSY_TIMEOUT_MS = 30_000


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def open_db(path: str | Path) -> sqlite_utils.Database:
    """Open (creating if needed) a claimscope database and bring its schema up to date.

    A database whose ``schema_version`` is newer than this code knows is refused with
    :class:`SchemaTooNewError` before anything is written, so an old claimscope can never
    damage data written by a newer one.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        raise StoreError(f"database path {path} is a directory, not a file")
    _refuse_truncated(path)
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = _connect(path)
        # Touch the file: a non-SQLite file fails here with "file is not a database".
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a usable claimscope database: {exc}") from exc
    db = sqlite_utils.Database(conn)
    try:
        version = current_version(db)
        if version > SCHEMA_VERSION:
            conn.close()
            raise SchemaTooNewError(
                f"{path} has schema version {version}, newer than this claimscope "
                f"understands ({SCHEMA_VERSION}); upgrade claimscope to open it"
            )
        _enable_wal(conn)
        if version < SCHEMA_VERSION:
            _migrate(db, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{path} is not a usable claimscope database: {exc}") from exc
    return db


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch a database to WAL, waiting out other processes that are doing the same.

    Changing the journal mode needs an exclusive lock, and SQLite answers "database is locked"
    at once there instead of calling the busy handler — two `source add` racing to create one
    new database saw it. So retry with backoff until the busy timeout; the switch is idempotent.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.01
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _refuse_truncated(path: Path) -> None:
    """Refuse a database file shorter than its own header says (a half-copied file, a disk that
    filled up during a copy). SQLite reads the missing pages as zeros, so such a file opens
    and silently shows tables as empty — stored runs would look lost. The in-header page count
    is only trusted when its version-valid-for number matches the change counter (SQLite file
    format §1.3.8); a checkpoint sizes the file before it writes page 1, so a file being
    written by another process never looks truncated."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
        size = path.stat().st_size
    except OSError:
        return  # a missing file is created; other problems are reported by connect()
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and size < pages * page_size:
        raise StoreError(
            f"{path} is truncated: {size} bytes, its header says {pages * page_size}; restore it from a backup"
        )


def _migrate(db: sqlite_utils.Database, version: int) -> None:
    """Apply every migration newer than ``version``, each in its own transaction."""
    for number, _name, migrate in MIGRATIONS:
        if number <= version:
            continue
        with write_tx(db):
            # Re-check inside the lock: another process may have migrated meanwhile.
            if current_version(db) >= number:
                continue
            migrate(db)
            db.execute(
                "INSERT INTO meta(key, value) VALUES('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [str(number)],
            )


@contextlib.contextmanager
def write_tx(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One atomic write: ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.

    Nested calls become savepoints (through sqlite-utils' ``atomic``), so helpers that
    write can be composed inside a larger transaction.
    """
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
