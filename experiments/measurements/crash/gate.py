"""The crash figures the regression gate holds: broken promises and process-crash losses, at zero."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["crash_metrics"]


def crash_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per strategy: violations, and acknowledged entries a process crash lost where it promises any durability."""
    table = read_table(run_dir, "recovery")
    if table is None:
        return
    for (name,), part in table.group_by("strategy"):
        # A broken promise is a bug whatever the machine: none may appear.
        yield Metric(f"crash.{name}.violations", float(part["violation"].sum()), "lower", 0, relative=False)
        if part["durability"][0] != "none":  # a store without a promise loses what the kill's timing decides
            process = part.filter(pl.col("crash_kind") == "process")
            yield Metric(f"crash.{name}.process_crash_lost", float(process["lost"].sum()), "lower", 0, relative=False)
