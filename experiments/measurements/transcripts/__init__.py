"""Real transcripts: each tier's estimate against the input tokens the provider reported, and aptmem's
compactions against the original agent's.

Read top to bottom: :mod:`.settings`, :mod:`.job` (usage rows and replays), :mod:`.triggers` (aptmem under
the agent's own rule and window, the error at the agent's compactions), :mod:`.compare` (a replay under
aptmem's policy beside the agent's own compactions), :mod:`.report` and :mod:`.report_triggers`, :mod:`.gate`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.transcripts.settings import TranscriptsSettings

__all__ = ["Transcripts", "TranscriptsSettings"]


class Transcripts:
    """The transcripts measurement (untimed)."""

    name = "transcripts"
    settings = TranscriptsSettings
    timed = False
    unit = "step"
    tables = ("usage", "usage_summary", "usage_session", "agent_compaction_error", "transcript_triggers",
              "transcript_compaction", "transcript_compaction_events")

    def plan(self, settings: TranscriptsSettings, ctx: RunContext) -> int:
        """Steps: per transcript, its usage and one per replay."""
        from experiments.measurements.transcripts.job import planned_steps

        return planned_steps(settings)

    def run(self, settings: TranscriptsSettings, ctx: RunContext, progress: Progress) -> None:
        """Score and replay every transcript; write the tables."""
        from experiments.measurements.transcripts.job import run_transcripts

        run_transcripts(settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The transcripts section of the report."""
        from experiments.measurements.transcripts.report import transcripts_section

        return transcripts_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Error against reported usage; replay compactions."""
        from experiments.measurements.transcripts.gate import transcripts_metrics

        return transcripts_metrics(run_dir)
