"""Readability of each strategy's files and complexity of its code, measured rather than asserted.

:mod:`.job` does it all. Its table feeds the headline comparison (``readability``, ``complexity``
rows of :mod:`experiments.report.comparison`): it has no section of its own and nothing to gate.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.anatomy.settings import AnatomySettings

__all__ = ["Anatomy", "AnatomySettings"]


class Anatomy:
    """The anatomy measurement (untimed)."""

    name = "anatomy"
    settings = AnatomySettings
    timed = False
    unit = "strategy"
    tables = ("anatomy",)

    def plan(self, settings: AnatomySettings, ctx: RunContext) -> int:
        """One step per strategy."""
        return len(ctx.strategies)

    def run(self, settings: AnatomySettings, ctx: RunContext, progress: Progress) -> None:
        """Measure every strategy; write ``anatomy``."""
        from experiments.measurements.anatomy.job import run_anatomy

        run_anatomy(ctx.strategies, ctx.folder)
        progress(len(ctx.strategies))

    def section(self, run_dir: Path) -> str | None:
        """None: its figures are rows of the headline comparison, not a section of their own."""
        return None

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """None: code size and readability are findings, not figures to hold."""
        return iter(())
