"""The live context of a session stored one row per entry, found through indexes (sqlite, postgres).

Both SQL strategies keep a per-session sequence number, a partial index of the compaction rows
and an index of entry ids, so the live context is three lookups, never a scan of the history:
the latest compaction, the row its ``first_kept`` names (the latest such row before it), then
the rows from there on, the compaction itself (and any older one among them) left out. The result equals
:func:`aptmem.store.select_live` over the whole history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from aptmem.entries import Compaction, Entry
from aptmem.errors import CorruptLogError

__all__ = ["LiveQueries", "live_context"]


class LiveQueries(NamedTuple):
    """The four statements, each taking the session id first, in the strategy's own SQL dialect."""

    #: ``(session_id)`` -> ``(seq, payload)`` of the latest compaction row, or no row
    latest: str
    #: ``(session_id, entry_id, before_seq)`` -> ``max(seq)`` of the rows with that id before it
    kept_from: str
    #: ``(session_id, start_seq, marker_seq)`` -> ``(payload,)`` from start on, the marker left out
    from_seq: str
    #: ``(session_id)`` -> ``(payload,)`` of every row in order
    all_rows: str


def live_context(conn: Any, session_id: str, queries: LiveQueries, decode: Callable[..., Entry], where: str,
                 key: Callable[[str], Any] = str) -> list[Entry]:
    """Read the live context on ``conn`` (sqlite3 or psycopg: ``execute`` returning a cursor).

    Run it in one read snapshot. ``decode(payload, seq)`` turns a row into an entry; ``key`` turns
    an entry id into the value its column holds.
    """
    latest = conn.execute(queries.latest, (session_id,)).fetchone()
    if latest is None:
        return [decode(row[0]) for row in conn.execute(queries.all_rows, (session_id,))]
    marker_seq, marker_payload = latest
    marker = decode(marker_payload, marker_seq)
    if not isinstance(marker, Compaction):
        raise CorruptLogError(where, marker_seq, 0, f"row {marker_seq} is typed a compaction but decodes as {type(marker).__name__}")
    start = marker_seq + 1
    if marker.first_kept is not None:
        kept_seq = conn.execute(queries.kept_from, (session_id, key(marker.first_kept), marker_seq)).fetchone()[0]
        if kept_seq is not None:
            start = kept_seq
    rest = conn.execute(queries.from_seq, (session_id, start, marker_seq)).fetchall()
    kept = (decode(row[0]) for row in rest)
    # An older compaction among the kept rows is superseded: the latest summary took it in.
    return [marker, *(e for e in kept if not isinstance(e, Compaction))]
