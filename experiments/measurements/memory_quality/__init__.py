"""Memory quality: what the agent still knows, per memory strategy, window and seed, across continued sessions.

Read top to bottom: :mod:`.settings`, :mod:`.job` (every strategy, window and seed on the same
workloads), :mod:`.workload` (the multi-session workload with planted items), :mod:`.kinds`,
:mod:`.replay` (one run through a memory strategy), :mod:`experiments.core.knowledge` (the shared scorer: present in context,
answerable within a packet), :mod:`.tables` (schemas and the summary), :mod:`.report` (the
report section and the frontier figure), :mod:`.gate`, :mod:`.independent` (a second workload
generator, written apart, for a check). The default run measures it small (``experiment=default``);
``experiment=memory_quality`` and ``benchmarks/memory_quality.py`` at its own size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.memory_quality.settings import MemoryQualitySettings

__all__ = ["MemoryQuality", "MemoryQualitySettings"]


class MemoryQuality:
    """The memory-quality measurement (untimed: its knowledge figures are deterministic for a seed)."""

    name = "memory_quality"
    settings = MemoryQualitySettings
    timed = False
    unit = "run"
    tables = ("memory_items", "memory_checks", "memory_answers", "memory_runs", "memory_summary", "memory_plants",
              "memory_recall", "memory_recall_runs")

    def plan(self, settings: MemoryQualitySettings, ctx: RunContext) -> int:
        """Runs: strategies x windows x seeds."""
        from experiments.measurements.memory_quality.job import planned_runs

        return planned_runs(settings)

    def run(self, settings: MemoryQualitySettings, ctx: RunContext, progress: Progress) -> None:
        """Run every memory strategy on every seed's workload; write the tables."""
        from experiments.measurements.memory_quality.job import run_memory_quality

        run_memory_quality(settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The memory-quality section of the report (its figure beside the tables, as the benchmark draws it)."""
        if not (Path(run_dir) / "memory_summary.parquet").exists():
            return None
        from experiments.measurements.memory_quality.report import memory_section

        return memory_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """What each strategy still knows, per window."""
        from experiments.measurements.memory_quality.gate import memory_quality_metrics

        return memory_quality_metrics(run_dir)
