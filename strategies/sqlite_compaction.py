"""The SQL side of the sqlite strategy's live context and compactions.

Reading the live context (:func:`strategies.row_live.live_rows`, with this strategy's :data:`~strategies.sqlite_sql.LIVE`) is indexed lookups only: the latest compaction (a
partial index holds only compaction rows), the rows it keeps (``kept_before`` rows before it, a
backward range scan of the primary key; or from the row an older writer's ``first_kept`` names,
through the index on entry ids), then a range scan after it. A rewrite (:func:`rewrite`) runs
inside the compaction's write transaction and keeps the payloads of the rows that stay byte for
byte: the carried ones (entries no summary stands for), then the marker, then the kept ones.
"""

from __future__ import annotations

import sqlite3

from aptmem.store import CompactionWritten
from strategies import sqlite_sql as sql

__all__ = ["payload_bytes", "rewrite"]

_Row = tuple[str, int | None, str | None, bytes]  # type, ts, entry_id, payload


def payload_bytes(conn: sqlite3.Connection, session_id: str) -> int:
    """The bytes of the session's payloads."""
    return conn.execute("SELECT coalesce(sum(length(payload)), 0) FROM entries WHERE session_id = ?", (session_id,)).fetchone()[0]


def rewrite(conn: sqlite3.Connection, session_id: str, live_seqs: list[int], kept: int, marker: _Row, summarized: int,
            before: int) -> CompactionWritten:
    """Make the session its carried rows, the marker and its kept rows (the last ``kept`` of
    ``live_seqs``), inside the caller's write transaction."""
    first = live_seqs[len(live_seqs) - kept] if kept else None
    # Kept: every row from the first kept one on that is not a compaction (the live context from
    # there holds nothing else). Not kept: dropped if a summary stands for it, else carried.
    kept_sql = f"(seq >= ? AND NOT {sql.IS_COMPACTION})" if first is not None else "(0)"
    args: tuple = (session_id, first) if first is not None else (session_id,)
    removed, removed_bytes = conn.execute(
        f"SELECT count(*), coalesce(sum(length(payload)), 0) FROM entries WHERE session_id = ? AND NOT {kept_sql} AND {sql.SUMMARIZABLE}",
        args).fetchone()
    columns = "type, ts, entry_id, payload"
    carried = conn.execute(f"SELECT {columns} FROM entries WHERE session_id = ? AND NOT {kept_sql} AND NOT {sql.SUMMARIZABLE} ORDER BY seq",
                           args).fetchall()
    kept_rows = conn.execute(f"SELECT {columns} FROM entries WHERE session_id = ? AND {kept_sql} ORDER BY seq", args).fetchall() if first is not None else []
    conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
    layout = [*carried, marker, *kept_rows]
    conn.executemany(sql.INSERT, [(session_id, n, *row) for n, row in enumerate(layout, 1)])
    return CompactionWritten(persist="rewrite", kept=kept, summarized=summarized, removed_entries=removed,
                             removed_bytes=removed_bytes, carried=len(carried), bytes_before=before,
                             bytes_after=sum(len(row[3]) for row in layout))
