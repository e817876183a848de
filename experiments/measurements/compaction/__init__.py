"""Compaction: the seeded session with planted facts replayed under the policy, per window and tier.

Read top to bottom: :mod:`.settings`, :mod:`.job` (one replay per window and tier), :mod:`.replay`
(occupancy after every append, facts checked after every compaction), :mod:`.report`, :mod:`.gate`.
:mod:`.golden` keeps the golden figures the regression tests hold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.compaction.settings import CompactionSettings

__all__ = ["Compaction", "CompactionSettings"]


class Compaction:
    """The compaction measurement (untimed: replays are deterministic for a seed)."""

    name = "compaction"
    settings = CompactionSettings
    timed = False
    unit = "append"
    tables = ('occupancy', 'compaction', 'facts', 'fact_checks', 'compaction_summary', 'fact_retention')

    def plan(self, settings: CompactionSettings, ctx: RunContext) -> int:
        """Appends in all replays."""
        from experiments.measurements.compaction.job import planned_appends

        return planned_appends(settings, ctx.workload)

    def run(self, settings: CompactionSettings, ctx: RunContext, progress: Progress) -> None:
        """Replay the session per window and tier; write the tables."""
        from experiments.measurements.compaction.job import run_compaction

        run_compaction(settings, ctx.workload, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The compaction section of the report."""
        from experiments.measurements.compaction.report import compaction_section

        return compaction_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Compactions, occupancy, split pairs and retention, held exactly."""
        from experiments.measurements.compaction.gate import compaction_metrics

        return compaction_metrics(run_dir)
