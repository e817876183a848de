"""Recovery after a crash, as an agent does it when it starts again, and the identity of an entry.

:func:`recover_case` opens the store, ``recover()``s the session in a recovery mode, then loads it
(``iter_entries`` and ``read_live``). The crash measurements run it in a process of their own
(forked from a server that never opened a store, or a worker of the crash-state explorer): no
descriptor, cache, lock or connection of the crashed writer exists there, so what it finds is
what the files say. ``recovery_ns`` (``perf_counter_ns``) covers opening the store (SQLite
replays its WAL or rolls back its journal there) and ``recover()``.
"""

from __future__ import annotations

import hashlib
import time

import msgspec

from aptmem.entries import Entry, encode_line
from aptmem.store import select_live
from experiments.core.strategy import StoreSpec, build_store

__all__ = ["RecoveryOutcome", "digest", "recover_case"]


def digest(entry: Entry) -> str:
    """The entry's identity for exact comparison: BLAKE2b-128 of its exact JSONL line."""
    return hashlib.blake2b(encode_line(entry), digest_size=16).hexdigest()


class RecoveryOutcome(msgspec.Struct, kw_only=True):
    """What a reader got back after recovering a crashed session."""

    mode: str
    loadable: bool = False
    #: digest of every entry read, oldest first (None when not loadable), and their entry ids
    recovered: list[str] | None = None
    ids: list[str | None] | None = None
    bytes_discarded: int = 0
    good_lines_discarded: int = 0
    recovery_ns: int = 0
    #: read_live agrees with the live context selected from the entries read (None when not loadable)
    live_ok: bool | None = None
    error: str | None = None
    actions: list[str] = []


def recover_case(store: StoreSpec, session_id: str, root: str, mode: str) -> RecoveryOutcome:
    """Recover and load the session under ``root`` in ``mode`` with a store built from ``store``
    (already reading in that mode, see :meth:`~experiments.core.strategy.StrategySpec.in_mode`)."""
    result = RecoveryOutcome(mode=mode)
    built = None
    start = time.perf_counter_ns()
    try:
        built = build_store(store, root)
        report = built.recover(session_id, mode)
        result.recovery_ns = time.perf_counter_ns() - start
        result.loadable, result.bytes_discarded, result.error = report.loadable, report.discarded_bytes, report.error
        result.good_lines_discarded, result.actions = report.good_lines_discarded, list(report.actions)
        if report.loadable:
            entries = list(built.iter_entries(session_id))
            live = built.read_live(session_id)
            result.recovered = [digest(e) for e in entries]
            result.ids = [e.id for e in entries]
            result.live_ok = [digest(e) for e in live] == [digest(e) for e in select_live(entries)]
    except Exception as exc:  # whatever stops a reader: the session is not loadable (the type is kept)
        result.recovery_ns = result.recovery_ns or time.perf_counter_ns() - start
        result.loadable, result.recovered, result.ids = False, None, None
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if built is not None:
            try:
                built.close()
            except Exception:
                pass
    return result
