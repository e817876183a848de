"""The live context of a session stored one row per entry, found through indexes (sqlite, postgres).

Both SQL strategies keep a per-session sequence number, a partial index of the compaction rows
and an index of entry ids, so the live context is a few indexed lookups, never a scan of the
history: the latest compaction; the rows it keeps (its ``kept_before`` N rows before it, a
backward range scan of the primary key; or, for an older writer's marker, from the row its
``first_kept`` names through the index of ids); then a range scan after it. The result equals
:func:`aptmem.store.select_live` over the whole history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from aptmem.entries import Compaction, Entry
from aptmem.errors import CorruptLogError

__all__ = ["LiveQueries", "live_context", "live_rows"]


class LiveQueries(NamedTuple):
    """The five statements, each taking the session id first, in the strategy's own SQL dialect."""

    #: ``(session_id)`` -> ``(seq, payload)`` of the latest compaction row, or no row
    latest: str
    #: ``(session_id, marker_seq, n)`` -> ``(seq, payload)`` of the n rows before it that are not
    #: compactions, nearest first
    kept_before: str
    #: ``(session_id, entry_id, before_seq)`` -> ``max(seq)`` of the rows with that id before it
    kept_from: str
    #: ``(session_id, start_seq, marker_seq)`` -> ``(seq, is_compaction, payload)`` from start on,
    #: the marker left out
    from_seq: str
    #: ``(session_id)`` -> ``(seq, payload)`` of every row in order
    all_rows: str


def live_rows(conn: Any, session_id: str, queries: LiveQueries, decode: Callable[[bytes, int], Entry], where: str,
              key: Callable[[str], Any] = str) -> list[tuple[int, Entry]]:
    """``(seq, entry)`` of every row of the live context, in live order.

    ``conn`` is a sqlite3 or psycopg connection (``execute`` returning a cursor); run it inside one
    transaction or read snapshot. ``decode(payload, seq)`` turns a row into an entry; ``key`` turns
    an entry id into the value its column holds.
    """
    latest = conn.execute(queries.latest, (session_id,)).fetchone()
    if latest is None:
        return [(seq, decode(payload, seq)) for seq, payload in conn.execute(queries.all_rows, (session_id,))]
    marker_seq, marker_payload = latest
    marker = decode(marker_payload, marker_seq)
    if not isinstance(marker, Compaction):
        raise CorruptLogError(where, marker_seq, 0, f"row {marker_seq} is typed a compaction but decodes as {type(marker).__name__}")
    live: list[tuple[int, Entry]] = [(marker_seq, marker)]
    start = marker_seq + 1
    if marker.kept_before is not None:
        if marker.kept_before:
            before = conn.execute(queries.kept_before, (session_id, marker_seq, marker.kept_before)).fetchall()
            live += [(seq, decode(payload, seq)) for seq, payload in reversed(before)]
    elif marker.first_kept is not None:
        kept_seq = conn.execute(queries.kept_from, (session_id, key(marker.first_kept), marker_seq)).fetchone()[0]
        if kept_seq is not None:
            start = kept_seq
    for seq, is_compaction, payload in conn.execute(queries.from_seq, (session_id, start, marker_seq)).fetchall():
        if seq < marker_seq and is_compaction:
            continue  # an older compaction inside the window: the latest summary stands for it
        live.append((seq, decode(payload, seq)))
    return live


def live_context(conn: Any, session_id: str, queries: LiveQueries, decode: Callable[[bytes, int], Entry], where: str,
                 key: Callable[[str], Any] = str) -> list[Entry]:
    """The entries of :func:`live_rows`, without their sequence numbers."""
    return [entry for _, entry in live_rows(conn, session_id, queries, decode, where, key)]
