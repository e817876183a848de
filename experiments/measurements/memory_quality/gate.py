"""The memory-quality figures the regression gate holds: what each strategy still knows, deterministic for its seeds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["memory_quality_metrics"]

#: The knowledge figures (shares, 0..1): the replays are deterministic for a seed, so a move is a change of behaviour.
_HELD = ("present_first", "present_end", "answerable_1024", "updates_right", "absent_abstained")


def memory_quality_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per memory strategy and window: the mean over seeds of each knowledge figure (timings are not gated)."""
    summary = read_table(run_dir, "memory_summary")
    if summary is None:
        return
    for row in summary.filter(pl.col("metric").is_in(_HELD) & pl.col("mean").is_not_null()).iter_rows(named=True):
        # Deterministic for its seeds: held exactly (a gain passes, any loss is a change of behaviour).
        yield Metric(f"memory_quality.{row['strategy']}.{row['window']}.{row['metric']}", row["mean"], "higher", 0,
                     relative=False)
