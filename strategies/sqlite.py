"""Baseline strategy: every session in one SQLite database, one row per entry.

Tables (see ``strategies.sqlite_sql.SCHEMA``): ``sessions`` lists every session (so an empty one exists), and
``entries`` holds one row per entry: session id, a per-session sequence number from 1, the
type, the timestamp, the entry's id, and ``payload``, the exact bytes of the entry's log line
(without the newline), so unknown entry types round-trip byte-for-byte.

Reading the live context is indexed lookups, never a scan of the history: the latest
compaction (a partial index holds only compaction rows), then the rows it keeps (its
``kept_before`` rows before it, a backward range scan of the primary key; or, from older
writers, from the row its ``first_kept`` names, through an index on the entry id), then a range
scan of the primary key after it.

A compaction (``compact``) is one ``BEGIN IMMEDIATE`` transaction: read the live context, plan,
write; no append can come between. A rewrite keeps the payloads of the kept and carried rows
byte for byte.

Each append is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``); ``append_many`` and
``replace`` are one transaction each. ``journal_mode`` (WAL, DELETE) and ``synchronous`` (OFF,
NORMAL, FULL, EXTRA) are the knobs under test; SQLite's own locking makes several processes safe.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from aptmem.entries import Compaction, Entry, decode_line, encode_entry, entry_type, now_ms
from aptmem.errors import ClosedStoreError, CorruptLogError, InvalidEntry, SessionExists, SessionNotFound
from aptmem.fsutil import ensure_root, open_append
from aptmem.ids import validate_session_id
from aptmem.store import Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write
from strategies import sqlite_compaction as compaction_sql
from strategies import sqlite_sql as sql
from strategies.row_live import live_rows

__all__ = ["SqliteStore", "JOURNAL_MODES", "SYNCHRONOUS"]

JOURNAL_MODES = ("WAL", "DELETE")
SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_RECOVERY_MODES = ("strict",)
# Pages of rows streamed by iter_entries: each page is one short statement, so no read
# transaction stays open between pages (an open read would block checkpoints in WAL mode and
# writers' commits in DELETE mode).
_PAGE = 64
_INT64 = (-(1 << 63), (1 << 63) - 1)

_Row = tuple[str, int | None, str | None, bytes]  # type, ts, entry_id, payload
_T = TypeVar("_T")


def _durability(journal_mode: str, synchronous: str) -> str:
    """What a commit promises under these settings (see the comment where it is used)."""
    if synchronous == "EXTRA" or (synchronous == "FULL" and journal_mode == "WAL"):
        return "per_append"
    return "process"


class SqliteStore:
    """Sessions as rows of one SQLite database under ``root`` (see the module docstring)."""

    name = "sqlite"

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        journal_mode: str = "WAL",
        synchronous: str = "NORMAL",
        db_name: str = "sessions.sqlite3",
        busy_timeout: float = 10.0,
    ) -> None:
        journal_mode, synchronous = str(journal_mode).upper(), str(synchronous).upper()
        if journal_mode not in JOURNAL_MODES:
            raise ValueError(f"unknown journal_mode {journal_mode!r}; choose one of {', '.join(JOURNAL_MODES)}")
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"unknown synchronous {synchronous!r}; choose one of {', '.join(SYNCHRONOUS)}")
        if not db_name or os.path.basename(db_name) != db_name or db_name.startswith("."):
            raise ValueError(f"db_name must be a plain file name, not {db_name!r}")
        self.root = ensure_root(root)
        self.db_path = self.root / db_name
        self.journal_mode = journal_mode
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self.capabilities = Capabilities(
            # In WAL mode FULL syncs the WAL at every commit: durable. In DELETE mode a commit is
            # the unlink of the rollback journal, and only EXTRA fsyncs the folder after it; at
            # FULL a power loss can undo the unlink, bring the journal back and roll an
            # acknowledged commit back (the crash-state explorer found exactly that), so DELETE
            # needs EXTRA to promise per-append durability. NORMAL survives only a process crash
            # in both modes (in WAL a power loss may roll back the last commits; in DELETE
            # SQLite's docs warn of corruption on some file systems). OFF leaves syncing to the OS.
            durability=_durability(journal_mode, synchronous),
            recovery_modes=_RECOVERY_MODES,
            multi_process_safe=True,  # SQLite's file locks serialize writers across processes
        )
        # Sessions known to exist: sessions are never deleted, so this cache cannot go stale,
        # and it spares appends an INSERT OR IGNORE into ``sessions``.
        self._known: set[str] = set()
        # check_same_thread=False so the store can be used (and closed) from any thread, as the
        # JSONL store can; this lock keeps two threads' transactions from interleaving on the
        # one connection.
        self._lock = threading.RLock()
        # Set by ``compact`` for the one append that ends its transaction (see ``_run``).
        self._joining = False
        self._conn: sqlite3.Connection | None = self._connect()

    # -- connection and transactions -------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """Open the database (created 0600, never through a symlink) and apply the settings."""
        # SQLite would create the file 0644; creating it first makes it 0600, and SQLite gives
        # its -wal, -shm and -journal files the database file's permissions.
        os.close(open_append(self.db_path))
        with sql.sql_errors(str(self.db_path), self.busy_timeout):
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so one append is exactly
            # one transaction and nothing is left open between calls.
            conn = sqlite3.connect(self.db_path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            try:
                mode = self._set_journal_mode(conn)
                if str(mode).upper() != self.journal_mode:
                    raise sqlite3.OperationalError(f"could not set journal_mode={self.journal_mode} (got {mode})")
                conn.execute(f"PRAGMA synchronous={self.synchronous}")
                conn.execute("BEGIN IMMEDIATE")
                for statement in sql.SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("COMMIT")
            except BaseException:
                conn.close()
                raise
        return conn

    def _set_journal_mode(self, conn: sqlite3.Connection) -> str:
        """Set the journal mode, waiting up to ``busy_timeout`` for other connections; return the mode set.

        Changing the journal mode of a new database needs an exclusive lock, and when another
        process is doing the same at that moment SQLite answers ``database is locked`` at once,
        without calling the busy handler (a fresh WAL database opened by several writers at once
        failed this way under load). So the busy wait is done here, with a short backoff.
        """
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.001
        while True:
            try:
                return str(conn.execute(f"PRAGMA journal_mode={self.journal_mode}").fetchone()[0])
            except sqlite3.OperationalError as exc:
                busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(2 * delay, 0.05)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ClosedStoreError("the store is closed")
        return self._conn

    def _run(self, write: bool, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work(conn)`` in one transaction (a write one if ``write``) and return its result.

        The marker append of a compaction (``_joining``) runs inside the compaction's open
        transaction and commits it: that append returns only once the compaction is committed,
        as every append does.
        """
        if self._joining:
            self._joining = False
            conn = self._connection()
            result = work(conn)
            conn.execute("COMMIT")
            return result
        with self._lock, sql.sql_errors(str(self.db_path), self.busy_timeout):
            conn = self._connection()
            # IMMEDIATE takes the write lock up front, so the max(seq) read inside an append
            # cannot be raced by another process; a deferred BEGIN gives reads one snapshot.
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                result = work(conn)
                if conn.in_transaction:  # a compaction's marker append may have committed it
                    conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # the first error is the one to report; SQLite rolls back on its own
                raise
            return result

    def _require(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Raise :class:`SessionNotFound` unless the session exists (connection lock held)."""
        if session_id in self._known:
            return
        if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone() is None:
            raise SessionNotFound(session_id, str(self.db_path))
        self._known.add(session_id)

    def _ensure(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Make sure the session has its row in ``sessions`` (inside the caller's transaction)."""
        if session_id not in self._known:
            conn.execute("INSERT OR IGNORE INTO sessions (session_id, created_ms) VALUES (?, ?)", (session_id, now_ms()))

    # -- sessions --------------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create an empty session, refusing one that exists."""
        validate_session_id(session_id)

        def work(conn: sqlite3.Connection) -> None:
            try:
                conn.execute("INSERT INTO sessions (session_id, created_ms) VALUES (?, ?)", (session_id, now_ms()))
            except sqlite3.IntegrityError:
                raise SessionExists(session_id, str(self.db_path)) from None

        self._run(True, work)
        self._known.add(session_id)

    def exists(self, session_id: str) -> bool:
        """Tell whether the session exists."""
        validate_session_id(session_id)
        if session_id in self._known:
            return True
        try:
            self._run(False, lambda conn: self._require(conn, session_id))
        except SessionNotFound:
            return False
        return True

    def sessions(self) -> list[str]:
        """List the ids of every session in the database, sorted."""
        rows = self._run(False, lambda conn: conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall())
        return [row[0] for row in rows]

    # -- writing ---------------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry in one transaction."""
        validate_session_id(session_id)
        self._insert(session_id, [_row(entry)], replace=False)

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries in one transaction."""
        validate_session_id(session_id)
        rows = [_row(entry) for entry in entries]
        if rows:
            self._insert(session_id, rows, replace=False)

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history in one transaction: delete the session's rows, insert the new ones."""
        validate_session_id(session_id)
        # Encode everything before the transaction starts: a bad entry (or a failing iterable)
        # then changes nothing, and the write lock is held only for the database work.
        self._insert(session_id, [_row(entry) for entry in entries], replace=True)

    def _insert(self, session_id: str, rows: list[_Row], *, replace: bool) -> None:
        """Insert ``rows`` after the session's last row (or instead of all of them) in one transaction."""

        def work(conn: sqlite3.Connection) -> None:
            self._ensure(conn, session_id)
            if replace:
                conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
                last = 0
            else:
                # Read inside the write transaction, so another process cannot take the same seq.
                last = conn.execute("SELECT coalesce(max(seq), 0) FROM entries WHERE session_id = ?", (session_id,)).fetchone()[0]
            if len(rows) == 1:
                conn.execute(sql.INSERT, (session_id, last + 1, *rows[0]))
            else:
                conn.executemany(sql.INSERT, [(session_id, last + n, *row) for n, row in enumerate(rows, 1)])

        self._run(True, work)
        self._known.add(session_id)

    # -- reading ---------------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Stream the entries oldest first, a page of rows at a time.

        The session is checked now, not on the first ``next``. Pages are separate reads: an
        append during the iteration shows up at its end, like a growing file.
        """
        validate_session_id(session_id)
        self._run(False, lambda conn: self._require(conn, session_id))
        return self._pages(session_id)

    def _pages(self, session_id: str) -> Iterator[Entry]:
        for seq, payload in self._rows(session_id):
            yield self._decode(payload, seq)

    def _rows(self, session_id: str) -> Iterator[tuple[int, bytes]]:
        """Yield the session's (seq, payload) rows in order, one page per short read."""
        after = 0
        while True:
            rows = self._run(False, lambda conn: conn.execute(sql.PAGE_AFTER, (session_id, after, _PAGE)).fetchall())
            yield from rows
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    def read_live(self, session_id: str) -> list[Entry]:
        """Return the live context through the indexes, in one read snapshot.

        Same result as :func:`aptmem.store.select_live` over the whole history.
        """
        validate_session_id(session_id)

        def work(conn: sqlite3.Connection) -> list[Entry]:
            self._require(conn, session_id)
            return [entry for _, entry in self._live_rows(conn, session_id)]

        return self._run(False, work)

    def _live_rows(self, conn: sqlite3.Connection, session_id: str) -> list[tuple[int, Entry]]:
        """(seq, entry) of every row of the live context, in live order (inside a transaction)."""
        return live_rows(conn, session_id, sql.LIVE, self._decode, str(self.db_path))

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction row (one lookup in the partial index of compactions)."""
        validate_session_id(session_id)

        def work(conn: sqlite3.Connection) -> Compaction | None:
            self._require(conn, session_id)
            latest = conn.execute(sql.LATEST_COMPACTION, (session_id,)).fetchone()
            entry = None if latest is None else self._decode(latest[1], latest[0])
            return entry if isinstance(entry, Compaction) else None

        return self._run(False, work)

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Read the live context, plan and write the compaction in one write transaction."""
        validate_session_id(session_id)

        def work(conn: sqlite3.Connection) -> CompactionWritten | None:
            self._require(conn, session_id)
            rows = self._live_rows(conn, session_id)
            live = [entry for _, entry in rows]
            write = plan(live)
            if write is None:
                return None
            write, summarized = checked_write(live, write)
            before = compaction_sql.payload_bytes(conn, session_id)
            marker = _row(write.marker)
            if write.persist == "append":
                # Through ``append`` (so whoever watches appends sees the marker's), joining this
                # transaction and committing it: nothing can come between the read and the marker.
                self._joining = True
                try:
                    self.append(session_id, write.marker)
                finally:
                    self._joining = False
                return CompactionWritten(persist="append", kept=write.kept, summarized=summarized,
                                         bytes_before=before, bytes_after=before + len(marker[3]))
            return compaction_sql.rewrite(conn, session_id, [seq for seq, _ in rows], write.kept, marker, summarized, before)

        return self._run(True, work)

    def stats(self, session_id: str) -> SessionStats:
        """Count the session's rows and compactions; bytes on disk is the database's footprint.

        The database holds every session of the root, so ``bytes_on_disk`` is the size of the
        database file plus its WAL or rollback journal (the session's own cost when it is the
        only one). The ``-shm`` file is left out: it is SQLite's shared-memory index of the
        WAL, not stored data, and is removed when the last connection closes.
        """
        validate_session_id(session_id)

        def work(conn: sqlite3.Connection) -> tuple[int, int]:
            self._require(conn, session_id)
            entries = conn.execute("SELECT count(*) FROM entries WHERE session_id = ?", (session_id,)).fetchone()[0]
            compactions = conn.execute(f"SELECT count(*) FROM entries WHERE session_id = ? AND {sql.IS_COMPACTION}", (session_id,)).fetchone()[0]
            return entries, compactions

        entries, compactions = self._run(False, work)
        return SessionStats(session_id=session_id, entries=entries, compactions=compactions, bytes_on_disk=self.footprint(), path=str(self.db_path))

    def footprint(self) -> int:
        """Return the bytes on disk of the database, its WAL and its rollback journal."""
        return sql.database_footprint(self.db_path)

    def _decode(self, payload: bytes, seq: int | None = None) -> Entry:
        """Decode a row's payload; a payload that is not an entry is damage in the database."""
        try:
            return decode_line(payload)
        except InvalidEntry as exc:
            raise CorruptLogError(str(self.db_path), seq or 0, 0, f"row {seq}: {exc}") from None

    # -- recovery and closing --------------------------------------------------------------------

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Check the database (``PRAGMA integrity_check``) and every row of the session; repair nothing.

        ``integrity_check``, not ``quick_check``: only it compares every index with its table, and
        ``read_live`` finds the live context through indexes (a power loss with synchronous=OFF can
        leave the compaction index without a row the table has: quick_check calls that "ok").

        SQLite rolls back or replays its own journal when the database is opened, so there is
        nothing for us to repair; this reports whether the session can be read in full.
        """
        mode = mode or "strict"
        if mode not in _RECOVERY_MODES:
            raise ValueError(f"sqlite offers recovery modes {', '.join(_RECOVERY_MODES)}, not {mode!r}")
        validate_session_id(session_id)
        report = RecoveryReport(path=str(self.db_path), mode=mode)
        try:
            problems = self._run(False, lambda conn: self._check(conn, session_id))
            report.actions.append("PRAGMA integrity_check: " + ("ok" if not problems else f"{len(problems)} problems"))
            report.damage_reasons.extend(problems)
            for _ in self._pages_checked(session_id, report):
                report.entries += 1
        except CorruptLogError as exc:
            report.error = str(exc)
            report.damage_reasons.append(exc.reason)
        report.loadable = report.error is None and not report.damage_reasons
        if not report.loadable:
            report.entries = 0
        report.good_lines = report.entries
        return report

    def _check(self, conn: sqlite3.Connection, session_id: str) -> list[str]:
        self._require(conn, session_id)
        rows = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows

    def _pages_checked(self, session_id: str, report: RecoveryReport) -> Iterator[Entry]:
        """Stream the session's entries, recording rows that do not decode instead of raising."""
        for seq, payload in self._rows(session_id):
            try:
                yield self._decode(payload, seq)
            except CorruptLogError as exc:
                report.damaged_lines.append(seq)
                report.damage_reasons.append(exc.reason)

    def close(self) -> None:
        """Close the connection (the last one out checkpoints the WAL). Safe to call twice."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()

    def __enter__(self) -> "SqliteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(entry: Entry) -> _Row:
    """The column values of an entry: type, ts, id, and the exact bytes of its line."""
    ts = entry.ts
    if ts is not None and not (_INT64[0] <= ts <= _INT64[1]):
        ts = None  # the column is only for queries; the payload keeps the real value
    return entry_type(entry), ts, entry.id, encode_entry(entry)
