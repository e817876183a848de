"""The SQL of the postgres strategy: its schema, its statements, and psycopg's errors as the library's.

Every statement of an append is one statement, so with autocommit it is one round trip and one
transaction: the ``UPDATE`` of the session's row takes that row's lock (so writers to one session
are serialized, across processes and machines) and hands out the sequence numbers, and the
``INSERT`` in the same statement stores the rows.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from aptmem.errors import CorruptLogError, StorageError
from strategies.row_live import LiveQueries

__all__ = ["SCHEMA", "APPEND", "APPEND_MANY", "ADD_SESSION", "LATEST_COMPACTION", "KEPT_BEFORE", "KEPT_FROM", "FROM_SEQ", "ALL_ROWS", "FULL_ROWS", "PAYLOAD_BYTES",
           "PAGE_AFTER", "LIVE", "FLUSH", "SIZE", "COUNTS", "LOCK_SESSION", "DELETE_ENTRIES", "RESET_SEQ", "pg_errors"]

# ``payload`` holds the exact bytes of the entry's aptmem line, so unknown entries round-trip byte
# for byte; ``STORAGE EXTERNAL`` keeps large ones out of line without compressing them, as every
# other strategy stores its bytes (compression would be a variant of its own). ``entry_id`` is
# bytea, not text: an id may hold a NUL, which text cannot.
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id text PRIMARY KEY,
    created_ms bigint NOT NULL,
    last_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entries (
    session_id text NOT NULL,
    seq bigint NOT NULL,
    is_compaction boolean NOT NULL,
    ts bigint,
    entry_id bytea,
    payload bytea NOT NULL,
    PRIMARY KEY (session_id, seq)
);
ALTER TABLE entries ALTER COLUMN payload SET STORAGE EXTERNAL;
CREATE INDEX IF NOT EXISTS entries_compactions ON entries (session_id, seq) WHERE is_compaction;
CREATE INDEX IF NOT EXISTS entries_by_id ON entries (session_id, entry_id, seq) WHERE entry_id IS NOT NULL;
"""

ADD_SESSION = "INSERT INTO sessions (session_id, created_ms) VALUES (%s, %s) ON CONFLICT (session_id) DO NOTHING"

APPEND = """
WITH s AS (UPDATE sessions SET last_seq = last_seq + 1 WHERE session_id = %(sid)s RETURNING last_seq)
INSERT INTO entries (session_id, seq, is_compaction, ts, entry_id, payload)
SELECT %(sid)s, s.last_seq, %(c)s, %(ts)s, %(id)s, %(p)s FROM s
"""

APPEND_MANY = """
WITH s AS (UPDATE sessions SET last_seq = last_seq + %(n)s WHERE session_id = %(sid)s RETURNING last_seq)
INSERT INTO entries (session_id, seq, is_compaction, ts, entry_id, payload)
SELECT %(sid)s, s.last_seq - %(n)s + r.k, r.c, r.ts, r.id, r.p
FROM s, unnest(%(c)s::boolean[], %(ts)s::bigint[], %(id)s::bytea[], %(p)s::bytea[]) WITH ORDINALITY AS r(c, ts, id, p, k)
"""

LOCK_SESSION = "SELECT last_seq FROM sessions WHERE session_id = %s FOR UPDATE"
DELETE_ENTRIES = "DELETE FROM entries WHERE session_id = %s"
RESET_SEQ = "UPDATE sessions SET last_seq = 0 WHERE session_id = %s"
LATEST_COMPACTION = "SELECT seq, payload FROM entries WHERE session_id = %s AND is_compaction ORDER BY seq DESC LIMIT 1"
KEPT_FROM = "SELECT max(seq) FROM entries WHERE session_id = %s AND entry_id = %s AND seq < %s"
# A compaction's kept_before N: the N rows nearest before it that are not compactions.
KEPT_BEFORE = "SELECT seq, payload FROM entries WHERE session_id = %s AND seq < %s AND NOT is_compaction ORDER BY seq DESC LIMIT %s"
FROM_SEQ = "SELECT seq, is_compaction, payload FROM entries WHERE session_id = %s AND seq >= %s AND seq <> %s ORDER BY seq"
ALL_ROWS = "SELECT seq, payload FROM entries WHERE session_id = %s ORDER BY seq"
#: every column of a session's rows, for a rewrite that keeps their bytes
FULL_ROWS = "SELECT seq, is_compaction, ts, entry_id, payload FROM entries WHERE session_id = %s ORDER BY seq"
PAYLOAD_BYTES = "SELECT coalesce(sum(length(payload)), 0) FROM entries WHERE session_id = %s"
PAGE_AFTER = "SELECT seq, payload FROM entries WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s"
LIVE = LiveQueries(LATEST_COMPACTION, KEPT_BEFORE, KEPT_FROM, FROM_SEQ, ALL_ROWS)
COUNTS = "SELECT count(*), count(*) FILTER (WHERE is_compaction) FROM entries WHERE session_id = %s"
SIZE = "SELECT pg_total_relation_size('entries') + pg_total_relation_size('sessions')"
#: A write committed synchronously: its commit waits until the WAL is flushed up to it, so every
#: asynchronous commit before it is durable too (what ``close`` does under synchronous_commit=off).
FLUSH = "UPDATE sessions SET last_seq = last_seq WHERE session_id = %s"


@contextmanager
def pg_errors(where: str) -> Iterator[None]:
    """Turn psycopg's errors into the library's: a full disk, damage, any other failure (a lost server too)."""
    try:
        yield
    except psycopg.errors.UniqueViolation:
        raise  # a constraint: the caller's business (create turns it into SessionExists)
    except psycopg.errors.DiskFull as exc:
        raise StorageError(errno.ENOSPC, f"{where}: {exc}") from exc
    except psycopg.errors.DataCorrupted as exc:
        raise CorruptLogError(where, 0, 0, f"damaged database: {exc}") from exc
    except psycopg.Error as exc:  # also a connection lost mid-statement: the write is not acknowledged
        raise StorageError(errno.EIO, f"{where}: {exc}") from exc
