"""The crash-state explorer's settings: their one set of defaults, typed (the Hydra schema of ``crash_explore``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.store import RECOVERY_MODES
from aptmem.tokens.tiers import parse_tier_spec
from experiments.measurements.crash_explore.child import OPERATIONS

__all__ = ["CrashExploreSettings"]


@dataclass(kw_only=True)
class CrashExploreSettings:
    """How the crash-state explorer runs (``experiment=crash_explore`` explores more than 10,000 states per strategy)."""

    #: operations recorded per strategy: append | compaction_append | compaction_rewrite
    operations: list[str] = field(default_factory=lambda: list(OPERATIONS))
    #: entries of the session before the operation (the workload's first N), taken as already durable
    entries: int = 12
    #: entries the append operation appends (one store.append each) before it closes the store
    appends: int = 2
    #: writes of up to torn_max + 1 bytes are torn at every byte; longer ones at torn_max seeded bytes
    torn_max: int = 8
    #: subsets of the unsynced operations per crash point: every one up to this many, else this many seeded
    max_subsets: int = 8
    #: states recovered per strategy and operation at most (0: all): torn writes get half, other states the
    #: rest, each side drawn with the seed when it has more
    max_states: int = 60
    #: recovery modes each state is recovered in, by stores that offer several; the default mode always
    modes: list[str] = field(default_factory=lambda: ["skip", "point_in_time", "truncate_tail", "strict"])
    #: context window (tokens) of the Session whose compaction is recorded
    window: int = 8000
    #: turns that compaction keeps verbatim
    keep_turns: int = 1
    #: token estimator of that Session, a tier spec: rough:bytes, rough:chars, medium, precise:<tokenizer>
    estimator: str = "rough"
    #: example states kept per (strategy, operation, recovery mode, problem) in crash_state_examples
    examples: int = 3
    #: trace the system calls of strategies declaring tracer strace (skipped, with a note, where strace cannot run)
    strace: bool = True
    #: worker processes (0: one per CPU)
    workers: int = 0
    #: seconds one state's recovery may take before it counts as hung (not loadable)
    state_timeout_s: float = 10.0
    #: seconds recording one operation may take
    record_timeout_s: float = 120.0
    #: seed of the torn-byte and subset samples
    seed: int = 0
    #: folder for the states (null: /dev/shm where it exists; each state is written, recovered and
    #: removed there, and recovery's fsyncs cost nothing on a RAM disk; the states judged are the same)
    tmp: str | None = None

    def __post_init__(self) -> None:
        parse_tier_spec(self.estimator)  # a bad spec fails when the config loads, not in a child
        if unknown := set(self.operations) - set(OPERATIONS):
            raise ValueError(f"unknown operations {sorted(unknown)}; choose from {', '.join(OPERATIONS)}")
        if unknown := set(self.modes) - set(RECOVERY_MODES):
            raise ValueError(f"unknown recovery modes {sorted(unknown)}; choose from {', '.join(RECOVERY_MODES)}")
        if min(self.entries - 4, self.appends - 1, self.torn_max - 1, self.max_subsets - 1, self.workers,
               self.max_states) < 0:
            raise ValueError("need entries >= 4, appends, torn_max, max_subsets >= 1, workers, max_states >= 0")
