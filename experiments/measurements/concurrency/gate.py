"""The concurrency figures the regression gate holds: nothing lost where a store or the lock promises it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["concurrency_metrics"]


def concurrency_metrics(run_dir: Path) -> Iterator[Metric]:
    """Losses of multi-process-safe stores, and of every command-line and sidecar run with the lock."""
    table = read_table(run_dir, "concurrency")
    if table is None:
        return
    for row in table.iter_rows(named=True):
        # Only a store that promises multi-process safety is held to it: the losses of one that
        # rewrites its file depend on how the writers' rewrites interleave, which is the finding, not a figure.
        if row["multi_process_safe"]:
            yield Metric(f"concurrency.{row['strategy']}.lost", row["lost"], "lower", 0, relative=False)
    modes = read_table(run_dir, "concurrency_modes")
    if modes is not None:
        for row in modes.filter(pl.col("mode") == "lock").iter_rows(named=True):
            # With the lock nothing may be lost, damaged or doubled, on any machine: held at zero.
            # (Without it the counts depend on how the writers happen to overlap: the finding, not a figure.)
            key = f"concurrency_modes.{row['target']}.lock" + (f".{row['line_bytes']}" if row["line_bytes"] else "")
            for column in ("lost", "damaged_lines", "duplicated", "writers_failed"):
                yield Metric(f"{key}.{column}", float(row[column]), "lower", 0, relative=False)
