"""Store: pragmas, migrations, refusal of newer schemas, transactions."""

from __future__ import annotations

import sqlite3

import pytest

from store import SchemaTooNewError, StoreError, open_db, write_tx
from store import sources as sq
from store.migrations import MIGRATIONS, SCHEMA_VERSION


def test_new_database_is_migrated_with_wal_and_foreign_keys(tmp_path):
    db = open_db(tmp_path / "a.db")
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    tables = set(db.table_names())
    for t in ("sources", "documents", "passages", "passages_fts", "embeddings", "runs", "claims",
              "evidence", "verdicts", "scores", "model_manifest"):
        assert t in tables


def test_reopen_keeps_data_and_does_not_rerun_migrations(tmp_path):
    path = tmp_path / "a.db"
    db = open_db(path)
    with write_tx(db):
        db.execute("INSERT INTO runs(input_text, input_hash) VALUES ('x', 'h')")
    db.conn.close()
    db = open_db(path)
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_migrations_are_numbered_in_order():
    numbers = [n for n, _, _ in MIGRATIONS]
    assert numbers == list(range(1, len(numbers) + 1))


def test_version_9_keeps_the_embedding_cache_as_a_rowid_table_and_adds_sentence_vectors(tmp_path):
    """A database at version 8 (the cache as WITHOUT ROWID) upgrades without losing a cached vector."""
    import numpy as np
    import sqlite_utils

    path = tmp_path / "v8.db"
    old = sqlite_utils.Database(sqlite3.connect(path))
    for _number, _name, migrate in MIGRATIONS[:8]:
        migrate(old)
    old.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '8')")
    vec = np.linspace(-1, 1, 384, dtype=np.float32)
    old.execute("INSERT INTO embedding_cache VALUES ('m', 'h1', ?)", [vec.tobytes()])
    old.conn.commit()
    old.conn.close()
    db = open_db(path)
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'embedding_cache'").fetchone()[0]
    assert "WITHOUT ROWID" not in sql.upper()
    assert sq.cached_embeddings(db, "m", ["h1"])["h1"].tolist() == vec.tolist()
    with write_tx(db):
        sq.cache_embeddings(db, "m", ["h1", "h2"], np.stack([vec, -vec]))  # a known hash is kept, not duplicated
        sq.store_sentence_vectors(db, "m", ["s1"], vec[None])
    assert db.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] == 2
    assert np.abs(sq.stored_sentence_vectors(db, "m", ["s1"])["s1"] - vec).max() < 1e-3  # float16
    assert sq.sentence_vector_hashes(db, "m", ["s1", "s2"]) == {"s1"}


def test_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "new.db"
    db = open_db(path)
    with write_tx(db):
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 5)])
    db.conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNewError, match="newer than this claimscope"):
        open_db(path)
    assert path.read_bytes() == before


def test_corrupt_file_and_directory_are_refused(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable claimscope database"):
        open_db(bad)
    assert bad.read_bytes() == b"this is not a database" * 100
    with pytest.raises(StoreError, match="is a directory"):
        open_db(tmp_path)


def test_write_tx_rolls_back_everything_on_error(tmp_path):
    db = open_db(tmp_path / "a.db")
    with pytest.raises(RuntimeError), write_tx(db):
        db.execute("INSERT INTO runs(input_text, input_hash) VALUES ('x', 'h')")
        with write_tx(db):  # nested → savepoint
            db.execute("INSERT INTO runs(input_text, input_hash) VALUES ('y', 'h')")
        raise RuntimeError("boom")
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert not db.conn.in_transaction


def test_foreign_keys_are_enforced(tmp_path):
    db = open_db(tmp_path / "a.db")
    with pytest.raises(sqlite3.IntegrityError), write_tx(db):
        db.execute("INSERT INTO claims(run_id, idx, text) VALUES (999, 0, 'orphan')")


class _LockedOnce:
    """A connection whose first journal-mode switches fail the way SQLite fails them when another
    process is switching the same new database to WAL: at once, without the busy handler."""

    def __init__(self, conn: sqlite3.Connection, failures: int):
        self.conn, self.failures = conn, failures

    def execute(self, sql: str, *args):
        if sql.startswith("PRAGMA journal_mode =") and self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("database is locked")
        return self.conn.execute(sql, *args)


def test_switch_to_wal_waits_out_a_concurrent_switch(tmp_path):
    """Two `source add` creating one database raced here and one exited 'database is locked'."""
    from store.db import _enable_wal

    conn = sqlite3.connect(tmp_path / "a.db")
    locked = _LockedOnce(conn, failures=3)
    _enable_wal(locked)
    assert locked.failures == 0
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_wal_switch_that_fails_otherwise_is_not_retried(tmp_path):
    from store.db import _enable_wal

    class Broken:
        def execute(self, sql, *args):
            raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _enable_wal(Broken())
