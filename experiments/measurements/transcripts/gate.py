"""The transcripts figures the regression gate holds: estimates of fixed transcripts against their usage,
where aptmem under the agent's rule compacts against where the agent did, and replays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["transcripts_metrics"]


def _usage_metrics(run_dir: Path) -> Iterator[Metric]:
    summary = read_table(run_dir, "usage_summary")
    if summary is not None:
        for row in summary.iter_rows(named=True):
            key = f"transcripts.{row['format']}.{row['tier']}"
            # Estimates of fixed transcripts are deterministic: half a percentage point is a real change.
            for column in ("mape_pct", "mape_overhead_pct", "test_mape_pct"):
                if row[column] is not None:
                    yield Metric(f"{key}.{column}", row[column], "lower", 0.5, relative=False)
    sessions = read_table(run_dir, "usage_session")
    if sessions is not None:
        for row in sessions.iter_rows(named=True):
            key = f"transcripts.{row['session']}.{row['tier']}"
            if row["mape_pct"] is not None:
                yield Metric(f"{key}.mape_pct", row["mape_pct"], "lower", 0.5, relative=False)
                # A p95 in tokens: 250 tokens is a real change on contexts of tens of thousands.
                yield Metric(f"{key}.p95_abs_error", row["p95_abs_error"], "lower", 250, relative=False)


def _trigger_metrics(run_dir: Path) -> Iterator[Metric]:
    triggers = read_table(run_dir, "transcript_triggers")
    if triggers is not None and triggers.height:
        per = triggers.group_by("session", "window", "tier", maintain_order=True).agg(
            (~pl.col("on_time")).sum().alias("late"), pl.col("over_window_requests").sum().alias("over"))
        for row in per.iter_rows(named=True):
            key = f"transcripts.{row['session']}.{row['window']}.{row['tier']}"
            yield Metric(f"{key}.agent_rule_missed_segments", row["late"], "lower", 0, relative=False)
            yield Metric(f"{key}.agent_rule_over_window_requests", row["over"], "lower", 0, relative=False)
    errors = read_table(run_dir, "agent_compaction_error")
    if errors is not None:
        for row in errors.filter(pl.col("ape_pct").is_not_null()).iter_rows(named=True):
            key = f"transcripts.{row['session']}.compaction{row['compaction']}.{row['tier']}"
            yield Metric(f"{key}.ape_pct", row["ape_pct"], "lower", 0.5, relative=False)


def transcripts_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per format, session and tier: error against the provider's usage; per session and tier: the agent-rule
    check and the error at the agent's compactions; per session, window and tier: the replay's compactions."""
    yield from _usage_metrics(run_dir)
    yield from _trigger_metrics(run_dir)
    replays = read_table(run_dir, "transcript_compaction")
    if replays is not None:
        for row in replays.iter_rows(named=True):
            key = f"transcripts.{row['session']}.{row['window']}.{row['tier']}"
            yield Metric(f"{key}.aptmem_compactions", row["aptmem_compactions"], "equal", 0, relative=False)
            yield Metric(f"{key}.split_tool_pairs", row["split_tool_pairs"], "lower", 0, relative=False)
            yield Metric(f"{key}.compactions_over_target", row["compactions_over_target"], "lower", 0, relative=False)
            yield Metric(f"{key}.appends_over_window", row["appends_over_window"], "lower", 0, relative=False)
