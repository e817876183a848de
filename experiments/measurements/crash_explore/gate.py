"""The crash-state explorer's figures the regression gate holds: broken promises, at zero."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["crash_explore_metrics"]


def crash_explore_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per strategy: crash states that broke its own promise, in any recovery mode."""
    table = read_table(run_dir, "crash_states")
    if table is None:
        return
    for (name,), part in table.group_by("strategy", maintain_order=True):
        # A crash state that breaks a strategy's own promise is a bug whatever the machine (every
        # recovery mode counted): none may appear. Losses a weaker promise allows are not counted.
        yield Metric(f"crash_explore.{name}.violations", float(part["violations"].sum()), "lower", 0, relative=False)
