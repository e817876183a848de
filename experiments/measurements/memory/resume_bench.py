"""Resume benchmark: full streaming load against fast resume, each run in a fresh subprocess.

Each measurement runs in its own ``python -m experiments.measurements.memory.resume_child`` process, so garbage and
allocator state of one run never count against the next, and peak memory is that run's alone.
Repeats go round-robin over the modes (full, naive, tail, full, naive, tail, ...) so a noisy
minute on the shared machine hits every mode alike. Timed runs do not trace; one extra run per
mode traces with tracemalloc for the peak heap, since tracing slows allocation-heavy code several
times over. The file is read from a warm page cache (it was just written, or read by an earlier
run): the figures compare parsing work, not the disk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import msgspec
import polars as pl

from experiments.core.children import run_module
from experiments.measurements.memory.resume_child import ChildResult

__all__ = ["SAMPLE_SCHEMA", "TIMED_MODES", "measure_resume", "run_child", "speedup", "summarize_resume"]

TIMED_MODES = ("full_stream", "full_load", "tail")

SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "mode": pl.String(),  # full_stream | full_load | tail
    "run": pl.String(),  # timed | traced
    "repeat": pl.Int64(),  # 0-based repeat of this mode
    "wall_ns": pl.Int64(),  # perf_counter_ns around the work, inside the child
    "entries_read": pl.Int64(),  # entries parsed (null for tail)
    "live_entries": pl.Int64(),  # entries of the live context (null for full_stream)
    "rss_before_bytes": pl.Int64(),  # child's VmHWM after imports, before the work
    "peak_rss_bytes": pl.Int64(),  # child's VmHWM after the work
    "rss_growth_bytes": pl.Int64(),  # peak - before: what the work itself added
    "traced_peak_bytes": pl.Int64(),  # tracemalloc peak (traced runs only)
}


def run_child(mode: str, path: str | os.PathLike[str], *, trace: bool = False, timeout: float = 900) -> ChildResult:
    """Run one measurement in a fresh interpreter and return what it printed."""
    args = [mode, os.fspath(path)] + (["--trace"] if trace else [])
    return msgspec.json.decode(run_module("experiments.measurements.memory.resume_child", args, timeout=timeout), type=ChildResult)


def measure_resume(
    path: str | os.PathLike[str],
    *,
    repeats: int = 5,
    modes: Sequence[str] = TIMED_MODES,
    trace: bool = True,
    progress: Callable[[int], object] | None = None,
) -> pl.DataFrame:
    """Time each mode ``repeats`` times (round-robin, fresh process each), plus one traced run per mode."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    rows: list[dict[str, object]] = []
    plan = [(mode, r, False) for r in range(repeats) for mode in modes]
    if trace:
        plan += [(mode, 0, True) for mode in modes]
    for mode, repeat, traced in plan:
        res = run_child(mode, path, trace=traced)
        rows.append({
            "mode": mode, "run": "traced" if traced else "timed", "repeat": repeat, "wall_ns": res.wall_ns,
            "entries_read": res.entries_read, "live_entries": res.live_entries,
            "rss_before_bytes": res.rss_before_bytes, "peak_rss_bytes": res.peak_rss_bytes,
            "rss_growth_bytes": res.peak_rss_bytes - res.rss_before_bytes, "traced_peak_bytes": res.traced_peak_bytes,
        })
        if progress is not None:
            progress(1)
    return pl.DataFrame(rows, schema=SAMPLE_SCHEMA)


def summarize_resume(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per mode: wall-time median/min/max over timed runs (ms), memory peaks (MB), speedup of tail.

    ``speedup_of_tail`` = this mode's median / the tail's median (1.0 on the tail row).
    """
    timed = samples.filter(pl.col("run") == "timed")
    traced = samples.filter(pl.col("run") == "traced").group_by("mode").agg(
        (pl.col("traced_peak_bytes").max() / 1e6).alias("traced_peak_mb"))
    out = (
        timed.group_by("mode", maintain_order=True)
        .agg(
            pl.len().alias("repeats"),
            (pl.col("wall_ns").median() / 1e6).alias("median_ms"),
            (pl.col("wall_ns").min() / 1e6).alias("min_ms"),
            (pl.col("wall_ns").max() / 1e6).alias("max_ms"),
            pl.col("entries_read").max().alias("entries_read"),
            pl.col("live_entries").max().alias("live_entries"),
            (pl.col("peak_rss_bytes").median() / 1e6).alias("peak_rss_mb"),
            (pl.col("rss_growth_bytes").median() / 1e6).alias("rss_growth_mb"),
        )
        .join(traced, on="mode", how="left")
    )
    tail = out.filter(pl.col("mode") == "tail")["median_ms"]
    tail_ms = tail[0] if tail.len() else None
    return out.with_columns((pl.col("median_ms") / tail_ms if tail_ms else pl.lit(None, pl.Float64)).alias("speedup_of_tail"))


def speedup(summary: pl.DataFrame, against: str = "full_stream") -> float | None:
    """How many times faster the tail resume is than ``against`` (ratio of medians), or None."""
    row = summary.filter(pl.col("mode") == against)
    return None if row.height == 0 else row["speedup_of_tail"][0]
