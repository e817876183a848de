"""The keep rule for sessions with few user turns: the last N turns, or at least K recent tokens.

An agent session often holds a handful of user turns, each with dozens of tool calls: real Claude
Code sessions have 2-6. Keeping "the last 10 turns" then keeps everything, and a compaction
cannot reach its target however much tool output it shortens. pi keeps the newest 20,000 tokens
instead, cutting inside a turn where it must. This rule does both:

* start from the last ``keep_turns`` turns that fit (what the planner chose);
* keep more, back to the newest ``keep_recent_tokens`` tokens, when those turns hold fewer;
* never more than the room the target leaves: if the newest turn alone does not fit, cut inside
  it, at the earliest point that leaves at most the room, so the compaction reaches its target.

A cut is only ever made where it splits no tool call from its result (:func:`cut_points`). When
not even the newest call and its result fit, that last piece is kept and the planner shortens it.
"""

from __future__ import annotations

from collections.abc import Sequence

from aptmem.context.pairing import pair_tools
from aptmem.entries import Entry

__all__ = ["cut_points", "recent_start"]


def cut_points(entries: Sequence[Entry]) -> list[int]:
    """Every index ``i`` (0 to ``len(entries)``) where keeping ``entries[i:]`` splits no tool pair."""
    pairs = pair_tools(entries)
    # A pair (call c, result r) forbids cuts c+1 .. r: mark the spans with a difference array.
    blocked = [0] * (len(entries) + 2)
    for result, call in pairs.call_of.items():
        blocked[call + 1] += 1
        blocked[result + 1] -= 1
    points, depth = [], 0
    for index in range(len(entries) + 1):
        depth += blocked[index]
        if depth == 0:
            points.append(index)
    return points


def recent_start(entries: Sequence[Entry], counts: Sequence[int], *, turns_start: int, room: int,
                 keep_recent_tokens: int) -> int:
    """Where the kept part of ``entries`` starts under the rule of the module docstring.

    ``turns_start`` is where the last turns the planner chose start; ``room`` the tokens the target
    leaves for the kept part; ``counts[i]`` the tokens of ``entries[i]``.
    """
    suffix = [0] * (len(entries) + 1)
    for index in range(len(entries) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + counts[index]
    points = cut_points(entries)
    # The latest cut that keeps at least K recent tokens (the first entry when none keeps that many).
    recent = next((p for p in reversed(points) if suffix[p] >= keep_recent_tokens), points[0])
    start = min(turns_start, recent)
    fitting = next((p for p in points if p >= start and suffix[p] <= room and p < len(entries)), None)
    if fitting is not None:
        return fitting
    # Not even the newest call and its result fit: keep that last piece (the planner shortens it).
    return max((p for p in points if p < len(entries)), default=len(entries))
