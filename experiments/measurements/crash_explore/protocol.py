"""What the crash-state explorer hands its workers and its recording child: typed, so it crosses processes whole.

The job (:mod:`.job`) makes one :class:`ExploreUnit` per (strategy, operation) and explores it
in a worker process (:func:`.unit.explore_unit`), which records the operation in a child
(:mod:`.child`: forked, or under strace with an :class:`OperationJob` written to a file) and
returns a :class:`UnitResult`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from experiments.core.strategy import StrategySpec
from experiments.workloads import WorkloadRequest

__all__ = ["ExploreUnit", "OperationJob", "UnitResult"]


class ExploreUnit(msgspec.Struct, frozen=True, kw_only=True):
    """One strategy's one operation to record and explore, and the explorer's budget for it."""

    strategy: StrategySpec
    #: append | compaction_append | compaction_rewrite
    operation: str
    session_id: str
    #: entries of the session before the operation (the workload's first N)
    entries: int
    appends: int
    workload: WorkloadRequest
    window: int
    keep_turns: int
    estimator: str
    scratch: str
    #: recovery modes each state is recovered in (the default first) and how many the store offers
    modes: list[str]
    modes_offered: int
    torn_max: int
    max_subsets: int
    max_states: int
    seed: int
    examples: int
    state_timeout_s: float
    record_timeout_s: float


class OperationJob(msgspec.Struct, frozen=True, kw_only=True):
    """What the recording child runs: a unit's operation under ``root`` (``marks``: a folder that does not
    exist, whose failed opens mark the events in a system-call trace)."""

    unit: ExploreUnit
    root: str
    marks: str | None = None


class UnitResult(msgspec.Struct, kw_only=True):
    """What exploring one unit gave: one aggregate row per (state kind, recovery mode), example states, facts."""

    strategy: str
    operation: str
    rows: list[dict[str, Any]]
    examples: list[dict[str, Any]]
    info: dict[str, Any]
