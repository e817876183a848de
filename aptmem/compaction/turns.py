"""Split a history into turns.

A turn starts at a user entry and runs up to the next one. Entries before the first user entry
(a compaction, metadata) form a leading turn of their own. A tool call and its result are
never separated: a user entry that stands between a call and its result (which a well-formed
agent never writes, but a damaged or imported log might) does not start a new turn.

A call that no later entry answers (a reply cut off by an error or an abort, as real agents'
transcripts hold) holds nothing together, so it does not keep the turn open: otherwise one
orphan call would glue every later turn into one, and a compaction could keep nothing but
that whole "turn".
"""

from __future__ import annotations

from collections.abc import Sequence

from aptmem.entries import Entry, ToolCall, ToolResult, User

__all__ = ["split_turns", "turn_starts", "split_tool_pairs"]


def turn_starts(entries: Sequence[Entry]) -> list[int]:
    """Return the index at which each turn starts (always 0 first when there are entries)."""
    starts: list[int] = []
    open_calls: set[str] = set()
    answered = {e.call_id for e in entries if isinstance(e, ToolResult)}
    for index, entry in enumerate(entries):
        if isinstance(entry, User) and not open_calls and index > 0:
            starts.append(index)
        elif isinstance(entry, ToolCall) and entry.id in answered and entry.result is None:
            open_calls.add(entry.id)  # type: ignore[arg-type]
        elif isinstance(entry, ToolResult):
            open_calls.discard(entry.call_id)
    return [0, *starts] if entries else []


def split_turns(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Return the turns of ``entries``, in order; their concatenation is ``entries``."""
    starts = turn_starts(entries)
    ends = [*starts[1:], len(entries)]
    return [list(entries[a:b]) for a, b in zip(starts, ends)]


def split_tool_pairs(kept: Sequence[Entry], dropped: Sequence[Entry]) -> int:
    """Count tool pairs with one side in ``kept`` and the other in ``dropped``.

    Used to check a compaction: a pair split between what was summarized and what was kept
    leaves the model a result without its call, or a call without its result.
    """
    def calls(entries: Sequence[Entry]) -> set[str]:
        return {e.id for e in entries if isinstance(e, ToolCall) and e.id is not None and e.result is None}

    def results(entries: Sequence[Entry]) -> set[str]:
        return {e.call_id for e in entries if isinstance(e, ToolResult)}

    return len(calls(kept) & results(dropped)) + len(calls(dropped) & results(kept))
