"""Peer strategy: the OpenAI Agents SDK's ``SQLiteSession`` (package ``openai-agents``), one file a root.

``SQLiteSession`` is the persistent session the Agents SDK ships: the ``Runner`` reads a
session's items before a turn and adds the turn's new items after it. What the library does,
read from its source (``agents/memory/sqlite_session.py``), and so what this store promises:

* one SQLite database; tables ``agent_sessions`` and ``agent_messages`` (an ``AUTOINCREMENT`` id,
  the session id, ``message_data`` = ``json.dumps(item)``), journal mode WAL set on every
  connection. ``add_items`` is one ``executemany`` insert and one commit on the calling thread's
  own connection (the async API runs each call in a worker thread with ``asyncio.to_thread``).
  ``synchronous`` is left at the sqlite library's default; this store reads it and declares
  per-append durability only when it is FULL or EXTRA (FULL in WAL mode syncs every commit).
* SQLite's file locks serialize writers from several processes (the SDK's busy timeout is
  sqlite3's default of 5 s, so a writer kept waiting longer gets an error, never a lost write).
* ``get_items`` reads all of a session's rows (no fast resume), and silently skips rows whose JSON
  does not parse; ``recover`` is where such damage is found and reported.

The async API is driven as an application would: one event loop per store, kept for its life
(``run_until_complete`` on it), one ``SQLiteSession`` per session id sharing the database, so the
SDK's worker threads and their connections are reused, not rebuilt per call as ``asyncio.run``
per call would. The store cannot be used from inside a running event loop.

What the SDK has no call for is done here on its own schema with a connection of this store's:
creating an empty session, listing sessions, the atomic ``replace`` (one transaction: delete the
session's rows, insert the new ones as the SDK inserts them), and the checks of ``recover``
(``PRAGMA integrity_check`` and every row's JSON). Entries map onto Responses items as
:mod:`strategies.openai_items` describes. The database is ``<root>/openai_agents.sqlite3``, created
here first with mode 0600 (SQLite gives its ``-wal`` and ``-shm`` files the same mode).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
from collections.abc import Coroutine, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from agents import SQLiteSession

from aptmem.entries import Compaction, Entry
from aptmem.errors import ClosedStoreError, CorruptLogError, InvalidEntry, SessionExists, SessionNotFound
from aptmem.fsutil import ensure_root, open_append
from aptmem.ids import validate_session_id
from aptmem.store import Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write, select_live
from strategies.openai_items import entry_to_item, item_to_entry
from strategies.peer_common import RECOVERY_MODES, check_mode, strict_report
from strategies.rewrite_split import kept_positions, split_for_rewrite
from strategies.sqlite_sql import database_footprint, sql_errors

__all__ = ["OpenAIAgentsSqliteStore"]

_SESSIONS = "agent_sessions"  # the SDK's default table names, passed to it explicitly
_MESSAGES = "agent_messages"
_T = TypeVar("_T")


class OpenAIAgentsSqliteStore:
    """Sessions as OpenAI Agents SDK ``SQLiteSession`` histories in one database (see the module doc)."""

    name = "openai_agents_sqlite"

    def __init__(self, root: str | os.PathLike[str], *, db_name: str = "openai_agents.sqlite3") -> None:
        if not db_name or os.path.basename(db_name) != db_name or db_name.startswith("."):
            raise ValueError(f"db_name must be a plain file name, not {db_name!r}")
        self.root = ensure_root(root)
        self.db_path = self.root / db_name
        os.close(open_append(self.db_path))  # 0600, never through a symlink, before SQLite makes it
        self._loop: asyncio.AbstractEventLoop | None = asyncio.new_event_loop()
        # One call at a time drives the loop and the own connection; reentrant so that a compaction
        # holding it appends its marker through ``append`` (joining its transaction: ``_joining``).
        self._lock = threading.RLock()
        self._joining = False
        self._sessions: dict[str, SQLiteSession] = {}
        # The SDK creates its schema when a session object is made; this one exists only for that.
        SQLiteSession("schema", self.db_path, sessions_table=_SESSIONS, messages_table=_MESSAGES).close()
        with sql_errors(str(self.db_path), 5.0):
            self._conn = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
            synchronous = self._conn.execute("PRAGMA synchronous").fetchone()[0]
            journal = str(self._conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        #: the sqlite defaults the SDK's connections run with, read from a connection made the same way
        self.synchronous, self.journal_mode = int(synchronous), journal
        self.capabilities = Capabilities(
            durability="per_append" if journal == "wal" and self.synchronous >= 2 else "process",
            recovery_modes=RECOVERY_MODES,
            multi_process_safe=True,  # SQLite's locks serialize the writers' transactions
        )

    # -- driving the SDK -------------------------------------------------------------------------

    def _run(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run one SDK coroutine to completion on the store's event loop (lock held by the caller)."""
        if self._loop is None:
            work.close()
            raise ClosedStoreError("the store is closed")
        return self._loop.run_until_complete(work)

    def _session(self, session_id: str) -> SQLiteSession:
        """The SDK's session object of an id, made once (lock held)."""
        self._connection()  # refuses a closed store before any SDK object is made
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = SQLiteSession(session_id, self.db_path, sessions_table=_SESSIONS,
                                                                 messages_table=_MESSAGES)
        return session

    def _connection(self) -> sqlite3.Connection:
        if self._loop is None:
            raise ClosedStoreError("the store is closed")
        return self._conn

    def _known(self, session_id: str) -> bool:
        """Whether the SDK's tables hold the session (lock held)."""
        row = self._connection().execute(f"SELECT 1 FROM {_SESSIONS} WHERE session_id = ?", (session_id,)).fetchone()
        return row is not None

    # -- sessions --------------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create an empty session (a row in the SDK's sessions table), refusing one that exists."""
        validate_session_id(session_id)
        with self._lock, sql_errors(str(self.db_path), 5.0):
            try:
                self._connection().execute(f"INSERT INTO {_SESSIONS} (session_id) VALUES (?)", (session_id,))
            except sqlite3.IntegrityError:
                raise SessionExists(session_id, str(self.db_path)) from None

    def exists(self, session_id: str) -> bool:
        """Tell whether the session exists."""
        validate_session_id(session_id)
        with self._lock, sql_errors(str(self.db_path), 5.0):
            return self._known(session_id)

    def sessions(self) -> list[str]:
        """List the ids of every session in the database, sorted."""
        with self._lock, sql_errors(str(self.db_path), 5.0):
            rows = self._connection().execute(f"SELECT session_id FROM {_SESSIONS} ORDER BY session_id").fetchall()
        return [row[0] for row in rows]

    # -- writing ---------------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry with the SDK's ``add_items`` (one insert, one commit)."""
        self.append_many(session_id, (entry,))

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries with one ``add_items`` call: one transaction."""
        validate_session_id(session_id)
        items = [entry_to_item(entry) for entry in entries]
        if not items:
            return
        with self._lock, sql_errors(str(self.db_path), 5.0):
            if self._joining:  # inside a compaction's transaction on the own connection: insert as the SDK does
                self._insert_items(self._connection(), session_id, [json.dumps(item) for item in items])
            else:
                self._run(self._session(session_id).add_items(items))

    @staticmethod
    def _insert_items(conn: sqlite3.Connection, session_id: str, rows: list[str]) -> None:
        """Insert stored items as the SDK's ``add_items`` does (its statements), inside the caller's transaction."""
        conn.execute(f"INSERT OR IGNORE INTO {_SESSIONS} (session_id) VALUES (?)", (session_id,))
        conn.executemany(f"INSERT INTO {_MESSAGES} (session_id, message_data) VALUES (?, ?)", [(session_id, d) for d in rows])
        conn.execute(f"UPDATE {_SESSIONS} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?", (session_id,))

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history in one transaction on the SDK's tables, rows as the SDK writes them."""
        validate_session_id(session_id)
        rows = [(session_id, json.dumps(entry_to_item(entry))) for entry in entries]
        with self._lock, sql_errors(str(self.db_path), 5.0):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"INSERT OR IGNORE INTO {_SESSIONS} (session_id) VALUES (?)", (session_id,))
                conn.execute(f"DELETE FROM {_MESSAGES} WHERE session_id = ?", (session_id,))
                conn.executemany(f"INSERT INTO {_MESSAGES} (session_id, message_data) VALUES (?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Read the live context, plan and write the compaction in one ``BEGIN IMMEDIATE``
        transaction on the store's own connection.

        ``BEGIN IMMEDIATE`` takes SQLite's write lock before the read, the lock every SDK
        ``add_items`` commit needs, so no append from any process falls between the read and the
        write. The rows are read and written here as the SDK reads and writes them (``ORDER BY
        id``, ``json.dumps(item)``, the session's ``updated_at``); a rewrite keeps the stored JSON
        text of every row that stays, character for character.
        """
        validate_session_id(session_id)
        with self._lock, sql_errors(str(self.db_path), 5.0):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                written = self._compact_locked(conn, session_id, plan)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return written

    def _compact_locked(self, conn: sqlite3.Connection, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """The compaction's work inside its transaction."""
        if not self._known(session_id):
            raise SessionNotFound(session_id, str(self.db_path))
        stored = conn.execute(f"SELECT message_data FROM {_MESSAGES} WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        history = list(_decode_rows(str(self.db_path), stored))
        rows = [data for (data,) in stored]
        live = select_live(history)
        write = plan(live)
        if write is None:
            return None
        write, summarized = checked_write(live, write)
        before = sum(len(data.encode("utf-8")) for data in rows)
        marker = json.dumps(entry_to_item(write.marker))
        if write.persist == "append":
            self._joining = True
            try:
                self.append(session_id, write.marker)  # through append, so whoever watches appends sees it
            finally:
                self._joining = False
            return CompactionWritten(persist="append", kept=write.kept, summarized=summarized, bytes_before=before,
                                     bytes_after=before + len(marker.encode("utf-8")))
        split = split_for_rewrite(enumerate(history), kept_positions(history, live, write.kept))
        layout = [*(rows[i] for i in split.carried), marker, *(rows[i] for i in split.kept)]
        conn.execute(f"DELETE FROM {_MESSAGES} WHERE session_id = ?", (session_id,))
        self._insert_items(conn, session_id, layout)
        return CompactionWritten(persist="rewrite", kept=write.kept, summarized=summarized, removed_entries=split.removed,
                                 removed_bytes=split.removed_bytes, carried=len(split.carried), bytes_before=before,
                                 bytes_after=sum(len(data.encode("utf-8")) for data in layout))

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction of the session (the SDK reads every row)."""
        return next((entry for entry in reversed(self._read(session_id)) if isinstance(entry, Compaction)), None)

    # -- reading ---------------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Read the session with the SDK's ``get_items`` (all rows), oldest first."""
        return iter(self._read(session_id))

    def _read(self, session_id: str) -> list[Entry]:
        validate_session_id(session_id)
        with self._lock, sql_errors(str(self.db_path), 5.0):
            if not self._known(session_id):
                raise SessionNotFound(session_id, str(self.db_path))
            items = self._run(self._session(session_id).get_items())
        entries = []
        for index, item in enumerate(items, 1):
            try:
                entries.append(item_to_entry(item, f"item {index}"))
            except InvalidEntry as exc:
                raise CorruptLogError(str(self.db_path), index, 0, str(exc)) from None
        return entries

    def read_live(self, session_id: str) -> list[Entry]:
        """The live context, selected from the whole history."""
        return select_live(self._read(session_id))

    def stats(self, session_id: str) -> SessionStats:
        """Count entries and compactions; bytes on disk is the database's with its WAL and journal.

        The database holds every session of the root (as the SDK shares one file between sessions);
        ``-shm`` is left out, as for the sqlite strategy: it is an index of the WAL, not data.
        """
        entries = self._read(session_id)
        size = database_footprint(self.db_path)
        return SessionStats(session_id=session_id, entries=len(entries), bytes_on_disk=size, path=str(self.db_path),
                            compactions=sum(isinstance(entry, Compaction) for entry in entries))

    # -- recovery and closing ----------------------------------------------------------------------

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Check the database and every row of the session (the SDK's reads would skip bad rows).

        Nothing is repaired: SQLite replays or rolls back its own WAL when it opens the file.
        """
        mode = check_mode(self.name, mode)
        validate_session_id(session_id)
        with self._lock, sql_errors(str(self.db_path), 5.0):
            if not self._known(session_id):
                raise SessionNotFound(session_id, str(self.db_path))
            problems = [row[0] for row in self._connection().execute("PRAGMA integrity_check")]
            rows = self._connection().execute(f"SELECT message_data FROM {_MESSAGES} WHERE session_id = ? ORDER BY id",
                                              (session_id,)).fetchall()
        if problems != ["ok"]:
            return RecoveryReport(path=str(self.db_path), mode=mode, loadable=False, damage_reasons=problems,
                                  error=f"{self.db_path}: PRAGMA integrity_check: {'; '.join(problems)}",
                                  actions=["PRAGMA integrity_check: damaged", "nothing changed"])
        return strict_report(str(self.db_path), mode, lambda: _decode_rows(str(self.db_path), rows),
                             "PRAGMA integrity_check and every row's JSON")

    def close(self) -> None:
        """Close every SDK session, the store's connection and its event loop. Safe to call twice."""
        with self._lock:
            loop, self._loop = self._loop, None
            if loop is None:
                return
            for session in self._sessions.values():
                session.close()
            self._sessions.clear()
            self._conn.close()
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    def __enter__(self) -> "OpenAIAgentsSqliteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _decode_rows(path: str, rows: list[tuple[str]]) -> Iterator[Entry]:
    """Decode stored rows one by one, as the SDK's reader would, but raising on the first bad one."""
    for index, (data,) in enumerate(rows, 1):
        try:
            item = json.loads(data)
        except (TypeError, ValueError) as exc:
            raise CorruptLogError(path, index, 0, f"row {index} of the session: message_data is not JSON ({exc})") from None
        try:
            yield item_to_entry(item, f"row {index}")
        except InvalidEntry as exc:
            raise CorruptLogError(path, index, 0, str(exc)) from None
