"""The transcripts figures the regression gate holds: estimates of fixed transcripts against their usage, and replays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["transcripts_metrics"]


def transcripts_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per format and tier: error against the provider's usage; per session, window and tier: the replay's compactions."""
    summary = read_table(run_dir, "usage_summary")
    if summary is not None:
        for row in summary.iter_rows(named=True):
            key = f"transcripts.{row['format']}.{row['tier']}"
            # Estimates of fixed transcripts are deterministic: half a percentage point is a real change.
            for column in ("mape_pct", "mape_overhead_pct", "test_mape_pct"):
                if row[column] is not None:
                    yield Metric(f"{key}.{column}", row[column], "lower", 0.5, relative=False)
    replays = read_table(run_dir, "transcript_compaction")
    if replays is not None:
        for row in replays.iter_rows(named=True):
            key = f"transcripts.{row['session']}.{row['window']}.{row['tier']}"
            yield Metric(f"{key}.aptmem_compactions", row["aptmem_compactions"], "equal", 0, relative=False)
            yield Metric(f"{key}.split_tool_pairs", row["split_tool_pairs"], "lower", 0, relative=False)
