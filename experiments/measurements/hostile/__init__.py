"""Hostile input: hostile ids, symlinks, unwritable folders, full disks, fsync errors, deep JSON, long numbers.

Read top to bottom: :mod:`.job` (every case, one row each), :mod:`.cases` (ids, symlinks,
permissions), :mod:`.inputs` (damaged data and I/O failures), :mod:`.child` (the scenarios that
change a whole process), :mod:`.report`, :mod:`.gate`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.hostile.settings import HostileSettings

__all__ = ["Hostile", "HostileSettings"]


class Hostile:
    """The hostile-input measurement (untimed): the library and the command line, then each strategy's store."""

    name = "hostile"
    settings = HostileSettings
    timed = False
    unit = "case"
    tables = ("hostile",)

    def plan(self, settings: HostileSettings, ctx: RunContext) -> int:
        """Cases tried."""
        from experiments.measurements.hostile.job import planned_cases

        return planned_cases(ctx.strategies)

    def run(self, settings: HostileSettings, ctx: RunContext, progress: Progress) -> None:
        """Try every case; write ``hostile``."""
        from experiments.measurements.hostile.job import run_hostile

        run_hostile(ctx.folder, progress=progress, strategies=ctx.strategies)

    def section(self, run_dir: Path) -> str | None:
        """The hostile-input section of the report."""
        from experiments.measurements.hostile.report import hostile_section

        return hostile_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Surprises held at zero."""
        from experiments.measurements.hostile.gate import hostile_metrics

        return hostile_metrics(run_dir)
