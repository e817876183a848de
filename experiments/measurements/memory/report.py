"""The memory section of the report: load time, resume time, peak memory and bytes on disk, from the stored tables alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table
from experiments.measurements.memory.figures import load_time_figure, peak_memory_figure
from experiments.measurements.memory.job import read_tables

__all__ = ["memory_summary", "summary_markdown", "memory_section"]

_OPS = ("full_load", "resume")


def memory_summary(memory: pl.DataFrame) -> pl.DataFrame:
    """One row per (strategy, size): medians of the timed runs, the traced peaks, the sizes.

    Per op (``full_load``, ``resume``): ``{op}_ms`` median wall time, ``{op}_min_ms`` and
    ``{op}_max_ms``, ``{op}_rss_mb`` median peak RSS, ``{op}_growth_mb`` median of peak RSS minus
    the child's RSS before the read, ``{op}_heap_mb`` the traced heap peak (null when not traced).
    Also ``speedup`` (full-load median / resume median), ``disk_mb`` and ``disk_ratio`` (bytes on
    disk / the session's JSONL bytes). Time and RSS come from timed runs only: tracing inflates both.
    """
    keys = ["strategy", "family", "durable", "size_mb"]
    base = memory.group_by(keys, maintain_order=True).agg(
        (pl.col("session_bytes").first() / 1e6).alias("session_mb"),
        pl.col("entries").first(),
        pl.col("live_entries").max(),
        (pl.col("bytes_on_disk").first() / 1e6).alias("disk_mb"),
        (pl.col("bytes_on_disk").first() / pl.col("session_bytes").first()).alias("disk_ratio"),
    )
    for op in _OPS:
        rows = memory.filter(pl.col("op") == op)
        timed = rows.filter(pl.col("run") == "timed").group_by(keys).agg(
            pl.len().alias(f"{op}_runs"),
            (pl.col("wall_ns").median() / 1e6).alias(f"{op}_ms"),
            (pl.col("wall_ns").min() / 1e6).alias(f"{op}_min_ms"),
            (pl.col("wall_ns").max() / 1e6).alias(f"{op}_max_ms"),
            (pl.col("peak_rss_bytes").median() / 1e6).alias(f"{op}_rss_mb"),
            ((pl.col("peak_rss_bytes") - pl.col("rss_before_bytes")).median() / 1e6).alias(f"{op}_growth_mb"),
        )
        traced = rows.filter(pl.col("run") == "traced").group_by(keys).agg(
            (pl.col("traced_peak_bytes").max() / 1e6).alias(f"{op}_heap_mb"))
        base = base.join(timed, on=keys, how="left").join(traced, on=keys, how="left")
    # Strategies in the run's order (first appearance), sizes ascending within each.
    order = {name: i for i, name in enumerate(memory["strategy"].unique(maintain_order=True).to_list())}
    return (base.with_columns((pl.col("full_load_ms") / pl.col("resume_ms")).alias("speedup"))
            .sort(pl.col("strategy").replace_strict(order, return_dtype=pl.Int64), "size_mb"))


def _ms(x: float) -> str:
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def _mb(x: float) -> str:
    return f"{x:,.1f}" if x >= 1 else f"{x:,.2f}"


def summary_markdown(summary: pl.DataFrame) -> str:
    """The per-strategy table at each strategy's largest measured size."""
    largest = summary.filter(pl.col("size_mb") == pl.col("size_mb").max().over("strategy"))
    table = largest.select(
        "strategy", "durable", "session_mb", "entries", "live_entries", "full_load_ms", "resume_ms", "speedup",
        "full_load_rss_mb", "resume_rss_mb", "full_load_growth_mb", "resume_growth_mb", "full_load_heap_mb",
        "resume_heap_mb", "disk_mb", "disk_ratio",
    )
    mbs = {c: _mb for c in ("session_mb", "full_load_rss_mb", "resume_rss_mb", "full_load_growth_mb", "resume_growth_mb",
                            "full_load_heap_mb", "resume_heap_mb", "disk_mb")}
    fmt = {**mbs, "full_load_ms": _ms, "resume_ms": _ms, "speedup": lambda x: f"{x:,.1f}x",
           "disk_ratio": lambda x: f"{x:.2f}x"}
    headers = {
        "session_mb": "session MB", "live_entries": "live entries", "full_load_ms": "full load ms",
        "resume_ms": "resume ms", "speedup": "resume speed-up", "full_load_rss_mb": "full load peak RSS MB",
        "resume_rss_mb": "resume peak RSS MB", "full_load_growth_mb": "full load RSS growth MB",
        "resume_growth_mb": "resume RSS growth MB", "full_load_heap_mb": "full load traced heap MB",
        "resume_heap_mb": "resume traced heap MB", "disk_mb": "on disk MB", "disk_ratio": "disk / JSONL",
    }
    return markdown_table(table, fmt, headers)


def memory_section(run_dir: Path) -> str | None:
    """The report's memory section (None when the run did not measure memory)."""
    if not (run_dir / "memory.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    summary = memory_summary(tables["memory"])
    figures = run_dir / "figures"
    # A line against session size needs two sizes: with one, every panel would be a lone point.
    drawn = summary["session_mb"].n_unique() > 1
    time_fig = load_time_figure(summary, figures / "load_time.png") if drawn else None
    memory_fig = peak_memory_figure(summary, figures / "peak_memory.png") if drawn else None
    sessions = ", ".join(f"{s['bytes'] / 1e6:,.1f} MB ({s['entries']:,} entries, {s['live_entries']:,} live)"
                         for s in notes["sessions"])
    lines = [
        "## Load time, resume time and memory against session size",
        "",
        f"- Sessions of the {notes.get('workload', 'synthetic')} workload (seed {notes['seed']}): {sessions}"
        + (f" (sizes beyond the whole transcript, measured at its own size once: {notes['sizes_beyond_workload']} MB)"
           if notes.get("sizes_beyond_workload") else "") + ". Each is the full history, then "
        f"a compaction marker keeping the last {notes['keep_turns']} turns, then {notes['tail_entries']} more entries; "
        "each store got it with one `replace` (the fastest correct route: appending 100 MB one entry at a time to a store that rewrites its whole file per append is quadratic, and the write path is the write-cost section's subject).",
        "- Every read runs in a fresh subprocess (`python -m experiments.measurements.memory.store_child`): **full load** opens the store "
        "and streams every entry (`iter_entries`); **resume** opens it and calls `read_live`. Times include opening "
        f"the store; {notes['repeats']} timed runs each, round-robin over strategies, warm page cache; medians shown.",
        "- Peak RSS is the child's VmHWM (interpreter and code included; *growth* subtracts its VmHWM before the read). "
        + ("Traced heap: tracemalloc peak of the read (Python allocations only; a C engine's own heap is not traced), "
           "from one extra run per cell." if notes["trace"] else "Traced heap: not measured in this run."),
        f"- Checked before measuring, for each of {notes['checked']} (strategy, size) pairs: `read_live` equals "
        "`select_live` of every entry, and the store holds exactly the session written.",
    ]
    if notes["capped"]:
        capped = sorted({c["strategy"] for c in notes["capped"]})
        # Runs before the cap was keyed by what a strategy declares stored it under the family's name.
        cap = notes["whole_read_max_mb"] if "whole_read_max_mb" in notes else notes["full_json_max_mb"]
        lines.append(f"- Capped: {', '.join(capped)} measured only up to {cap:g} MB "
                     "(it parses its whole session to read anything); the table shows each strategy at its largest size.")
    lines += ["", summary_markdown(summary), ""]
    if time_fig is not None and memory_fig is not None:
        lines += [f"![Load time against session size]({time_fig.relative_to(run_dir)})", "",
                  f"![Peak memory against session size]({memory_fig.relative_to(run_dir)})", ""]
    else:
        lines += ["One session size was measured: the table gives it (a figure against size needs two).", ""]
    return "\n".join(lines)
