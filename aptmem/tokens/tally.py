"""A running token total of a live context: each entry counted once, the total kept up to date.

A session appends far more often than it compacts, so the tally keeps per-entry counts in a
list parallel to the live entries and the sum beside it: :meth:`ContextTally.add` counts only
the new entry and adds it (O(size of that entry), whatever the session's length).
After a compaction, :meth:`ContextTally.reset` takes the new live context and reuses the count
of every entry it already holds (matched by object identity), so only the summary is counted.

Entries are treated as immutable once added: to change one (e.g. shorten a tool result),
build a new entry (``msgspec.structs.replace``) so it is recounted, or call
``reset(entries, reuse=False)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aptmem.entries import Entry
from aptmem.tokens.base import Estimator
from aptmem.tokens.render import count_entry

__all__ = ["ContextTally"]


class ContextTally:
    """Per-entry token counts of a live context and their running total.

    ``base`` is a fixed part of the context counted by the caller (system prompt, working
    memory): it is in :attr:`total` and kept across resets.
    """

    def __init__(self, estimator: Estimator, entries: Iterable[Entry] = (), base: int = 0) -> None:
        self.estimator = estimator
        self.base = base
        self._entries: list[Entry] = []
        self._counts: list[int] = []
        self._sum = 0
        for entry in entries:
            self.add(entry)

    @property
    def total(self) -> int:
        """Tokens of the whole context: ``base`` plus every entry's count."""
        return self.base + self._sum

    @property
    def counts(self) -> Sequence[int]:
        """Each entry's count, oldest first (a read-only view)."""
        return tuple(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, entry: Entry) -> int:
        """Count ``entry``, append it, and return its count."""
        n = count_entry(self.estimator, entry)
        self._entries.append(entry)
        self._counts.append(n)
        self._sum += n
        return n

    def extend(self, entries: Iterable[Entry]) -> int:
        """Add several entries; return the tokens they added."""
        before = self._sum
        for entry in entries:
            self.add(entry)
        return self._sum - before

    def remove_prefix(self, n: int) -> int:
        """Forget the oldest ``n`` entries (those a compaction summarized); return their tokens."""
        if not 0 <= n <= len(self._counts):
            raise ValueError(f"cannot remove {n} entries from a tally of {len(self._counts)}")
        removed = sum(self._counts[:n])
        del self._entries[:n]
        del self._counts[:n]
        self._sum -= removed
        return removed

    def reset(self, entries: Iterable[Entry], *, reuse: bool = True) -> int:
        """Make ``entries`` the live context; return the new total.

        With ``reuse`` an entry already in the tally (the same object) keeps its count, so after
        a compaction only new entries such as the summary are counted.
        """
        known = {id(e): c for e, c in zip(self._entries, self._counts, strict=True)} if reuse else {}
        # The old list holds every entry in ``known`` alive until this method returns, so an
        # id cannot be reused by a new object while we look it up.
        old = self._entries
        self._entries, self._counts, self._sum = [], [], 0
        for entry in entries:
            n = known.get(id(entry))
            if n is None:
                n = count_entry(self.estimator, entry)
            self._entries.append(entry)
            self._counts.append(n)
            self._sum += n
        del old
        return self.total

    def recount(self) -> int:
        """Count every entry afresh (a check; the tally itself never needs it); return that total."""
        return self.base + sum(count_entry(self.estimator, e) for e in self._entries)

    def __repr__(self) -> str:
        return f"ContextTally({self.estimator.name}, entries={len(self)}, total={self.total})"
