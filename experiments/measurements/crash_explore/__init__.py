"""The crash-state explorer (ALICE-style): every state a power loss may leave after an append or a compaction.

Read top to bottom: :mod:`.settings`, :mod:`.job` (one unit per strategy and operation, run in
worker processes), :mod:`.protocol` (the typed unit), :mod:`.unit` (record, check, enumerate,
recover, judge), :mod:`.child` (the recorded operation), :mod:`.strace` (a system-call trace as
operations), :mod:`.states` (the crash states POSIX allows), :mod:`.check` (one state judged),
:mod:`.report`, :mod:`.gate`. Not in the default run: ``experiment=crash_explore``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.crash_explore.settings import CrashExploreSettings

__all__ = ["CrashExplore", "CrashExploreSettings"]


class CrashExplore:
    """The crash-state explorer (untimed)."""

    name = "crash_explore"
    settings = CrashExploreSettings
    timed = False
    unit = "operation"
    tables = ("crash_states", "crash_state_examples")

    def plan(self, settings: CrashExploreSettings, ctx: RunContext) -> int:
        """(strategy, operation) units."""
        from experiments.measurements.crash_explore.job import planned_units

        return planned_units(ctx.strategies, settings)

    def run(self, settings: CrashExploreSettings, ctx: RunContext, progress: Progress) -> None:
        """Record, enumerate, recover and judge every unit; write the two tables."""
        from experiments.measurements.crash_explore.job import run_crash_explore

        run_crash_explore(ctx.strategies, settings, ctx.workload, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The crash-state section of the report."""
        from experiments.measurements.crash_explore.report import crash_explore_section

        return crash_explore_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Violations per strategy."""
        from experiments.measurements.crash_explore.gate import crash_explore_metrics

        return crash_explore_metrics(run_dir)
