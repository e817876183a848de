"""The SQL of the sqlite strategy: its schema, the queries that find the live context, and the
mapping of sqlite3's errors to the library's.

Kept apart from the store so the statements can be read (and their query plans tested) in one
place.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from aptmem.errors import CorruptLogError, LockTimeout, StorageError
from strategies.row_live import LiveQueries

__all__ = ["SCHEMA", "INSERT", "LATEST_COMPACTION", "KEPT_FROM", "KEPT_BEFORE", "FROM_SEQ", "ALL_ROWS", "PAGE_AFTER",
           "IS_COMPACTION", "SUMMARIZABLE", "LIVE", "database_footprint", "sql_errors"]

# The IN list of the partial index and of the query that uses it must match word for word:
# SQLite only uses a partial index when the query's WHERE implies the index's WHERE.
IS_COMPACTION = "type IN ('compaction', 'compaction_marker')"

# A rowid table, not WITHOUT ROWID: payloads range up to megabytes, and SQLite advises
# WITHOUT ROWID only for rows well under a twentieth of a page.
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    ts INTEGER,
    entry_id TEXT,
    payload BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS entries_compactions ON entries (session_id, seq) WHERE {IS_COMPACTION};
CREATE INDEX IF NOT EXISTS entries_by_id ON entries (session_id, entry_id, seq) WHERE entry_id IS NOT NULL;
"""

# The entry types a summary stands for (aptmem.store.summarizable): a rewrite drops them when it
# does not keep them, and carries every other row over.
SUMMARIZABLE = "type IN ('user', 'assistant', 'tool_call', 'tool_result', 'compaction', 'compaction_marker')"

INSERT = "INSERT INTO entries (session_id, seq, type, ts, entry_id, payload) VALUES (?, ?, ?, ?, ?, ?)"
LATEST_COMPACTION = f"SELECT seq, payload FROM entries WHERE session_id = ? AND {IS_COMPACTION} ORDER BY seq DESC LIMIT 1"
KEPT_FROM = "SELECT max(seq) FROM entries WHERE session_id = ? AND entry_id = ? AND seq < ?"
# A compaction's kept_before N: the N rows nearest before it that are not compactions.
KEPT_BEFORE = f"SELECT seq, payload FROM entries WHERE session_id = ? AND seq < ? AND NOT {IS_COMPACTION} ORDER BY seq DESC LIMIT ?"
FROM_SEQ = f"SELECT seq, {IS_COMPACTION}, payload FROM entries WHERE session_id = ? AND seq >= ? AND seq <> ? ORDER BY seq"
ALL_ROWS = "SELECT seq, payload FROM entries WHERE session_id = ? ORDER BY seq"
PAGE_AFTER = "SELECT seq, payload FROM entries WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?"
LIVE = LiveQueries(LATEST_COMPACTION, KEPT_BEFORE, KEPT_FROM, FROM_SEQ, ALL_ROWS)


def database_footprint(db_path: str | os.PathLike[str]) -> int:
    """The bytes on disk of a SQLite database with its WAL and rollback journal.

    ``-shm`` is left out: it is SQLite's shared-memory index of the WAL, not stored data, and is
    removed when the last connection closes.
    """
    total = 0
    for suffix in ("", "-wal", "-journal"):
        try:
            total += os.lstat(f"{os.fspath(db_path)}{suffix}").st_size
        except FileNotFoundError:
            pass
    return total


@contextmanager
def sql_errors(path: str, timeout: float) -> Iterator[None]:
    """Turn sqlite3's errors into the library's: busy, corrupt, full, other I/O."""
    try:
        yield
    except sqlite3.IntegrityError:
        raise  # a constraint: the caller's business (create turns it into SessionExists)
    except sqlite3.DatabaseError as exc:
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            raise LockTimeout(path, timeout) from exc
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            raise CorruptLogError(path, 0, 0, f"damaged database: {exc}") from exc
        if code == sqlite3.SQLITE_FULL:
            raise StorageError(errno.ENOSPC, f"{path}: {exc}") from exc
        raise StorageError(errno.EIO, f"{path}: {exc}") from exc
