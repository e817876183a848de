"""The compaction figures the regression gate holds: deterministic replays, held exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["compaction_metrics"]


def compaction_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per window and tier: compactions, occupancy, split tool pairs, facts retained."""
    summary = read_table(run_dir, "compaction_summary")
    if summary is None:
        return
    for row in summary.iter_rows(named=True):
        key = f"compaction.{row['window']}.{row['tier']}"
        # The replay is deterministic for a seed: the thresholds are held exactly.
        yield Metric(f"{key}.compactions", row["compactions"], "equal", 0, relative=False)
        yield Metric(f"{key}.max_occupancy", row["max_occupancy"], "lower", 0.005, relative=False)
        yield Metric(f"{key}.split_tool_pairs", row["split_tool_pairs"], "lower", 0, relative=False)
        if row["retained_pct"] is not None:  # a transcript workload plants no facts
            yield Metric(f"{key}.facts_retained_pct", row["retained_pct"], "higher", 0, relative=False)
        if row["median_survived"] is not None:
            yield Metric(f"{key}.median_compactions_survived", row["median_survived"], "higher", 0, relative=False)
