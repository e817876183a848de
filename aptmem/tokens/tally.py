"""A running token total of a live context: each entry counted once, the total kept up to date.

A session appends far more often than it compacts, so the tally renders the context one entry
at a time (:class:`~aptmem.context.render.ContextBuilder`) and keeps each entry's tokens beside
the total: :meth:`ContextTally.add` counts only the new entry (O(size of that entry), whatever
the session's length). A result that answers an earlier call takes over that call's answer, so
the call's count drops by the placeholder it was counted with: the total is always the count
of what would be sent now (:func:`~aptmem.tokens.render.count_entries` of the same entries).

Texts are counted through a memo (text -> tokens), so after a compaction
:meth:`ContextTally.reset` renders the new live context again and counts only texts it has not
seen, such as the summary. Entries are treated as immutable once added: to change one (e.g.
shorten a tool result), build a new entry (``msgspec.structs.replace``), or call
``reset(entries, reuse=False)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aptmem.context.render import ContextBuilder
from aptmem.entries import Entry
from aptmem.tokens.base import Estimator

__all__ = ["ContextTally"]


class _Memo:
    """Counts texts with an estimator, each distinct text once.

    ``carry`` is an earlier memo: a text found there keeps its count (and is carried over), so a
    memo rebuilt for a new live context holds only the texts still in use.
    """

    def __init__(self, estimator: Estimator, carry: dict[str, int] | None = None) -> None:
        self.estimator = estimator
        self.known: dict[str, int] = {}
        self.carry = carry or {}

    def __call__(self, text: str) -> int:
        n = self.known.get(text)
        if n is None:
            n = self.carry.get(text)
            if n is None:
                n = self.estimator.count(text)
            self.known[text] = n
        return n


class ContextTally:
    """Per-entry token counts of a live context and their running total.

    ``base`` is the fixed part of the context (system prompt, working memory): set it as system
    sections with :meth:`set_fixed` (counted here, system-message framing included), or as a
    number counted by the caller. It is in :attr:`total` and kept across resets.
    """

    def __init__(self, estimator: Estimator, entries: Iterable[Entry] = (), base: int = 0) -> None:
        self.estimator = estimator
        self._extra = base  # a fixed part the caller counted itself
        self._fixed: list[str] = []
        self._entries: list[Entry] = []
        self._memo = _Memo(estimator)
        self._builder = ContextBuilder(count=self._memo)
        self.extend(entries)

    @property
    def base(self) -> int:
        """Tokens of the fixed part: the system sections set by :meth:`set_fixed`, or the number given."""
        return self._builder.fixed_tokens + self._extra

    @base.setter
    def base(self, tokens: int) -> None:
        self._extra = tokens

    def set_fixed(self, sections: Sequence[str]) -> int:
        """Make ``sections`` the fixed system sections (system prompt, working memory); return :attr:`base`."""
        self._fixed = [s for s in sections if s]
        self._builder.set_fixed(self._fixed)
        return self.base

    @property
    def total(self) -> int:
        """Tokens of the whole context: ``base`` plus every entry's count."""
        return self._builder.total + self._extra

    @property
    def counts(self) -> Sequence[int]:
        """Each entry's count, oldest first (a read-only view)."""
        return tuple(self._builder.counts)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entry: Entry) -> int:
        """Count ``entry`` and append it; return by how much the total grew."""
        self._entries.append(entry)
        return self._builder.add(entry)

    def extend(self, entries: Iterable[Entry]) -> int:
        """Add several entries; return the tokens they added."""
        before = self.total
        for entry in entries:
            self.add(entry)
        return self.total - before

    def remove_prefix(self, n: int) -> int:
        """Forget the oldest ``n`` entries (those a compaction summarized); return the tokens that went."""
        if not 0 <= n <= len(self._entries):
            raise ValueError(f"cannot remove {n} entries from a tally of {len(self._entries)}")
        before = self.total
        self.reset(self._entries[n:])
        return before - self.total

    def reset(self, entries: Iterable[Entry], *, reuse: bool = True) -> int:
        """Make ``entries`` the live context; return the new total.

        With ``reuse`` a text already counted keeps its count, so after a compaction only new
        texts such as the summary are counted; without it every text is counted afresh.
        """
        entries = list(entries)
        # Only texts still in use carry over, so the memo stays the size of the live context.
        memo = _Memo(self.estimator, self._memo.known if reuse else None)
        builder = ContextBuilder(self._fixed, count=memo)
        builder.extend(entries)
        memo.carry = {}
        self._memo, self._builder, self._entries = memo, builder, entries
        return self.total

    def counts_of(self, entries: Iterable[Entry]) -> list[int]:
        """Each of ``entries``' count as this tally would have it, texts it knows not counted again
        (a compaction planning from a fresh read of the store); the tally itself is unchanged."""
        builder = ContextBuilder(self._fixed, count=_Memo(self.estimator, self._memo.known))
        builder.extend(entries)
        return list(builder.counts)

    def recount(self) -> int:
        """Count every entry afresh (a check; the tally itself never needs it); return that total."""
        builder = ContextBuilder(self._fixed, count=self.estimator.count)
        builder.extend(self._entries)
        return builder.total + self._extra

    def __repr__(self) -> str:
        return f"ContextTally({self.estimator.name}, entries={len(self)}, total={self.total})"
