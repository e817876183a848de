"""The plain memory strategies: last turns only, the full history, a rolling summary.

* :class:`LastTurns` (``none``): a compaction keeps the last turns and writes no summary; a
  continued session inherits the working memory and nothing else.
* :class:`FullHistory` (``full_history``): never compacts; the context is the whole history,
  whatever it costs (the oracle the others are measured against). A continued session copies it.
* :class:`SummaryMemory` (``extractive``, ``salient``, ``llm``): a compaction folds the old part
  into one rolling summary written by its summarizer; a continued session starts from a summary
  of the old live context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Entry
from aptmem.memory.base import Carry, check_carry, render_working
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["DropSummarizer", "FullHistory", "LastTurns", "SummaryMemory"]


class DropSummarizer:
    """A summarizer that keeps nothing: what a compaction takes out of the context is gone.

    The summary it returns is empty on purpose; it is the ``none`` strategy's whole point.
    """

    name = "drop"

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int, count: Callable[[str], int]) -> str:
        """Return the empty summary."""
        return ""


class _WorkingOnly:
    """Shared behaviour: show the context as it is, keep nothing extra, render the working memory."""

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """Keep the view as it is."""
        return None

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Keep nothing beside the summary."""

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The working memory and dict, as the session has always shown them."""
        return render_working(meta)


class LastTurns(_WorkingOnly):
    """Keep only the last turns: a compaction drops the rest without a summary."""

    name = "none"
    compacts = True
    carry: Carry = "memory"

    def __init__(self) -> None:
        self.summarizer: Summarizer = DropSummarizer()


class FullHistory(_WorkingOnly):
    """Never compact: the context is the whole history (the oracle, at its full token cost).

    ``summarizer`` only serves an explicit ``compact`` (``aptmem compact --force``).
    """

    name = "full_history"
    compacts = False
    carry: Carry = "history"

    def __init__(self) -> None:
        self.summarizer: Summarizer = ExtractiveSummarizer()


class SummaryMemory(_WorkingOnly):
    """One rolling summary, written by ``summarizer`` at every compaction (the design's default)."""

    compacts = True

    def __init__(self, summarizer: Summarizer | None = None, *, name: str = "extractive", carry: Carry = "summary") -> None:
        self.summarizer = summarizer or ExtractiveSummarizer()
        self.name = name
        self.carry = check_carry(carry)
