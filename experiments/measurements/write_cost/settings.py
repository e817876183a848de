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
    #: appends left out before the early window of the growth ratio (cold caches, a first file, a first transaction)
    warmup: int = 100
    #: appends in each growth window: the first after the warm-up, and the last (never overlapping; shorter replays
    #: shrink both, and one with room for fewer than 20 each has no growth figure)
    window: int = 100
    #: rounds the strategies take turns in (each appends its next 1/blocks of the entries per round), and so the
    #: consecutive blocks of the block bootstrap of the median's interval
    blocks: int = 10
    #: block-bootstrap draws behind each median's 95% interval
    resamples: int = 400
    #: folder for the temporary stores and the raw baseline files (null: the system's temp folder)
    tmp: str | None = None

    def __post_init__(self) -> None:
        from experiments.measurements.write_cost.summary import MIN_WINDOW

        if self.entries < 1 or self.quadratic_entries < 0 or self.warmup < 0 or self.window < MIN_WINDOW:
            raise ValueError(f"write_cost: entries must be >= 1, quadratic_entries and warmup >= 0, window >= {MIN_WINDOW}")
        if self.blocks < 2 or self.resamples < 10:
            raise ValueError("write_cost: blocks must be >= 2 and resamples >= 10")
        if self.sync_baseline not in ("per_append", "all"):
            raise ValueError(f"write_cost.sync_baseline must be per_append or all, not {self.sync_baseline!r}")
