"""The compaction race's figures for the regression gate: nothing lost, doubled or inconsistent, held at zero."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["compaction_race_metrics"]


def compaction_race_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per raced (strategy, persist): acknowledged entries lost and doubled, and whether the live
    context read back equals the one selected from the whole history (1) or not (0)."""
    table = read_table(run_dir, "compaction_race")
    if table is None:
        return
    raced = table.filter(pl.col("kind") != "-")
    for (strategy, persist), cell in raced.group_by("strategy", "persist", maintain_order=True):
        key = f"compaction_race.{strategy}.{persist}"
        yield Metric(f"{key}.lost", float(cell["cell_lost"][0]), "lower", 0, relative=False)
        yield Metric(f"{key}.duplicated", float(cell["duplicated"].sum()), "lower", 0, relative=False)
        yield Metric(f"{key}.live_consistent", float(bool(cell["cell_live_consistent"].all())), "higher", 0, relative=False)
        yield Metric(f"{key}.failed", float(cell["error"].drop_nulls().len() > 0), "lower", 0, relative=False)
