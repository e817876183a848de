"""Counting a session's live context entry by entry, compactions included.

A session read from its log (or a transcript imported) is a stream of entries; what a request
carries at any point is the live context: the latest compaction, then the entry its
``first_kept`` names and everything after it (none before it when it names none, as Claude Code
keeps only the summary). :class:`LiveCounts` keeps each live entry's count and the total, so a
counter can follow a whole history in one pass. :class:`TierCounter` is that for one estimator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from aptmem.entries import Assistant, Compaction, Entry
from aptmem.tokens.base import Estimator
from aptmem.tokens.render import count_entry
from aptmem.tokens.usage_fields import input_side

__all__ = ["ContextCounter", "LiveCounts", "ReportedRequest", "TierCounter", "reported_requests"]


class ContextCounter(Protocol):
    """Follows a session's entries and says how many tokens the next request would hold."""

    def add(self, entry: Entry) -> None:
        """Take the next entry of the session (a compaction changes what is live)."""
        ...

    @property
    def total(self) -> int:
        """Tokens of the request the live context makes now."""
        ...


class LiveCounts:
    """Per-entry counts of a history and the total of its live context (see the module docstring).

    The live context after a compaction is what :func:`aptmem.store.select_live` reads back: the
    compaction, then the latest earlier entry its ``first_kept`` names and all entries after that
    one (anywhere in the history, as pi and an appended compaction keep them), then what follows.
    """

    def __init__(self) -> None:
        self._ids: list[str | None] = []
        self._counts: list[int] = []
        self._live_entries = 0
        self.total = 0

    def __len__(self) -> int:
        """How many entries are live."""
        return self._live_entries

    def add(self, entry: Entry, count: int) -> None:
        """Add ``entry`` counted ``count``; a compaction replaces what it summarized by itself."""
        if isinstance(entry, Compaction):
            last = len(self._ids)
            start = last
            if entry.first_kept is not None:
                start = next((i for i in range(last - 1, -1, -1) if self._ids[i] == entry.first_kept), last)
            self._live_entries = 1 + last - start
            self.total = count + sum(self._counts[start:])
        else:
            self._live_entries += 1
            self.total += count
        self._ids.append(entry.id)
        self._counts.append(count)


class TierCounter:
    """The live context counted by one estimator, as :func:`~aptmem.tokens.render.count_entry` counts it."""

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator
        self.live = LiveCounts()

    def add(self, entry: Entry) -> None:
        """Count ``entry`` into the live context."""
        self.live.add(entry, count_entry(self.estimator, entry))

    @property
    def total(self) -> int:
        """Tokens of the live context by this estimator (no fixed part)."""
        return self.live.total


class ReportedRequest:
    """A request whose reply reported usage: where it stands, what the provider counted, what each counter said."""

    __slots__ = ("seq", "reply", "reported", "estimates", "live_entries")

    def __init__(self, seq: int, reply: Assistant, reported: int, estimates: tuple[int, ...], live_entries: int) -> None:
        #: 0-based position of the reply among the session's entries
        self.seq = seq
        self.reply = reply
        #: the input side the provider reported
        self.reported = reported
        #: each counter's total just before the reply (what it said the request held)
        self.estimates = estimates
        #: entries live before the reply
        self.live_entries = live_entries


def reported_requests(entries: Iterable[Entry], counters: Sequence[ContextCounter]) -> Iterator[ReportedRequest | Assistant]:
    """Feed ``entries`` to every counter; yield each request with usage as the counters saw it before its reply.

    A reply whose usage reports no input (an aborted request) is yielded as the bare entry, so a
    caller can count it. The first counter's live entries are reported (a :class:`LiveCounts` user).
    """
    live = LiveCounts()
    for seq, entry in enumerate(entries):
        if isinstance(entry, Assistant) and entry.usage is not None:
            reported = input_side(entry.usage)
            if reported:
                yield ReportedRequest(seq, entry, reported, tuple(c.total for c in counters), len(live))
            else:
                yield entry
        for counter in counters:
            counter.add(entry)
        live.add(entry, 0)
