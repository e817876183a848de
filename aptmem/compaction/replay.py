"""Replaying a history through a fresh session under a compaction policy, with the figures.

Used by ``aptmem replay``, by the compaction regression tests and by the harness: every entry
is appended through a :class:`~aptmem.session.Session` (so compaction fires as it would live),
and each append's context size is recorded as a share of the window.

A history may hold compactions of its own (an imported Claude Code or pi session does). By
default they are honoured: the compaction is stored as it is, and the session is reopened
from the store, so it continues from the live context the compaction left (its summary and
kept entries), as the session read back from disk would; ``reopen`` makes that session. With
``source_compactions="strip"`` they are left out, and only the policy compacts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import msgspec

from aptmem.compaction.turns import split_tool_pairs
from aptmem.entries import Compaction, Entry, User
from aptmem.session import Session

__all__ = ["SOURCE_COMPACTIONS", "ReplayReport", "ReplayStep", "replay"]

#: What a replay does with the history's own compactions.
SOURCE_COMPACTIONS = ("honour", "strip")


class ReplayReport(msgspec.Struct, kw_only=True):
    """What a replay saw. Occupancy is context tokens / window, by the deciding tier."""

    entries: int = 0
    turns: int = 0
    compactions: int = 0
    #: largest occupancy after any append (once the compaction it caused, if any, is done)
    max_occupancy: float = 0.0
    #: largest occupancy reached at all, i.e. just before a compaction brought it down
    peak_occupancy: float = 0.0
    pre_compaction_occupancy: list[float] = []
    post_compaction_occupancy: list[float] = []
    #: compactions that ended over the target, and how many of those said why in their notes
    over_target: int = 0
    over_target_explained: int = 0
    #: compactions that fired below the trigger (must be 0)
    below_trigger: int = 0
    #: tool call / result pairs split between what was summarized and what was kept (must be 0)
    split_tool_pairs: int = 0
    #: entries larger than the whole window (ids), reported by the compactions that met them
    oversized_entries: int = 0
    oversized_ids: list[str] = []
    #: appends after which the context was still over the window
    over_window: int = 0
    #: the history's own compactions honoured (the session reopened from them), and those left out
    source_compactions: int = 0
    stripped_compactions: int = 0
    #: occupancy of the live context each honoured compaction left
    post_source_compaction_occupancy: list[float] = []
    #: tokens of the live context at the end, by the deciding tier (what the session reopened holds)
    final_tokens: int = 0
    seconds: float = 0.0


@dataclass
class ReplayStep:
    """One append of a replay: its position and the occupancy before and after compaction."""

    seq: int
    occupancy: float
    occupancy_after: float
    compacted: bool
    #: the entry was a compaction of the history, honoured
    source_compaction: bool = False


@dataclass
class _Recorder:
    window: int
    trigger: float
    target: float
    report: ReplayReport = field(default_factory=ReplayReport)
    steps: list[ReplayStep] = field(default_factory=list)
    oversized: dict[str, None] = field(default_factory=dict)


def replay(
    entries: Iterable[Entry],
    session: Session,
    *,
    keep_steps: bool = False,
    source_compactions: str = "honour",
    reopen: Callable[[], Session] | None = None,
) -> tuple[ReplayReport, list[ReplayStep]]:
    """Append every entry through ``session``; return the report (and each step if asked).

    A compaction among ``entries`` is honoured (stored, then ``reopen()`` gives the session read
    back from the store) or, with ``source_compactions="strip"``, left out; see the module
    docstring. Honouring one without ``reopen`` raises ``ValueError``.
    """
    if source_compactions not in SOURCE_COMPACTIONS:
        raise ValueError(f"source_compactions must be one of {', '.join(SOURCE_COMPACTIONS)}, not {source_compactions!r}")
    policy = session.policy
    rec = _Recorder(policy.window, policy.trigger, policy.target)
    report = rec.report
    started = time.perf_counter()
    for seq, entry in enumerate(entries, start=1):
        if isinstance(entry, Compaction):
            if source_compactions == "strip":
                report.stripped_compactions += 1
                continue
            if reopen is None:
                raise ValueError("the history holds a compaction: honouring it needs reopen= (or strip it)")
            before = session.tokens() / policy.window
            session.store.append(session.session_id, entry)
            session = reopen()
            after = session.tokens() / policy.window
            report.entries += 1
            report.source_compactions += 1
            report.post_source_compaction_occupancy.append(round(after, 4))
            report.max_occupancy = max(report.max_occupancy, after)
            report.over_window += after > 1.0
            if keep_steps:
                rec.steps.append(ReplayStep(seq, before, after, False, source_compaction=True))
            continue
        outcome = session.append(entry)
        report.entries += 1
        report.turns += isinstance(entry, User)
        before = outcome.tokens / policy.window
        after = outcome.tokens_after / policy.window
        report.max_occupancy = max(report.max_occupancy, after)
        report.peak_occupancy = max(report.peak_occupancy, before)
        report.over_window += after > 1.0
        if outcome.compaction is not None:
            _record_compaction(rec, outcome.compaction, before, after)
        if keep_steps:
            rec.steps.append(ReplayStep(seq, before, after, outcome.compaction is not None))
    for entry, tokens in session.entry_counts():
        if tokens > policy.window and entry.id is not None:
            rec.oversized[entry.id] = None
    report.oversized_ids = list(rec.oversized)
    report.oversized_entries = len(rec.oversized)
    report.final_tokens = session.tokens()
    report.seconds = round(time.perf_counter() - started, 3)
    return report, rec.steps


def _record_compaction(rec: _Recorder, result: object, before: float, after: float) -> None:
    report = rec.report
    report.compactions += 1
    report.pre_compaction_occupancy.append(round(before, 4))
    report.post_compaction_occupancy.append(round(after, 4))
    report.below_trigger += before < rec.trigger
    plan = result.plan  # type: ignore[attr-defined]
    report.split_tool_pairs += split_tool_pairs(plan.kept, plan.summarized)
    for ident in plan.oversized:
        rec.oversized[ident] = None
    if after > rec.target:
        report.over_target += 1
        report.over_target_explained += bool(result.entry.notes)  # type: ignore[attr-defined]
