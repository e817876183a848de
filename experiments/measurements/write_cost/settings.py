"""The write-cost measurement's settings: their one set of defaults, typed (the Hydra schema of ``write_cost``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WriteCostSettings"]


@dataclass(kw_only=True)
class WriteCostSettings:
    """How the write cost is measured."""

    #: entries in the replayed session (the goals are stated at 5,000)
    entries: int = 5000
    #: a strategy declaring quadratic_appends (each append rewrites the whole history) replays this many only; 0 = all
    quadratic_entries: int = 500
    #: time os.write + fdatasync beside strategies that sync per append (``per_append``) or beside all (``all``)
    sync_baseline: str = "per_append"
    #: the early window of the growth ratio, 1-based entries [lo, hi]
    early: tuple[int, int] = (1, 100)
    #: the late window of the growth ratio: the last N entries replayed
    late_size: int = 100
    #: folder for the temporary stores and the raw baseline files (null: the system's temp folder)
    tmp: str | None = None

    def __post_init__(self) -> None:
        if self.entries < 1 or self.quadratic_entries < 0 or self.late_size < 1:
            raise ValueError("write_cost: entries and late_size must be >= 1, quadratic_entries >= 0")
        if self.sync_baseline not in ("per_append", "all"):
            raise ValueError(f"write_cost.sync_baseline must be per_append or all, not {self.sync_baseline!r}")
