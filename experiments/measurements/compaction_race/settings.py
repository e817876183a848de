"""The compaction race's settings: their one set of defaults, typed (the Hydra schema of ``compaction_race``)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CompactionRaceSettings"]


@dataclass(kw_only=True)
class CompactionRaceSettings:
    """How large each cell of the race is, and which ways to persist a compaction it races."""

    #: a size of :data:`experiments.measurements.compaction_race.spec.SIZES`: ``ci`` (seconds a cell)
    #: or ``full`` (at least 1,000 compactions racing at least 10,000 appends per cell)
    size: str = "ci"
    #: ways to persist a compaction: append (a marker appended) and rewrite (the session rewritten)
    persist: list[str] = field(default_factory=lambda: ["append", "rewrite"])
    #: seed of the writers' entries (which types, lengths, with ids or without)
    seed: int = 0

    def __post_init__(self) -> None:
        from experiments.measurements.compaction_race.spec import SIZES

        if self.size not in SIZES:
            raise ValueError(f"compaction_race.size: {self.size!r} is not one of {', '.join(sorted(SIZES))}")
        unknown = sorted(set(self.persist) - {"append", "rewrite"})
        if unknown or not self.persist:
            raise ValueError(f"compaction_race.persist: {unknown or 'empty'}; choose from append, rewrite")
