"""Split a history into turns.

A turn starts at a user entry and runs up to the next one. Entries before the first user entry
(a compaction, metadata) form a leading turn of their own. A tool call and its result are
never separated: a user entry that stands between a call and the result that answers it (which
a well-formed agent never writes, but a damaged or imported log might) does not start a new turn.

Which result answers which call is :mod:`aptmem.context.pairing`'s rule: by ``call_id`` or, for
the original design's lines, by tool name, always the nearest open call before the result. So a
call that no later entry answers (a reply cut off by an error or an abort, as real agents'
transcripts hold) holds nothing together, and neither does an id that an agent reuses in every
turn (``call_0``): otherwise one orphan call would glue every later turn into one, and a
compaction could keep nothing but that whole "turn".
"""

from __future__ import annotations

from collections.abc import Sequence

from aptmem.context.pairing import pair_tools
from aptmem.entries import Entry, User

__all__ = ["split_turns", "turn_starts", "split_tool_pairs"]


def turn_starts(entries: Sequence[Entry]) -> list[int]:
    """Return the index at which each turn starts (always 0 first when there are entries)."""
    pairs = pair_tools(entries)
    starts: list[int] = []
    pending: set[int] = set()  # indices of results still to come for calls already seen
    for index, entry in enumerate(entries):
        pending.discard(index)
        if isinstance(entry, User) and not pending and index > 0:
            starts.append(index)
        answer = pairs.result_of.get(index)
        if answer is not None:
            pending.add(answer)
    return [0, *starts] if entries else []


def split_turns(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Return the turns of ``entries``, in order; their concatenation is ``entries``."""
    starts = turn_starts(entries)
    ends = [*starts[1:], len(entries)]
    return [list(entries[a:b]) for a, b in zip(starts, ends)]


def split_tool_pairs(kept: Sequence[Entry], dropped: Sequence[Entry]) -> int:
    """Count tool pairs with one side in ``kept`` and the other in ``dropped``.

    ``dropped`` (what a compaction summarized) comes before ``kept`` in the history. Used to check
    a compaction: a pair split between the two leaves the model a result without its call, or a
    call without its result.
    """
    pairs = pair_tools([*dropped, *kept])
    cut = len(dropped)
    return sum((call < cut) != (result < cut) for result, call in pairs.call_of.items())
