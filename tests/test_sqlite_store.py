"""Tests of the sqlite strategy beyond the conformance suite: settings, schema, plans, damage."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from aptmem.entries import Compaction, User, decode_line, encode_entry
from aptmem.errors import CorruptLogError, UnsafePathError
from strategies import sqlite_sql
from strategies.sqlite import SqliteStore

SID = "6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f"


@pytest.mark.parametrize("kwargs", [{"journal_mode": "MEMORY"}, {"synchronous": "SOMETIMES"}, {"db_name": "../x.db"}, {"db_name": ""}])
def test_settings_are_validated(tmp_path: Path, kwargs: dict[str, str]) -> None:
    """Unknown journal modes, sync levels and db names that are paths are refused up front."""
    with pytest.raises(ValueError):
        SqliteStore(tmp_path, **kwargs)


@pytest.mark.parametrize(
    ("journal_mode", "synchronous", "durability", "level"),
    [
        ("WAL", "FULL", "per_append", 2),
        ("WAL", "NORMAL", "process", 1),
        ("WAL", "OFF", "process", 0),
        # DELETE commits by unlinking the journal; only EXTRA syncs the folder after it.
        ("DELETE", "FULL", "process", 2),
        ("DELETE", "EXTRA", "per_append", 3),
        ("WAL", "EXTRA", "per_append", 3),
        ("DELETE", "NORMAL", "process", 1),
        ("DELETE", "OFF", "process", 0),
    ],
)
def test_pragmas_and_declared_durability(tmp_path: Path, journal_mode: str, synchronous: str, durability: str, level: int) -> None:
    """The connection runs with the configured pragmas and declares the matching durability."""
    store = SqliteStore(tmp_path, journal_mode=journal_mode, synchronous=synchronous)
    conn = store._conn
    assert conn is not None
    assert conn.execute("PRAGMA journal_mode").fetchone()[0].upper() == journal_mode
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == level
    assert store.capabilities.durability == durability
    store.close()


def test_one_row_per_entry_with_exact_payload(tmp_path: Path) -> None:
    """Each entry is one row: seq from 1, type, ts, id, and its exact line bytes as payload."""
    entries = [User(ts=10, id="a", content="你好"), decode_line(b'{ "type":"future","ts":11 }'), Compaction(ts=12, first_kept="a")]
    store = SqliteStore(tmp_path)
    store.append(SID, entries[0])
    store.append_many(SID, entries[1:])
    store.close()
    with closing(sqlite3.connect(tmp_path / "sessions.sqlite3", isolation_level=None)) as conn:
        rows = conn.execute("SELECT seq, type, ts, entry_id, payload FROM entries WHERE session_id = ? ORDER BY seq", (SID,)).fetchall()
    assert rows == [
        (1, "user", 10, "a", encode_entry(entries[0])),
        (2, "future", 11, None, b'{ "type":"future","ts":11 }'),
        (3, "compaction", 12, None, encode_entry(entries[2])),
    ]


@pytest.mark.parametrize("query", ["LATEST_COMPACTION", "KEPT_FROM", "KEPT_BEFORE", "FROM_SEQ", "PAGE_AFTER"])
def test_live_context_queries_use_indexes(tmp_path: Path, query: str) -> None:
    """read_live's and iter_entries' queries search an index; none scans the table."""
    store = SqliteStore(tmp_path)
    sql = getattr(sqlite_sql, query)
    params = {"LATEST_COMPACTION": (SID,), "KEPT_FROM": (SID, "a", 9), "KEPT_BEFORE": (SID, 9, 3), "FROM_SEQ": (SID, 1, 5), "PAGE_AFTER": (SID, 0, 64)}[query]
    assert store._conn is not None
    plan = " ".join(row[-1] for row in store._conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    assert "USING" in plan and "INDEX" in plan and "SCAN" not in plan, plan
    if query == "LATEST_COMPACTION":
        assert "entries_compactions" in plan, plan
    store.close()


def test_damaged_payload_is_reported(tmp_path: Path) -> None:
    """A row whose payload is not an entry: reads raise CorruptLogError, recover reports the row."""
    store = SqliteStore(tmp_path)
    store.append_many(SID, [User(ts=n, content=str(n)) for n in range(3)])
    with closing(sqlite3.connect(tmp_path / "sessions.sqlite3", isolation_level=None)) as conn:
        conn.execute("UPDATE entries SET payload = ? WHERE session_id = ? AND seq = 2", (b'{"type":"user"', SID))
    with pytest.raises(CorruptLogError) as caught:
        list(store.iter_entries(SID))
    assert caught.value.line == 2
    report = store.recover(SID)
    assert not report.loadable
    assert report.damaged_lines == [2]
    assert report.actions == ["PRAGMA integrity_check: ok"]
    store.close()


def test_two_connections_interleave_without_losing_appends(tmp_path: Path) -> None:
    """Two stores on one database (as two processes would be) append to one session in turn."""
    first, second = SqliteStore(tmp_path), SqliteStore(tmp_path)
    for n in range(20):
        (first if n % 2 else second).append(SID, User(ts=n, content=str(n)))
    assert [entry.ts for entry in first.iter_entries(SID)] == list(range(20))
    first.close()
    second.close()


def test_database_file_safety(tmp_path: Path) -> None:
    """A symlink where the database should be is refused; a foreign file is reported as damage."""
    (tmp_path / "elsewhere").write_bytes(b"")
    (tmp_path / "sessions.sqlite3").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafePathError):
        SqliteStore(tmp_path)
    (tmp_path / "foreign.db").write_bytes(b"this is not a database, just some bytes" * 100)
    with pytest.raises(CorruptLogError):
        SqliteStore(tmp_path, db_name="foreign.db")


def _open_at_once(root: str, barrier: object, results: object) -> None:
    """A child process: wait for the others, open the store, report how it went."""
    barrier.wait()  # type: ignore[attr-defined]
    try:
        SqliteStore(root, journal_mode="WAL", synchronous="FULL").close()
        results.put(None)  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - the test reports any failure
        results.put(f"{type(exc).__name__}: {exc}")  # type: ignore[attr-defined]


def test_writers_opening_a_new_wal_database_at_once_all_get_in(tmp_path: Path) -> None:
    """Switching a new database to WAL answers 'database is locked' at once (no busy wait) when
    another process does the same; the store waits instead (was: ~1 in 8 openers failed)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    failures = []
    for trial in range(40):
        barrier, results = context.Barrier(3), context.Queue()
        children = [context.Process(target=_open_at_once, args=(str(tmp_path / str(trial)), barrier, results)) for _ in range(3)]
        for child in children:
            child.start()
        for child in children:
            child.join(timeout=60)
        failures += [r for r in (results.get(timeout=10) for _ in children) if r is not None]
    assert failures == []
