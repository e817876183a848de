"""The memory measurement's settings: their one set of defaults, typed (the Hydra schema of ``memory``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.compaction.policy import CompactionPolicy

__all__ = ["MemorySettings"]


def _default_sizes() -> list[float]:
    return [1.0, 4.0, 16.0]


@dataclass(kw_only=True)
class MemorySettings:
    """How load time and memory are measured."""

    #: session sizes to measure, in MB (10^6 bytes) of the session as JSONL
    sizes_mb: list[float] = field(default_factory=_default_sizes)
    #: timed runs per (strategy, size, op), each in a fresh process
    repeats: int = 3
    #: also run tracemalloc, in one extra run per (strategy, size, op) (tracing slows the run)
    trace: bool = True
    #: measure a strategy declaring whole_reads (it parses its whole session to read anything) up to this size; 0 = no cap
    whole_read_max_mb: float = 100.0
    #: turns the compaction marker keeps verbatim (what a resume must still read before the marker)
    keep_turns: int = CompactionPolicy.keep_turns
    #: entries appended after the compaction marker
    tail_entries: int = 20
    #: measure only these of the run's strategies (names); empty = all. Sync settings do not change
    #: how a store reads, so one config per family and journal mode is enough for a quick run.
    strategies: list[str] = field(default_factory=list)
    #: seconds one child may take before the job fails
    timeout_s: float = 900.0
    #: folder for the stores (the system's temp folder when None); it needs room for every store of one size
    tmp: str | None = None

    def __post_init__(self) -> None:
        if not self.sizes_mb or any(s <= 0 for s in self.sizes_mb):
            raise ValueError("sizes_mb must list sizes > 0")
        if self.repeats < 1 or self.keep_turns < 1 or self.tail_entries < 0 or self.whole_read_max_mb < 0:
            raise ValueError("repeats and keep_turns must be >= 1, tail_entries and whole_read_max_mb >= 0")
