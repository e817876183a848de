"""What the crash job and its server process say to each other: typed, as JSON on the server's stdin and stdout.

The job (:mod:`.job`) writes one :class:`CrashJob` per strategy to a server (:mod:`.server`),
which prints one :class:`CrashCase` line per case and a last :class:`ServerInfo` line; a
power-loss writer (:func:`.writer.trace_run`, :func:`.writer.wal_run`) leaves a manifest of
:class:`PowerCut` records beside the images it saved.
"""

from __future__ import annotations

from typing import Any

import msgspec

from experiments.core.crashsim.recovery import RecoveryOutcome
from experiments.core.strategy import CrashModel, StrategySpec
from experiments.workloads import WorkloadRequest

__all__ = ["CrashCase", "CrashJob", "PolicySpec", "PowerCut", "PowerPlan", "ServerInfo", "ServerLine"]


class PolicySpec(msgspec.Struct, frozen=True, kw_only=True):
    """The compacting Session's policy in the writers (CompactionPolicy's arguments)."""

    window: int
    keep_turns: int
    persist: str


class PowerPlan(msgspec.Struct, frozen=True, kw_only=True):
    """The power losses to simulate for one strategy: its model, and the images and modes to try."""

    model: CrashModel
    images: int
    damages: list[str]
    modes: list[str]


class CrashJob(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one strategy's crash server needs."""

    strategy: StrategySpec
    session_id: str
    seed: int
    workload: WorkloadRequest
    scratch: str
    create_first: bool
    kills: int
    compaction_kills: int
    policy: PolicySpec
    estimator: str
    default_mode: str
    power: PowerPlan
    strategy_timeout_s: float
    recovery_timeout_s: float


class CrashCase(msgspec.Struct, kw_only=True, tag="case"):
    """One crash and its recovery, as the server saw it (the job judges it)."""

    crash_kind: str
    phase: str
    damage: str | None
    case: int
    #: digests of every entry the writer announced, in order (the first ``acked`` acknowledged)
    intended: list[str]
    acked: int
    #: acknowledged entries the last sync did not cover (the batch promise's allowance), when known
    unsynced_acked: int | None
    note: str
    outcome: RecoveryOutcome


class ServerInfo(msgspec.Struct, kw_only=True, tag="info"):
    """The server's last line: calibration counts, what it skipped, how long it took (kept in the notes)."""

    info: dict[str, Any]


#: A line of the server's output.
ServerLine = CrashCase | ServerInfo


class PowerCut(msgspec.Struct, kw_only=True):
    """One power-loss moment a writer saved: where it struck and what was acknowledged by then."""

    append: int
    acked: int
    written: int
    call: str
    call_index: int
    calls: int
    #: the session's file, whose damage the images vary
    target: str
    names: list[str]
    #: entries covered by the session file's last sync (trace model; None where unknown)
    synced_entries: int | None
    #: sqlite_wal: the unsynced WAL bytes [start, end)
    region: list[int] | None = None
    note: str = ""
