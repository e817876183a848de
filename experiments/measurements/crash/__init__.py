"""Crash recovery: real SIGKILLs of a writer process, and power losses simulated on the bytes.

Read top to bottom: :mod:`.settings`, :mod:`.job` (one server per strategy, cases judged into
the ``recovery`` table), :mod:`.protocol` (what job and server say), :mod:`.server` (kills aimed
by a calibration run; power-loss images recovered in every mode), :mod:`.writer` (the crashed
process), :mod:`.power_loss` (damage on the bytes), :mod:`.report`, :mod:`.gate`. What a crash
leaves and how a promise is judged are shared with the crash-state explorer in
:mod:`experiments.core.crashsim`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.crash.settings import CrashSettings

__all__ = ["Crash", "CrashSettings"]


class Crash:
    """The crash measurement (untimed: its recoveries are timed, but only as figures of their own)."""

    name = "crash"
    settings = CrashSettings
    timed = False
    unit = "case"
    tables = ("recovery",)

    def plan(self, settings: CrashSettings, ctx: RunContext) -> int:
        """Cases planned (rows of ``recovery``)."""
        from experiments.measurements.crash.job import planned_cases

        return planned_cases(ctx.strategies, settings)

    def run(self, settings: CrashSettings, ctx: RunContext, progress: Progress) -> None:
        """Crash every strategy both ways, recover, judge; write ``recovery``."""
        from experiments.measurements.crash.job import run_crash

        run_crash(ctx.strategies, settings, ctx.workload, ctx.folder, progress=progress, services=ctx.services)

    def section(self, run_dir: Path) -> str | None:
        """The crash-recovery section of the report."""
        from experiments.measurements.crash.report import crash_section

        return crash_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Violations and process-crash losses per strategy."""
        from experiments.measurements.crash.gate import crash_metrics

        return crash_metrics(run_dir)
