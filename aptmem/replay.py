"""Replaying a history through a fresh session under a compaction policy, with the figures.

Used by ``aptmem replay``, by the compaction regression tests and by the harness: every entry
is appended through a :class:`~aptmem.session.Session` (so compaction fires as it would live),
and each append's context size is recorded as a share of the window.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import msgspec

from aptmem.compaction.turns import split_tool_pairs
from aptmem.entries import Entry, User
from aptmem.session import Session

__all__ = ["ReplayReport", "ReplayStep", "replay"]


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
    seconds: float = 0.0


@dataclass
class ReplayStep:
    """One append of a replay: its position and the occupancy before and after compaction."""

    seq: int
    occupancy: float
    occupancy_after: float
    compacted: bool


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
) -> tuple[ReplayReport, list[ReplayStep]]:
    """Append every entry through ``session``; return the report (and each step if asked)."""
    policy = session.policy
    rec = _Recorder(policy.window, policy.trigger, policy.target)
    report = rec.report
    started = time.perf_counter()
    for seq, entry in enumerate(entries, start=1):
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
