"""The memory figures the regression gate holds: ratios of reads timed in one run, and memory per byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["memory_metrics"]


def memory_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per strategy at the largest size: resume speed-up over a full load, and full-load RSS per session byte."""
    table = read_table(run_dir, "memory")
    if table is None:
        return
    timed = table.filter(pl.col("run") == "timed")
    top = timed.filter(pl.col("size_mb") == timed["size_mb"].max())
    for (name,), part in top.group_by("strategy"):
        load = part.filter(pl.col("op") == "full_load")
        resume = part.filter(pl.col("op") == "resume")
        # Both sides timed in the same run: the ratio survives a slower machine, raw times would not.
        yield Metric(f"memory.{name}.resume_speedup", load["wall_ns"].median() / resume["wall_ns"].median(), "higher", 0.5)
        growth = (load["peak_rss_bytes"] - load["rss_before_bytes"]).median() / load["session_bytes"].max()
        yield Metric(f"memory.{name}.full_load_rss_per_session_byte", growth, "lower", 0.5)
