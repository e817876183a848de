"""Fuzzing: random bytes and mutated real transcripts and sessions through the reader in every recovery mode,
``fsck``, ``import``, ``tokens`` and the entry decoder, held to oracles; and one huge line per reader.

Read top to bottom: :mod:`.settings`, :mod:`.job`, :mod:`.inputs` (what is fuzzed), :mod:`.targets` and
:mod:`.oracles` (what must hold), :mod:`.big_line` (memory bounded by the line cap), :mod:`.report`,
:mod:`.gate`. Not in the default run: ``experiment=full`` tries 125,000 inputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.fuzz.settings import FuzzSettings

__all__ = ["Fuzz", "FuzzSettings"]


class Fuzz:
    """The fuzz measurement (untimed)."""

    name = "fuzz"
    settings = FuzzSettings
    timed = False
    unit = "input"
    tables = ('fuzz', 'fuzz_findings')

    def plan(self, settings: FuzzSettings, ctx: RunContext) -> int:
        """Inputs times targets, plus one per big-line reader."""
        from experiments.measurements.fuzz.job import planned_inputs

        return planned_inputs(settings)

    def run(self, settings: FuzzSettings, ctx: RunContext, progress: Progress) -> None:
        """Fuzz every target; write the tables and the reproducers."""
        from experiments.measurements.fuzz.job import run_fuzz

        run_fuzz(settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The fuzz section of the report."""
        from experiments.measurements.fuzz.report import fuzz_section

        return fuzz_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Every kind of finding, held at zero."""
        from experiments.measurements.fuzz.gate import fuzz_metrics

        return fuzz_metrics(run_dir)
