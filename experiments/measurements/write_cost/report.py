"""The write-cost section of the report: tables, goals and the latency figure, from the stored tables alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.core.palette import strategy_styles
from experiments.measurements.write_cost.job import read_tables

__all__ = ["append_latency_figure", "goals_markdown", "summary_markdown", "write_cost_section"]


def _us(ns: float) -> str:
    return f"{ns / 1000:,.1f}" if ns < 100_000_000 else f"{ns / 1e6:,.0f} ms"


def _x(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio < 100 else f"{ratio:,.0f}x"


def append_latency_figure(samples: pl.DataFrame, path: Path, *, window: int = 50) -> Path:
    """Append latency against entry number, one line per strategy, log scale; raw write for scale.

    Each line is the median over consecutive blocks of ``window`` entries (every sample is in
    the table; the blocks only make 5,000 points per strategy readable).
    """
    plt = pyplot()
    blocked = (
        samples.with_columns(((pl.col("seq") - 1) // window * window + window // 2).alias("block"))
        .group_by("strategy", "kind", "block")
        .agg(pl.col("latency_ns").median().alias("p50_ns"))
        .sort("block")
    )
    fig, ax = plt.subplots(figsize=(12, 6))
    pairs = samples.filter(pl.col("kind") == "strategy").select("strategy", "family").unique(maintain_order=True).rows()
    styles = strategy_styles(pairs)
    for name, _family in pairs:
        part = blocked.filter((pl.col("strategy") == name) & (pl.col("kind") == "strategy"))
        style = styles[name]
        ax.plot(part["block"], part["p50_ns"] / 1000, label=name, linewidth=1.4, color=style.color,
                linestyle=style.linestyle, marker=style.marker, markersize=3, markevery=max(1, part.height // 8))
    raw = (
        samples.filter(pl.col("kind") == "raw_write")
        .with_columns(((pl.col("seq") - 1) // window * window + window // 2).alias("block"))
        .group_by("block").agg(pl.col("latency_ns").median().alias("p50_ns")).sort("block")
    )
    ax.plot(raw["block"], raw["p50_ns"] / 1000, label="raw os.write (same bytes)", color="black", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_xlabel("entry number in the session")
    ax.set_ylabel(f"append latency, median per {window} entries (µs, log scale)")
    ax.set_title("Append latency as the session grows")
    ax.grid(True, which="both", alpha=0.3)
    # Outside the axes, on the right: the lines span the whole width, so a legend inside covers data.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="colour: family", title_fontsize=8)
    return save_figure(fig, path)


def summary_markdown(summary: pl.DataFrame) -> str:
    """The per-strategy table: percentiles in microseconds (the median with its 95% interval), ratios, growth."""
    table = summary.with_columns(
        pl.format("{} – {}", pl.col("p50_lo_ns").map_elements(_us, return_dtype=pl.String),
                  pl.col("p50_hi_ns").map_elements(_us, return_dtype=pl.String)).alias("interval"),
        pl.when(pl.col("early_window").is_null()).then(pl.lit("too few entries"))
        .otherwise(pl.format("{} vs {}", "early_window", "late_window")).alias("windows"),
    ).select(
        "strategy", "durability", "entries", "p50_ns", "interval", "p90_ns", "p99_ns", "max_ns",
        "encode_p50_ns", "raw_write_p50_ns", "ratio_encode_raw_write", "paired_ratio_encode_raw_write",
        "raw_fdatasync_p50_ns", "ratio_raw_fdatasync", "ratio_raw_write", "windows", "growth", "raw_write_growth",
    )
    us = {c: _us for c in ("p50_ns", "p90_ns", "p99_ns", "max_ns", "raw_write_p50_ns", "raw_fdatasync_p50_ns", "encode_p50_ns")}
    xs = {c: _x for c in ("ratio_raw_write", "ratio_encode_raw_write", "paired_ratio_encode_raw_write",
                          "ratio_raw_fdatasync", "growth", "raw_write_growth")}
    headers = {
        "p50_ns": "p50 µs", "interval": "p50 95% interval µs", "p90_ns": "p90 µs", "p99_ns": "p99 µs", "max_ns": "max µs",
        "encode_p50_ns": "encode p50 µs", "raw_write_p50_ns": "raw write p50 µs",
        "ratio_encode_raw_write": "p50 / (encode + raw write)", "paired_ratio_encode_raw_write": "paired, per entry",
        "raw_fdatasync_p50_ns": "raw write+fdatasync p50 µs", "ratio_raw_fdatasync": "p50 / raw+fdatasync",
        "ratio_raw_write": "p50 / raw write alone", "windows": "growth windows (entries)",
        "growth": "growth (late p50 / early p50)", "raw_write_growth": "raw write growth",
    }
    return markdown_table(table, {**us, **xs}, headers)


def goals_markdown(goals: pl.DataFrame) -> str:
    """The goals table: value, target and whether it is met."""
    fmt = {"value": _x, "target": lambda t: f"<= {t:g}x", "met": lambda m: "**met**" if m else "**NOT met**"}
    goals = goals.with_columns(pl.col("windows").replace("", None))
    return markdown_table(goals, fmt)


def write_cost_section(run_dir: Path) -> str | None:
    """The report's write-cost section (None when the run did not measure write cost)."""
    if not (run_dir / "write_cost_samples.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    figure = append_latency_figure(tables["write_cost_samples"], run_dir / "figures" / "append_latency.png")
    size = notes.get("session_bytes")
    measured = f"{size / 1e6:.2f} MB as JSONL" if size is not None else f"{notes['session_mb']} MB as JSONL"
    lines = [
        "## Write cost per append",
        "",
        f"- Session: {notes['entries']} entries of the {notes.get('workload', 'synthetic')} workload (seed {notes['seed']}), "
        f"{measured}; every append timed with `perf_counter_ns`, every sample kept.",
        "- Beside each append, in the same run and in a random order per entry: a raw `os.write` of the same "
        "line to an `O_APPEND` file, aptmem's encoding of a fresh copy of the entry, and "
        + ("`os.write` + `fdatasync` beside strategies that sync per append."
           if notes["sync_baseline"] == "per_append" else "`os.write` + `fdatasync` (beside all)."),
        "- What a store costs is read against what it cannot avoid: encoding the entry plus one raw write "
        "(`p50 / (encode + raw write)`; *paired*: the median over entries of each append against the same "
        "entry's encode and write), and, for one that syncs every append, a raw write + `fdatasync`.",
    ]
    if "warmup" in notes:
        lines.append(
            f"- The p50's interval is a 95% block bootstrap ({notes['blocks']} consecutive blocks, {notes['resamples']} draws): "
            "a stretch of slow appends widens it. Growth = median over the last appends / median over as many appends "
            f"after a warm-up of {notes['warmup']} (windows of up to {notes['window']} entries that never overlap; a replay "
            "too short for both has none); raw write growth is the same for the raw write (the machine's drift).")
    else:  # a run folder written before the warm-up and the intervals
        lines.append(f"- Growth = median over the last {notes['late_size']} entries replayed / median over entries "
                     f"{notes['early'][0]}-{notes['early'][1]}.")
    if notes["capped"]:
        replayed = notes.get("replayed", {})
        lines.append("- Capped (every append rewrites the whole history, so a full replay is quadratic): "
                     + ", ".join(f"{name} replayed its first {replayed.get(name, notes['cap'])} entries" for name in notes["capped"])
                     + ".")
    lines += ["", summary_markdown(tables["write_cost_summary"]), "",
              f"![Append latency against entry number]({figure.relative_to(run_dir)})", "",
              "### Goals", "", goals_markdown(tables["write_cost_goals"]), ""]
    return "\n".join(lines)
