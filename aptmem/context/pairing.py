"""Which tool result answers which tool call, by the one rule of :mod:`aptmem.entries`.

* a result with a ``call_id`` answers the latest earlier call with that ``id`` that no result has
  answered yet;
* a result without one answers the latest earlier call of its ``name`` that no result has
  answered yet (the original design's lines name the tool, not the call);
* a call's inline ``result`` is not an answer here (the original design writes the call with its
  inline result, then a result naming the tool: one call, one answer);
* an answer counts only after its call: a result before any matching call is an orphan.

Reused ids (agents that number calls per turn, ``call_0``, ``call_1``...) and calls that were
never answered (an aborted reply) therefore tie nothing together: each result pairs with the
nearest open call before it.

:class:`ToolPairing` does it one entry at a time (for a running token count);
:func:`pair_tools` over a whole sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aptmem.entries import Entry, ToolCall, ToolResult

__all__ = ["Pairs", "ToolPairing", "pair_tools"]


class ToolPairing:
    """The open (unanswered) calls seen so far, found by id and by name.

    Feed entries in order with :meth:`call` and :meth:`answer`; a position is whatever the caller
    counts entries with (an index), so the answer names the call by its position.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, list[int]] = {}
        self._by_name: dict[str, list[int]] = {}
        self._calls: dict[int, ToolCall] = {}

    def call(self, position: int, entry: ToolCall) -> None:
        """Record a call at ``position``: it is open until a result answers it."""
        self._calls[position] = entry
        if entry.id is not None:
            self._by_id.setdefault(entry.id, []).append(position)
        self._by_name.setdefault(entry.name, []).append(position)

    def answer(self, entry: ToolResult) -> int | None:
        """The position of the open call ``entry`` answers (now closed), or None for an orphan."""
        if entry.call_id is not None:
            stack = self._by_id.get(entry.call_id)
        else:
            stack = self._by_name.get(entry.name or "")
        if not stack:
            return None
        position = stack[-1]
        self._close(position)
        return position

    def open_calls(self) -> list[int]:
        """Positions of the calls no result has answered yet, oldest first."""
        return sorted(self._calls)

    def _close(self, position: int) -> None:
        call = self._calls.pop(position)
        if call.id is not None:
            _remove(self._by_id, call.id, position)
        _remove(self._by_name, call.name, position)


def _remove(index: dict[str, list[int]], key: str, position: int) -> None:
    stack = index[key]
    # The answered call is nearly always the newest of its key: search from the end.
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] == position:
            del stack[i]
            break
    if not stack:
        del index[key]


@dataclass
class Pairs:
    """The pairing of a sequence: result index -> call index and call index -> result index."""

    call_of: dict[int, int] = field(default_factory=dict)
    result_of: dict[int, int] = field(default_factory=dict)
    #: indices of results that answer no call in the sequence
    orphans: list[int] = field(default_factory=list)


def pair_tools(entries: Sequence[Entry]) -> Pairs:
    """Pair every tool result of ``entries`` with the call it answers."""
    pairing = ToolPairing()
    pairs = Pairs()
    for index, entry in enumerate(entries):
        if isinstance(entry, ToolCall):
            pairing.call(index, entry)
        elif isinstance(entry, ToolResult):
            call = pairing.answer(entry)
            if call is None:
                pairs.orphans.append(index)
            else:
                pairs.call_of[index] = call
                pairs.result_of[call] = index
    return pairs
