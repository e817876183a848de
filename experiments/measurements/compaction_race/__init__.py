"""Compaction racing writers: real processes append while others compact, and nothing acknowledged may be lost.

For each strategy that several processes may share and each way to persist a compaction, one
session is raced by writer processes (a long-lived library store, a new library store per
append, and for aptmem's JSONL log one ``aptmem append`` per entry and one long-lived ``aptmem
append`` fed a line at a time) against compactor processes (a library Session compacting in a
loop, and for the JSONL log ``aptmem compact --force`` processes). Then every acknowledged entry
is looked for: in the session, or among what a committed compaction summarized
(:mod:`.oracle` says exactly what counts).

Read top to bottom: :mod:`.settings`, :mod:`.spec` (the typed cells and rows, the sizes),
:mod:`.job` (the run's table), :mod:`.driver` (the processes of a cell, then the check),
:mod:`.child` (one writer or compactor process), :mod:`.oracle`, :mod:`.report`, :mod:`.gate`.
``python -m experiments.measurements.compaction_race --size full`` runs it from the shell (sizes:
``ci`` takes seconds a cell; ``full`` makes at least 1,000 compactions race at least 10,000
appends per cell).

The workload is seeded (which entries, of which type and length, with ids or without); the
interleaving is whatever the processes and the kernel make of it, which is the point.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.compaction_race.settings import CompactionRaceSettings

__all__ = ["CompactionRace", "CompactionRaceSettings"]


class CompactionRace:
    """The compaction race measurement (untimed: what it counts does not depend on speed)."""

    name = "compaction_race"
    settings = CompactionRaceSettings
    timed = False
    unit = "cell"
    tables = ("compaction_race",)

    def plan(self, settings: CompactionRaceSettings, ctx: RunContext) -> int:
        """One cell per strategy safe for several processes and way to persist."""
        from experiments.measurements.compaction_race.job import planned_cells

        return planned_cells(ctx.strategies, settings)

    def run(self, settings: CompactionRaceSettings, ctx: RunContext, progress: Progress) -> None:
        """Race every cell; write the table."""
        from experiments.measurements.compaction_race.job import run_compaction_race

        run_compaction_race(ctx.strategies, settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The race's section of the report."""
        from experiments.measurements.compaction_race.report import compaction_race_section

        return compaction_race_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Losses, doubles and inconsistent live contexts, held at zero."""
        from experiments.measurements.compaction_race.gate import compaction_race_metrics

        return compaction_race_metrics(run_dir)
