"""Load time, resume time and peak memory against session size, each read in a fresh process.

Read top to bottom: :mod:`.settings`, :mod:`.job` (sessions written into every store, reads in
children), :mod:`.store_child` (the child), :mod:`.report` and :mod:`.figures`, :mod:`.gate`.
The resume benchmark (``benchmarks/resume.py``) keeps its child beside this one:
:mod:`.resume_bench`, :mod:`.resume_child`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.memory.settings import MemorySettings

__all__ = ["Memory", "MemorySettings"]


class Memory:
    """The memory measurement (timed: it holds the machine's timing lock)."""

    name = "memory"
    settings = MemorySettings
    timed = True
    unit = "process"
    tables = ("memory",)

    def plan(self, settings: MemorySettings, ctx: RunContext) -> int:
        """Child processes in all (checks, timed and traced reads)."""
        from experiments.measurements.memory.job import planned_measurements

        return planned_measurements(ctx.strategies, settings)

    def run(self, settings: MemorySettings, ctx: RunContext, progress: Progress) -> None:
        """Write each session size into every store and read it back in fresh processes."""
        from experiments.measurements.memory.job import run_memory

        run_memory(ctx.strategies, settings, ctx.workload, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The memory section of the report."""
        from experiments.measurements.memory.report import memory_section

        return memory_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Resume speed-up and full-load memory per byte, per strategy."""
        from experiments.measurements.memory.gate import memory_metrics

        return memory_metrics(run_dir)
