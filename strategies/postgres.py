"""Server strategy: every session in PostgreSQL (psycopg 3), one row per entry.

The store for sessions shared by many processes and machines: one server holds them, each
client talks to it over a connection (here a Unix socket). Tables and statements are in
:mod:`strategies.postgres_sql`: ``sessions`` has a row per session holding its last sequence
number, ``entries`` a row per entry with the exact bytes of its aptmem line, so unknown entry
types round-trip byte for byte. An append is one statement in autocommit, so one round trip and
one transaction: it updates the session's row (taking that row's lock, which serializes writers to
one session wherever they run) and inserts the entry with the next sequence number. The live
context is three index lookups in one repeatable-read snapshot, as in the sqlite strategy. To
run a read-plan-write (a compaction) under the session's writer lock, hold ``SELECT ... FOR UPDATE``
on the session's row in one transaction (``postgres_sql.LOCK_SESSION``, as ``replace`` does).

``synchronous_commit`` is the knob under test, set on the store's connection:

* ``on``: a commit returns once its WAL is flushed to disk (the server's default ``fsync=on``):
  durability ``per_append``, against a server crash and a power loss.
* ``off``: a commit returns before its WAL is flushed; the server's WAL writer flushes within three
  ``wal_writer_delay`` (600 ms at the default), so a *server* crash or a power loss can lose the
  last acknowledged commits, never leave a torn one. ``close`` commits one write synchronously,
  which flushes every earlier commit: durability ``batch``. A crash of the client loses nothing
  acknowledged in either setting: the server has it.

Where the server is: ``conninfo`` (a libpq connection string), else ``$APTMEM_POSTGRES``, else the
process's scratch server (:func:`strategies.postgres_server.shared_server`, started on first use).
A root is one schema in that database: ``<root>/postgres.json`` (mode 0600) names it, made on first
use, so a new store on the same root reaches the same sessions and another root sees none; a
root opened against a server that does not hold its schema is refused, never silently empty. The
sessions live in the server's files (``capabilities.storage`` is ``server``); ``bytes_on_disk`` is
the size of the root's tables with their indexes and TOAST, as the server reports it.

Recovery: ``strict`` only. The server replays its WAL when it starts after a crash; ``recover``
checks that every row of the session decodes.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Callable, TypeVar

import msgspec
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from aptmem.entries import Compaction, Entry, decode_line, encode_entry, now_ms
from aptmem.errors import ClosedStoreError, CorruptLogError, InvalidEntry, ServiceUnavailable, SessionExists, SessionNotFound, StorageError
from aptmem.fsutil import ensure_root, fsync_dir, open_read
from aptmem.ids import validate_session_id
from aptmem.store import Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write
from strategies import postgres_sql as sql
from strategies.peer_common import RECOVERY_MODES, check_mode
from strategies.postgres_server import SERVICE, shared_server
from strategies.rewrite_split import split_for_rewrite
from strategies.row_live import live_context, live_rows

__all__ = ["PostgresStore", "SYNCHRONOUS_COMMIT", "LINK_NAME", "ENV_CONNINFO"]

SYNCHRONOUS_COMMIT = ("on", "off")
LINK_NAME = "postgres.json"
#: A running server for stores given no ``conninfo``: how a harness hands its server to child processes.
ENV_CONNINFO = "APTMEM_POSTGRES"
_SCHEMA_NAME = re.compile(r"aptmem_[0-9a-f]{32}")
_PAGE = 64
_INT64 = (-(1 << 63), (1 << 63) - 1)
_T = TypeVar("_T")


class RootLink(msgspec.Struct, forbid_unknown_fields=True):
    """What a root holds: the schema its sessions live in."""

    schema: str


class PostgresStore:
    """Sessions as rows in a PostgreSQL schema, one schema per root (see the module docstring)."""

    name = "postgres"

    def __init__(self, root: str | os.PathLike[str], *, synchronous_commit: str = "on", conninfo: str | None = None,
                 connect_timeout: int = 10) -> None:
        synchronous_commit = str(synchronous_commit).lower()
        if synchronous_commit not in SYNCHRONOUS_COMMIT:
            raise ValueError(f"unknown synchronous_commit {synchronous_commit!r}; choose one of {', '.join(SYNCHRONOUS_COMMIT)}")
        self.root = ensure_root(root)
        self.synchronous_commit = synchronous_commit
        self.capabilities = Capabilities(
            durability="per_append" if synchronous_commit == "on" else "batch",
            recovery_modes=RECOVERY_MODES,
            multi_process_safe=True,  # the session row's lock serializes writers, across machines too
            storage="server",
        )
        server = conninfo or os.environ.get(ENV_CONNINFO) or shared_server().conninfo
        params = {key: value for key, value in conninfo_to_dict(server).items() if key != "password"}
        # The caller's own options (a statement timeout, say) stay; ours come after, so they win.
        options = f"{params.get('options', '')} -c synchronous_commit={synchronous_commit}".strip()
        base = make_conninfo(server, connect_timeout=connect_timeout, options=options)
        self.schema = _read_link(self.root / LINK_NAME) or self._make_root(base)
        self.conninfo = make_conninfo(base, options=f"{options} -c search_path={self.schema}")
        #: where the sessions are, for reports: the server (without a password) and the schema
        self.location = make_conninfo(**params) + f" schema={self.schema}"
        # Reentrant: a compaction holding it appends its marker through ``append``, whose statement joins
        # the compaction's transaction on the same connection (and whoever watches appends sees it).
        self._lock = threading.RLock()
        self._known: set[str] = set()
        self._touched: set[str] = set()
        self._closed = False
        self._conn: psycopg.Connection[Any] | None = None
        with self._lock:
            self._connection()

    # -- the connection --------------------------------------------------------------------------

    def _make_root(self, base: str) -> str:
        """Make a new schema with the store's tables, then link the root to it; return the root's schema.

        The schema exists before the link names it, so whoever reads a link finds its schema. Two
        processes making one root at once: the first link wins, the loser drops its empty schema.
        """
        schema = f"aptmem_{secrets.token_hex(16)}"
        with self._raw(base) as conn, sql.pg_errors(f"{self.root}: making schema {schema}"), conn.transaction():
            conn.execute(f'CREATE SCHEMA "{schema}"')
            conn.execute(f'SET LOCAL search_path = "{schema}"')
            for statement in sql.SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
        if _write_link(self.root, schema):
            return schema
        with self._raw(base) as conn, sql.pg_errors(f"{self.root}: dropping schema {schema}"):
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        winner = _read_link(self.root / LINK_NAME)
        if winner is None:
            raise StorageError(errno.EIO, f"{self.root / LINK_NAME}: lost the race to link the root, yet no link is there")
        return winner

    def _raw(self, conninfo: str) -> psycopg.Connection[Any]:
        """A new autocommit connection, or :class:`ServiceUnavailable` naming the root."""
        try:
            return psycopg.connect(conninfo, autocommit=True)
        except psycopg.OperationalError as exc:
            raise ServiceUnavailable(SERVICE, f"cannot connect for {self.root}: {str(exc).strip()}", "is the server running?") from None

    def _connect(self) -> psycopg.Connection[Any]:
        """Connect, and check that the server holds the root's schema (a new server would not)."""
        conn = self._raw(self.conninfo)
        try:
            with sql.pg_errors(self.location):
                found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)).fetchone()
        except BaseException:
            conn.close()
            raise
        if found is None:
            conn.close()
            raise ServiceUnavailable(SERVICE, f"{self.root} keeps its sessions in schema {self.schema}, which the server "
                                              f"({self.location}) does not hold; nothing was created",
                                     "open the root with the server it was made on")
        return conn

    def _connection(self) -> psycopg.Connection[Any]:
        """The open connection (lock held); a connection broken by a server restart is replaced."""
        if self._closed:
            raise ClosedStoreError("the store is closed")
        if self._conn is None or self._conn.broken or self._conn.closed:
            if self._conn is not None:
                self._conn.close()
            self._conn = self._connect()
        return self._conn

    def _run(self, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """Run ``work(conn)`` with the lock held, psycopg's errors turned into the library's."""
        with self._lock:
            conn = self._connection()
            with sql.pg_errors(self.location):
                return work(conn)

    def _require(self, conn: psycopg.Connection[Any], session_id: str) -> None:
        """Raise :class:`SessionNotFound` unless the session exists."""
        if session_id in self._known:
            return
        if conn.execute("SELECT 1 FROM sessions WHERE session_id = %s", (session_id,)).fetchone() is None:
            raise SessionNotFound(session_id, self.location)
        self._known.add(session_id)

    # -- sessions --------------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create an empty session, refusing one that exists."""
        validate_session_id(session_id)

        def work(conn: psycopg.Connection[Any]) -> None:
            try:
                conn.execute("INSERT INTO sessions (session_id, created_ms) VALUES (%s, %s)", (session_id, now_ms()))
            except psycopg.errors.UniqueViolation:
                raise SessionExists(session_id, self.location) from None

        self._run(work)
        self._known.add(session_id)

    def exists(self, session_id: str) -> bool:
        """Tell whether the session exists."""
        validate_session_id(session_id)
        try:
            self._run(lambda conn: self._require(conn, session_id))
        except SessionNotFound:
            return False
        return True

    def sessions(self) -> list[str]:
        """List the ids of every session of the root, sorted."""
        rows = self._run(lambda conn: conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall())
        return [row[0] for row in rows]

    # -- writing ---------------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry: one statement, one transaction, one round trip."""
        validate_session_id(session_id)
        compaction, ts, ident, payload = _row(entry)
        self._write(session_id, sql.APPEND, {"sid": session_id, "c": compaction, "ts": ts, "id": ident, "p": payload})

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries in one statement (one transaction)."""
        validate_session_id(session_id)
        rows = [_row(entry) for entry in entries]
        if rows:
            self._write(session_id, sql.APPEND_MANY, _columns(session_id, rows))

    def _write(self, session_id: str, statement: str, params: dict[str, Any]) -> None:
        """Run an append statement; a session this store has not seen gets its row in the same transaction."""

        def work(conn: psycopg.Connection[Any]) -> None:
            if session_id in self._known:
                inserted = conn.execute(statement, params).rowcount
            else:
                with conn.transaction():
                    conn.execute(sql.ADD_SESSION, (session_id, now_ms()))
                    inserted = conn.execute(statement, params).rowcount
            if inserted != params.get("n", 1):
                raise StorageError(errno.EIO, f"{self.location}: session {session_id}: {inserted} rows stored, not {params.get('n', 1)}")

        self._run(work)
        self._known.add(session_id)
        self._touched.add(session_id)

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history in one transaction, holding the session's row lock."""
        validate_session_id(session_id)
        rows = [_row(entry) for entry in entries]  # a bad entry or a failing producer changes nothing

        def work(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                conn.execute(sql.ADD_SESSION, (session_id, now_ms()))
                conn.execute(sql.LOCK_SESSION, (session_id,))
                conn.execute(sql.DELETE_ENTRIES, (session_id,))
                conn.execute(sql.RESET_SEQ, (session_id,))
                if rows:
                    conn.execute(sql.APPEND_MANY, _columns(session_id, rows))

        self._run(work)
        self._known.add(session_id)
        self._touched.add(session_id)

    # -- reading ---------------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Stream the entries oldest first, a page of rows per statement (checked now, not on ``next``)."""
        validate_session_id(session_id)
        self._run(lambda conn: self._require(conn, session_id))
        return (self._decode(payload, seq) for seq, payload in self._rows(session_id))

    def _rows(self, session_id: str) -> Iterator[tuple[int, bytes]]:
        after = 0
        while True:
            rows = self._run(lambda conn: conn.execute(sql.PAGE_AFTER, (session_id, after, _PAGE)).fetchall())
            yield from rows
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    def read_live(self, session_id: str) -> list[Entry]:
        """The live context through the indexes, in one repeatable-read snapshot."""
        validate_session_id(session_id)

        def work(conn: psycopg.Connection[Any]) -> list[Entry]:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                self._require(conn, session_id)
                return live_context(conn, session_id, sql.LIVE, self._decode, self.location, key=_id_bytes)

        return self._run(work)

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction row (one lookup in the partial index of compactions)."""
        validate_session_id(session_id)

        def work(conn: psycopg.Connection[Any]) -> Compaction | None:
            self._require(conn, session_id)
            latest = conn.execute(sql.LATEST_COMPACTION, (session_id,)).fetchone()
            entry = None if latest is None else self._decode(latest[1], latest[0])
            return entry if isinstance(entry, Compaction) else None

        return self._run(work)

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Read the live context, plan and write the compaction in one transaction holding the
        session's row lock (``SELECT ... FOR UPDATE``), the lock every append's ``UPDATE`` takes:
        no append from any process or machine falls between the read and the write."""
        validate_session_id(session_id)

        def work(conn: psycopg.Connection[Any]) -> CompactionWritten | None:
            with conn.transaction():
                self._require(conn, session_id)
                conn.execute(sql.LOCK_SESSION, (session_id,))
                # Read committed: every statement from here sees each append committed before the lock.
                rows = live_rows(conn, session_id, sql.LIVE, self._decode, self.location, key=_id_bytes)
                live = [entry for _, entry in rows]
                write = plan(live)
                if write is None:
                    return None
                write, summarized = checked_write(live, write)
                before = conn.execute(sql.PAYLOAD_BYTES, (session_id,)).fetchone()[0]
                marker = _row(write.marker)
                if write.persist == "append":
                    self.append(session_id, write.marker)  # same connection, inside this transaction
                    return CompactionWritten(persist="append", kept=write.kept, summarized=summarized, bytes_before=before,
                                             bytes_after=before + len(marker[3]))
                kept = {seq for seq, _ in rows[len(rows) - write.kept :]} if write.kept else set()
                stored = {seq: (bool(c), ts, ident, bytes(payload)) for seq, c, ts, ident, payload in conn.execute(sql.FULL_ROWS, (session_id,))}
                split = split_for_rewrite(((seq, self._decode(row[3], seq)) for seq, row in stored.items()), kept)
                layout = [*(stored[seq] for seq in split.carried), marker, *(stored[seq] for seq in split.kept)]
                conn.execute(sql.DELETE_ENTRIES, (session_id,))
                conn.execute(sql.RESET_SEQ, (session_id,))
                conn.execute(sql.APPEND_MANY, _columns(session_id, layout))
                return CompactionWritten(persist="rewrite", kept=write.kept, summarized=summarized, removed_entries=split.removed,
                                         removed_bytes=split.removed_bytes, carried=len(split.carried), bytes_before=before,
                                         bytes_after=sum(len(row[3]) for row in layout))

        written = self._run(work)
        self._touched.add(session_id)
        return written

    def stats(self, session_id: str) -> SessionStats:
        """Count the session's rows; bytes on disk is the size of the root's tables as the server reports it."""
        validate_session_id(session_id)

        def work(conn: psycopg.Connection[Any]) -> tuple[int, int, int]:
            self._require(conn, session_id)
            entries, compactions = conn.execute(sql.COUNTS, (session_id,)).fetchone()
            return entries, compactions, conn.execute(sql.SIZE).fetchone()[0]

        entries, compactions, size = self._run(work)
        return SessionStats(session_id=session_id, entries=entries, compactions=compactions, bytes_on_disk=size, path=self.location)

    def _decode(self, payload: bytes, seq: int | None = None) -> Entry:
        try:
            return decode_line(payload)
        except InvalidEntry as exc:
            raise CorruptLogError(self.location, seq or 0, 0, f"row {seq}: {exc}") from None

    # -- recovery and closing ----------------------------------------------------------------------

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Check that every row of the session decodes (the server replays its own WAL); repair nothing."""
        mode = check_mode(self.name, mode)
        validate_session_id(session_id)
        self._run(lambda conn: self._require(conn, session_id))
        report = RecoveryReport(path=self.location, mode=mode, actions=["the server replayed its WAL when it started"])
        for seq, payload in self._rows(session_id):
            try:
                decode_line(payload)
                report.entries += 1
            except InvalidEntry as exc:
                report.damaged_lines.append(seq)
                report.damage_reasons.append(f"row {seq}: {exc}")
        report.good_lines = report.entries
        if report.damaged_lines:
            report.loadable, report.entries = False, 0
            report.error = f"{self.location}: {len(report.damaged_lines)} rows do not decode"
            report.refused_line = report.damaged_lines[0]
        return report

    def close(self) -> None:
        """Flush asynchronous commits (synchronous_commit=off), close the connection. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is None:
                return
            try:
                if self.synchronous_commit == "off" and self._touched and not conn.broken:
                    with sql.pg_errors(self.location), conn.transaction():
                        conn.execute("SET LOCAL synchronous_commit = on")
                        conn.execute(sql.FLUSH, (next(iter(self._touched)),))
            finally:
                conn.close()

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(entry: Entry) -> tuple[bool, int | None, bytes | None, bytes]:
    """The column values of an entry: is it a compaction, its ts, its id, the exact bytes of its line."""
    ts = entry.ts
    if ts is not None and not (_INT64[0] <= ts <= _INT64[1]):
        ts = None  # the column is only for queries; the payload keeps the real value
    ident = _id_bytes(entry.id) if entry.id is not None else None
    return isinstance(entry, Compaction), ts, ident, encode_entry(entry)


def _id_bytes(ident: str) -> bytes:
    """An entry id as its ``entry_id`` column holds it (bytea: an id may hold a NUL)."""
    return ident.encode("utf-8", "surrogatepass")


def _columns(session_id: str, rows: list[tuple[bool, int | None, bytes | None, bytes]]) -> dict[str, Any]:
    """The parameters of ``APPEND_MANY``: one array per column."""
    return {"sid": session_id, "n": len(rows), "c": [r[0] for r in rows], "ts": [r[1] for r in rows],
            "id": [r[2] for r in rows], "p": [r[3] for r in rows]}


def _read_link(path: Any) -> str | None:
    """The schema a root's link names (None: no link yet); a damaged or foreign link is an error."""
    try:
        with open(open_read(path), "rb") as stream:
            link = msgspec.json.decode(stream.read(), type=RootLink)
    except FileNotFoundError:
        return None
    except (msgspec.DecodeError, OSError) as exc:
        raise CorruptLogError(str(path), 1, 0, f"not a postgres root link: {exc}") from None
    if not _SCHEMA_NAME.fullmatch(link.schema):
        raise CorruptLogError(str(path), 1, 0, f"not a schema this store makes: {link.schema!r}")
    return link.schema


def _write_link(root: Any, schema: str) -> bool:
    """Link ``root`` to ``schema`` (file 0600, synced); False when another process linked it first.

    Written to a temp file and hard-linked into place: a reader never sees half a file, and a link
    already there is never replaced.
    """
    tmp = root / f".{LINK_NAME}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, msgspec.json.encode(RootLink(schema=schema)))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, root / LINK_NAME)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    fsync_dir(root)
    return True
