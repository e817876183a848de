"""Deciding a compaction: which turns to keep verbatim, what to summarize, what to shorten.

The plan keeps the newest turns (at most ``keep_turns``, at most ``keep_tokens``) that fit in
what the target leaves after the fixed part of the context (system prompt, working memory) and
the summary's budget. With ``keep_recent_tokens`` it keeps at least that many recent tokens and
cuts inside a turn that does not fit (:mod:`aptmem.compaction.keep`). Otherwise, if not even the
newest turn fits, it is kept anyway (the agent is in the middle of it). Whatever is kept over the
room has its largest texts shortened, tool output first, with a visible marker.
Everything is said in ``notes``; an entry larger than the whole window is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate
from dataclasses import dataclass, field

from aptmem.compaction.keep import recent_start
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.shorten import SHORTEN_ORDER, shorten_entry, shortenable_text
from aptmem.compaction.turns import split_turns
from aptmem.entries import Compaction, Entry

__all__ = ["CompactionPlan", "plan_compaction"]

#: A shortened text keeps at least this many tokens: below that it says nothing useful.
MIN_SHORTENED_TOKENS = 64


@dataclass
class CompactionPlan:
    """What a compaction will do; ``kept`` holds the entries as the live context will show them."""

    previous_summary: str | None
    #: the most tokens the summary may take (more than the policy's when the last turns do not fit whole)
    summary_budget: int
    summarized: list[Entry]
    kept: list[Entry]
    kept_tokens: int
    kept_turns: int
    turns: int
    truncated: dict[int, int] = field(default_factory=dict)  # index in ``kept`` -> characters kept
    #: the kept entries this plan shortens, as the context showed them before (what the cut takes out of it)
    shortened: list[Entry] = field(default_factory=list)
    oversized: list[str] = field(default_factory=list)  # ids (or positions) of entries > window
    notes: list[str] = field(default_factory=list)

    @property
    def leaving(self) -> list[Entry]:
        """What leaves the context, as it showed it: the summarized entries, then the ones shortened."""
        return [*self.summarized, *self.shortened]


def plan_compaction(
    live: Sequence[Entry],
    counts: Sequence[int],
    *,
    policy: CompactionPolicy,
    fixed_tokens: int,
    count_entry: Callable[[Entry], int],
    originals: Sequence[Entry] | None = None,
) -> CompactionPlan:
    """Plan the compaction of a live context (``counts[i]`` is the token count of ``live[i]``).

    ``live`` is the context as shown (entries an earlier compaction shortened are shown
    shortened); ``originals``, if given, the same entries as stored: an entry shortened again
    is shortened from its original, so the plan's copy is what the new compaction's positions
    produce when the session is read back.
    """
    previous = live[0].summary if live and isinstance(live[0], Compaction) else None
    offset = 1 if previous is not None else 0
    body = list(live[offset:])
    body_counts = list(counts[offset:])
    stored = list(originals[offset:]) if originals is not None else body
    oversized = [_name(e, i) for i, (e, n) in enumerate(zip(body, body_counts)) if n > policy.window]

    turns = split_turns(body)
    sizes: list[int] = []
    position = 0
    for turn in turns:
        sizes.append(sum(body_counts[position : position + len(turn)]))
        position += len(turn)

    notes: list[str] = []
    summary_budget = policy.summary_budget
    room = _room(policy, fixed_tokens, summary_budget)
    kept_n, kept_tokens = _last_turns(sizes, room, policy.keep_turns)
    if turns and kept_n < min(policy.keep_turns, len(turns)):
        # The last turns do not fit whole: memory keeps its floor, the kept turns get the rest.
        floored = policy.floored_summary_budget(fixed_tokens)
        if floored > summary_budget:
            summary_budget, room = floored, _room(policy, fixed_tokens, floored)
            kept_n, kept_tokens = _last_turns(sizes, room, policy.keep_turns)
            notes.append(f"the last turns do not fit whole: the summary may take {floored} tokens, so memory keeps "
                         f"{policy.memory_floor:.0%} of the target")
    if turns and kept_n < min(policy.keep_turns, len(turns)):
        notes.append(f"kept {max(kept_n, 1)} of the last {policy.keep_turns} turns: more would not fit the target "
                     f"of {policy.target_tokens} tokens")
    if kept_n == 0 and turns:
        kept_n, kept_tokens = 1, sizes[-1]  # the turn in progress is always kept
    first_kept = len(body) - sum(len(t) for t in turns[len(turns) - kept_n :]) if kept_n else len(body)
    if policy.keep_recent_tokens is not None and body:
        first_kept, kept_n, kept_tokens = _keep_recent(body, body_counts, turns, first_kept, room, policy, notes)
    kept = body[first_kept:]
    kept_counts = body_counts[first_kept:]

    truncated: dict[int, int] = {}
    shown_kept = kept
    if kept_tokens > room:
        kept, kept_counts, truncated, shortened_notes = _shorten_to_fit(kept, stored[first_kept:], kept_counts, room, count_entry)
        kept_tokens = sum(kept_counts)
        notes.extend(shortened_notes)
    if oversized:
        notes.append(f"{len(oversized)} entries larger than the window of {policy.window} tokens: {', '.join(oversized[:10])}")
    return CompactionPlan(
        previous_summary=previous,
        summary_budget=summary_budget,
        summarized=body[:first_kept],
        kept=kept,
        kept_tokens=kept_tokens,
        kept_turns=kept_n,
        turns=len(turns),
        truncated=truncated,
        shortened=[shown_kept[i] for i in sorted(truncated)],
        oversized=oversized,
        notes=notes,
    )


def _room(policy: CompactionPolicy, fixed_tokens: int, summary_budget: int) -> int:
    """The tokens the target leaves for the kept entries."""
    room = max(0, policy.target_tokens - fixed_tokens - summary_budget)
    return room if policy.keep_tokens is None else min(room, policy.keep_tokens)


def _last_turns(sizes: Sequence[int], room: int, keep_turns: int) -> tuple[int, int]:
    """How many of the newest turns (of ``sizes`` tokens each) fit ``room``, at most ``keep_turns``, and their tokens."""
    kept_n, kept_tokens = 0, 0
    for size in reversed(sizes):
        if kept_n == keep_turns or kept_tokens + size > room:
            break
        kept_n += 1
        kept_tokens += size
    return kept_n, kept_tokens


def _keep_recent(body: list[Entry], counts: list[int], turns: list[list[Entry]], first_kept: int, room: int,
                 policy: CompactionPolicy, notes: list[str]) -> tuple[int, int, int]:
    """The last turns or at least ``keep_recent_tokens``, cut inside a turn to fit (:mod:`.keep`)."""
    start = recent_start(body, counts, turns_start=first_kept, room=room,
                         keep_recent_tokens=policy.keep_recent_tokens or 0)
    ends = list(accumulate(len(t) for t in turns))
    kept_turns = sum(end > start for end in ends)
    if start not in (0, *ends):
        notes.append(f"cut inside a turn: kept its newest {len(body) - start} entries "
                     f"({sum(counts[start:])} tokens), whole turns did not fit the {room} tokens left for them")
    return start, kept_turns, sum(counts[start:])


def _name(entry: Entry, index: int) -> str:
    return entry.id or f"#{index}"


def _shorten_to_fit(
    kept: list[Entry], stored: list[Entry], counts: list[int], room: int, count_entry: Callable[[Entry], int]
) -> tuple[list[Entry], list[int], dict[int, int], list[str]]:
    """Shorten the largest texts (tool output first) until the kept entries fit ``room`` tokens.

    ``kept`` is as shown, ``stored`` the same entries as stored: each shortened copy is cut from
    the stored entry, and its position in ``kept`` names it in the result (ids are optional).
    """
    kept, counts = list(kept), list(counts)
    truncated: dict[int, int] = {}
    notes: list[str] = []
    order = sorted(
        (i for i, e in enumerate(kept) if shortenable_text(e)),
        key=lambda i: (SHORTEN_ORDER.get(type(kept[i]), 3), -counts[i]),
    )
    for index in order:
        excess = sum(counts) - room
        if excess <= 0:
            break
        entry, before = kept[index], counts[index]
        goal = max(MIN_SHORTENED_TOKENS, before - excess)
        if goal >= before:
            continue
        text = shortenable_text(entry) or ""
        keep = int(len(text) * goal / max(before, 1))
        for _ in range(4):  # characters per token vary inside a text: converge in a few steps
            candidate, used = shorten_entry(stored[index], keep), keep
            after = count_entry(candidate)
            if after <= goal or keep == 0:
                break
            keep = int(keep * goal / after * 0.95)
        kept[index], counts[index] = candidate, after
        truncated[index] = used  # what the kept copy was cut to (the loop may end a step further)
        notes.append(f"shortened {type(entry).__name__} {_name(entry, index)} from {before} to {after} tokens")
    if sum(counts) > room:
        notes.append(f"the kept turn still takes {sum(counts)} tokens, over the {room} left for it")
    return kept, counts, truncated, notes
