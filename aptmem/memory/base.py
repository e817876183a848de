"""The memory-strategy seam: what a session keeps in the model's context, and how it gets it back.

A :class:`MemoryStrategy` decides four things, and nothing else:

* whether the session compacts at all (the full-history oracle never does) and which
  :class:`~aptmem.compaction.summarizer.Summarizer` writes a compaction's summary;
* how the live context is shown after each append (observation masking replaces old tool output
  by a placeholder; most strategies show it as it is);
* what it keeps beside the history once a compaction (or a hand-over to a new session) took
  entries out of the context: structured facts in the working dict, every summary in a tree, ...;
* what it renders where the system message goes, given the current turn (or a question) and the
  window: the working memory, its facts, or what it retrieves for that query.

How a continued session inherits memory is declared by :attr:`MemoryStrategy.carry`.

State a strategy keeps lives in the session's sidecar (:mod:`aptmem.working_memory`), under keys
that start with :data:`RESERVED_PREFIX`, so it is atomic, survives a restart and is inherited by
``continue`` like the rest of the working dict. Strategies are stateless objects otherwise: one
instance may serve many sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable


from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Entry
from aptmem.context.assemble import render_working
from aptmem.working_memory import RESERVED_PREFIX, SessionMeta, WorkingMemory

__all__ = ["CARRY_WAYS", "Carry", "MemoryStrategy", "RESERVED_PREFIX", "check_carry", "render_working"]

#: How a continued session inherits memory: ``memory`` the sidecar only (working memory and
#: dict, where strategies keep their state); ``summary`` that and a summary of the old live
#: context; ``history`` that and every old entry.
Carry = Literal["memory", "summary", "history"]
CARRY_WAYS: tuple[str, ...] = ("memory", "summary", "history")



@runtime_checkable
class MemoryStrategy(Protocol):
    """What a session keeps in context and how it gets it back. Every member is mandatory."""

    #: the name it is registered under (``aptmem.memory.registry``)
    name: str
    #: False: the session never compacts (its context is the whole history, whatever the window)
    compacts: bool
    #: how a continued session inherits memory (see :data:`Carry`)
    carry: Carry
    #: writes the summary of a compaction (and of the old live context when a session is continued)
    summarizer: Summarizer

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """After ``appended`` joined ``view`` (the live context as shown): a new view, or None to keep it.

        ``appended`` is None when a session is opened. A new view holds the same entries, some
        replaced by a shown form (same id); the session recounts only the replaced ones.
        """
        ...

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Keep what leaves the context: ``summarized`` entries and the ``summary`` that replaced them.

        ``summarized`` is what the summarizer read: the entries as the context showed them (a
        masked output masked, a shortened one shortened), never what the model was not shown.
        Called after every compaction (``summarized`` then also holds the kept entries the
        compaction shortens, as shown before the cut) and when a session is handed over to a
        continuation (then ``memory`` is the new session's). Writes, if anything, to ``memory``; ``count``
        counts tokens. A strategy that needs a sidecar raises
        :class:`~aptmem.errors.MemoryStrategyError` when ``memory`` is None.
        """
        ...

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The text rendered where the system message goes (after the system prompt), "" for none.

        ``query`` is the current turn or a question (a retrieving strategy looks it up);
        ``window`` the model's context window in tokens; ``count`` counts tokens, for caps.
        """
        ...


def check_carry(carry: str) -> Carry:
    """``carry`` if it is one of :data:`CARRY_WAYS`; else ``ValueError``."""
    if carry not in CARRY_WAYS:
        raise ValueError(f"carry must be one of {', '.join(CARRY_WAYS)}, not {carry!r}")
    return carry  # type: ignore[return-value]
