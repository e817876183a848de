"""The compaction race as a run's measurement: every cell of the run's strategies, one table."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import polars as pl

from experiments.core.measurement import Progress
from experiments.core.runfolder import RunFolder
from experiments.core.strategy import StrategySpec
from experiments.measurements.compaction_race.driver import plan_cells, run_race
from experiments.measurements.compaction_race.settings import CompactionRaceSettings
from experiments.measurements.compaction_race.spec import SIZES, RaceRow

__all__ = ["SCHEMA", "TABLE", "planned_cells", "run_compaction_race"]

TABLE = "compaction_race"


def planned_cells(strategies: Sequence[StrategySpec], settings: CompactionRaceSettings) -> int:
    """How many cells the race runs (strategies safe for several processes, times persist ways)."""
    return len(plan_cells(strategies, settings.size, persist=settings.persist)[0])


def run_compaction_race(strategies: Sequence[StrategySpec], settings: CompactionRaceSettings, folder: RunFolder,
                        progress: Progress | None = None) -> pl.DataFrame:
    """Race every cell; write the ``compaction_race`` table (one row per participant) and its notes."""
    rows: list[RaceRow] = run_race(strategies, settings.size, settings.seed, persist=settings.persist,
                                   progress=None if progress is None else (lambda cell, cell_rows: progress(1)))
    size = SIZES[settings.size]
    frame = pl.DataFrame([msgspec.to_builtins(row) for row in rows], schema=SCHEMA)
    notes = {"size": settings.size, "seed": settings.seed, **msgspec.to_builtins(size)}
    return folder.write(TABLE, {TABLE: frame}, notes)[TABLE]


#: The declared columns of the table, one per field of :class:`RaceRow` (a test holds them equal).
SCHEMA: dict[str, pl.DataType] = {
    "strategy": pl.Utf8, "persist": pl.Utf8, "seed": pl.Int64, "role": pl.Utf8, "name": pl.Utf8, "kind": pl.Utf8,
    "with_ids": pl.Boolean, "acknowledged": pl.Int64, "lost": pl.Int64, "duplicated": pl.Int64,
    "compactions": pl.Int64, "noop": pl.Int64, "errors": pl.Int64, "summarized": pl.Int64,
    "cell_acknowledged": pl.Int64, "cell_lost": pl.Int64, "cell_compactions": pl.Int64,
    "cell_entries_at_end": pl.Int64, "cell_left_append_log": pl.Int64, "cell_live_consistent": pl.Boolean,
    "seconds": pl.Float64, "error": pl.Utf8,
}
