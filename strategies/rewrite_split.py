"""What a rewrite compaction does to the rows of a session: keep, carry over, or remove.

A rewrite leaves the session as: the carried rows (entries no summary stands for, such as
metadata, in their order), then the new marker, then the kept rows. Every other row is removed:
the summary stands for it. The stores that rewrite in Python (the whole-history ones, postgres)
share this split; SQLite does the same in SQL (:mod:`strategies.sqlite_compaction`).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from typing import Generic, NamedTuple, TypeVar

from aptmem.entries import Entry, encode_entry
from aptmem.store import summarizable

__all__ = ["RewriteSplit", "split_for_rewrite", "kept_positions"]

K = TypeVar("K", bound=Hashable)


class RewriteSplit(NamedTuple, Generic[K]):
    """The keys of the rows a rewrite carries and keeps (each in stored order), and what it removes."""

    carried: list[K]
    kept: list[K]
    #: rows removed (summarized entries and older compactions)
    removed: int
    #: their bytes, as aptmem lines
    removed_bytes: int


def split_for_rewrite(rows: Iterable[tuple[K, Entry]], kept: Collection[K]) -> RewriteSplit[K]:
    """Split ``rows`` (key and entry, in stored order) for a rewrite that keeps the rows ``kept`` names."""
    carried: list[K] = []
    keep: list[K] = []
    removed = removed_bytes = 0
    for key, entry in rows:
        if key in kept:
            keep.append(key)
        elif summarizable(entry):
            removed += 1
            removed_bytes += len(encode_entry(entry))
        else:
            carried.append(key)
    return RewriteSplit(carried, keep, removed, removed_bytes)


def kept_positions(history: Sequence[Entry], live: Sequence[Entry], kept: int) -> set[int]:
    """The positions in ``history`` of the last ``kept`` entries of ``live``.

    ``live`` is :func:`aptmem.store.select_live` of ``history``, so it holds the same objects.
    """
    if not kept:
        return set()
    position = {id(entry): index for index, entry in enumerate(history)}
    return {position[id(entry)] for entry in live[len(live) - kept :]}
