"""Concurrency safety: several processes append to one session at the same moment.

Read top to bottom: :mod:`.settings`, :mod:`.job` (library writers per strategy, then the modes),
:mod:`.store_writer` (the library writers, forked from one process per strategy), :mod:`.modes` (``aptmem append`` with and without the
lock, a naive buffered logger, the working-memory sidecar), :mod:`.writers` (the harness-only
writers), :mod:`.report`, :mod:`.gate`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.concurrency.settings import ConcurrencySettings

__all__ = ["Concurrency", "ConcurrencySettings"]


class Concurrency:
    """The concurrency measurement (untimed)."""

    name = "concurrency"
    settings = ConcurrencySettings
    timed = False
    unit = "run"
    tables = ("concurrency", "concurrency_modes")

    def plan(self, settings: ConcurrencySettings, ctx: RunContext) -> int:
        """One run per strategy, and one per command-line mode and line size and sidecar mode."""
        from experiments.measurements.concurrency.job import planned_mode_runs

        return len(ctx.strategies) + planned_mode_runs(settings)

    def run(self, settings: ConcurrencySettings, ctx: RunContext, progress: Progress) -> None:
        """Race the writers; write both tables."""
        from experiments.measurements.concurrency.job import run_concurrency

        run_concurrency(ctx.strategies, settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The concurrency section of the report."""
        from experiments.measurements.concurrency.report import concurrency_section

        return concurrency_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Losses held at zero where promised."""
        from experiments.measurements.concurrency.gate import concurrency_metrics

        return concurrency_metrics(run_dir)
