"""The recall index's SQLite file: its tables, and opening it safely.

``<root>/recall-index.sqlite`` (WAL mode, mode 0600) holds:

* ``index_meta``: the schema version, the engines it maintains, whether facts are extracted.
* ``sessions``: per session, how far it is indexed (``entries``: the count of good entries
  indexed, ``fingerprint``: a BLAKE2b hash of those entries' canonical encodings, in order), the
  change tokens of its log and sidecar seen then, the sidecar's hash, its first and last times.
* ``docs``: every record (L2 and L3), with its evidence.
* each engine's own tables, keyed by ``docs.doc_id``.

Everything here is derived from the logs and sidecars: deleting the file loses nothing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from aptmem.errors import CorruptIndexError

__all__ = ["INDEX_NAME", "SCHEMA_VERSION", "connect", "read_setting", "previous_settings", "remove_index", "write_setting"]

INDEX_NAME = "recall-index.sqlite"
SCHEMA_VERSION = "1"
BUSY_TIMEOUT_MS = 30_000

_TABLES = """
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    entries INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    log_token TEXT,
    meta_token TEXT,
    meta_hash BLOB,
    first_ts INTEGER,
    last_ts INTEGER
);
CREATE TABLE IF NOT EXISTS docs (
    doc_id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    level TEXT NOT NULL,
    kind TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    ts INTEGER,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_by_session ON docs(session_id, level, kind);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed, mode 0600) the index at ``path`` with its tables.

    Raises :class:`CorruptIndexError` for a file that is not a SQLite database or is an index of
    another schema version.
    """
    if os.path.islink(path):
        raise CorruptIndexError(str(path), "is a symlink")
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)
    # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves, one transaction per session.
    db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA journal_mode = WAL")
        # NORMAL in WAL mode: a commit survives a process crash; a power loss may drop the last
        # commits, which the next catch-up redoes from the logs (the index is derived data).
        db.execute("PRAGMA synchronous = NORMAL")
        db.executescript(_TABLES)
        version = read_setting(db, "schema")
        if version is None:
            write_setting(db, "schema", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise CorruptIndexError(str(path), f"schema version {version}, this aptmem reads {SCHEMA_VERSION}")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise CorruptIndexError(str(path), str(exc)) from exc
    except BaseException:
        db.close()
        raise
    return db


def previous_settings(path: Path) -> tuple[tuple[str, ...], bool | None]:
    """The engines and fact setting of an existing index, so a rebuild keeps them (none if unreadable)."""
    if not path.is_file() or path.is_symlink():
        return (), None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            engines, facts = read_setting(db, "engines"), read_setting(db, "facts")
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return (), None
    return tuple(n for n in (engines or "").split(",") if n), None if facts is None else facts == "1"


def remove_index(path: Path) -> None:
    """Delete an index file and its WAL files (derived data: a rebuild makes it anew); refuse a symlink."""
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if os.path.islink(part):
            raise CorruptIndexError(str(part), "is a symlink")
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass


def read_setting(db: sqlite3.Connection, key: str) -> str | None:
    """The value stored under ``key`` in ``index_meta``, or None."""
    row = db.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_setting(db: sqlite3.Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key`` in ``index_meta``."""
    db.execute("INSERT INTO index_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
