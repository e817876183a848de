"""Write cost per append: every append of every strategy timed beside raw writes of the same bytes.

Read top to bottom: :mod:`.settings` (what can be set), :mod:`.samples` (the timing loop),
:mod:`.summary` (percentiles, ratios, goals), :mod:`.job` (the tables), :mod:`.report` (the
section and its figure), :mod:`.gate` (the figures the regression gate holds).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.write_cost.settings import WriteCostSettings

__all__ = ["WriteCost", "WriteCostSettings"]


class WriteCost:
    """The write-cost measurement (timed: it holds the machine's timing lock)."""

    name = "write_cost"
    settings = WriteCostSettings
    timed = True
    unit = "append"
    tables = ("write_cost_samples", "write_cost_summary", "write_cost_goals")

    def plan(self, settings: WriteCostSettings, ctx: RunContext) -> int:
        """Appends timed in all."""
        from experiments.measurements.write_cost.job import planned_appends

        return planned_appends(ctx.strategies, settings)

    def run(self, settings: WriteCostSettings, ctx: RunContext, progress: Progress) -> None:
        """Time every strategy's appends; write the samples, the summary and the goals."""
        from experiments.measurements.write_cost.job import run_write_cost

        run_write_cost(ctx.strategies, settings, ctx.workload, ctx.folder, tmp=settings.tmp, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The write-cost section of the report."""
        from experiments.measurements.write_cost.report import write_cost_section

        return write_cost_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Ratios to the raw baselines and growth, per strategy."""
        from experiments.measurements.write_cost.gate import write_cost_metrics

        return write_cost_metrics(run_dir)
