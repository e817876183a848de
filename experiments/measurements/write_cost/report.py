"""The write-cost section of the report: tables, goals and the latency figure, from the stored tables alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
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
    fig, ax = plt.subplots(figsize=(10, 6))
    names = samples.filter(pl.col("kind") == "strategy")["strategy"].unique(maintain_order=True).to_list()
    colors = plt.get_cmap("tab20").colors  # 20 distinct colours: one per strategy, none repeated
    for index, name in enumerate(names):
        part = blocked.filter((pl.col("strategy") == name) & (pl.col("kind") == "strategy"))
        ax.plot(part["block"], part["p50_ns"] / 1000, label=name, linewidth=1.4, color=colors[index % len(colors)],
                linestyle=("-", "--", ":", "-.")[index // len(colors) % 4])
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
    ax.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)


def summary_markdown(summary: pl.DataFrame) -> str:
    """The per-strategy table: percentiles in microseconds, ratios to the raw baselines, growth."""
    table = summary.select(
        "strategy", "durability", "entries", "p50_ns", "p90_ns", "p99_ns", "max_ns", "raw_write_p50_ns",
        "ratio_raw_write", "paired_ratio_raw_write", "encode_p50_ns", "ratio_encode_raw_write",
        "raw_fdatasync_p50_ns", "ratio_raw_fdatasync",
        pl.format("{} vs {}", "early_window", "late_window").alias("windows"), "growth", "raw_write_growth",
    )
    us = {c: _us for c in ("p50_ns", "p90_ns", "p99_ns", "max_ns", "raw_write_p50_ns", "raw_fdatasync_p50_ns", "encode_p50_ns")}
    xs = {c: _x for c in ("ratio_raw_write", "paired_ratio_raw_write", "ratio_encode_raw_write", "ratio_raw_fdatasync",
                          "growth", "raw_write_growth")}
    headers = {
        "p50_ns": "p50 µs", "p90_ns": "p90 µs", "p99_ns": "p99 µs", "max_ns": "max µs",
        "raw_write_p50_ns": "raw write p50 µs", "ratio_raw_write": "p50 / raw write",
        "paired_ratio_raw_write": "paired ratio", "encode_p50_ns": "encode p50 µs",
        "ratio_encode_raw_write": "p50 / (encode + raw write)", "raw_fdatasync_p50_ns": "raw write+fdatasync p50 µs",
        "ratio_raw_fdatasync": "p50 / raw+fdatasync", "windows": "growth windows (entries)",
        "growth": "growth (late p50 / early p50)", "raw_write_growth": "raw write growth",
    }
    return markdown_table(table, {**us, **xs}, headers)


def goals_markdown(goals: pl.DataFrame) -> str:
    """The goals table: value, target and whether it is met."""
    fmt = {"value": _x, "target": lambda t: f"<= {t:g}x", "met": lambda m: "**met**" if m else "**NOT met**"}
    return markdown_table(goals, fmt)


def write_cost_section(run_dir: Path) -> str | None:
    """The report's write-cost section (None when the run did not measure write cost)."""
    if not (run_dir / "write_cost_samples.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    figure = append_latency_figure(tables["write_cost_samples"], run_dir / "figures" / "append_latency.png")
    lines = [
        "## Write cost per append",
        "",
        f"- Session: {notes['entries']} entries of the {notes.get('workload', 'synthetic')} workload (seed {notes['seed']}), "
        f"{notes['session_mb']} MB as JSONL; every append timed with `perf_counter_ns`, every sample kept.",
        "- Beside each append, in the same run and in a random order per entry: a raw `os.write` of the same "
        "line to an `O_APPEND` file, aptmem's encoding of a fresh copy of the entry, and "
        + ("`os.write` + `fdatasync` beside strategies that sync per append."
           if notes["sync_baseline"] == "per_append" else "`os.write` + `fdatasync` (beside all)."),
        f"- Growth = median over the last {notes['late_size']} entries replayed / median over entries "
        f"{notes['early'][0]}-{notes['early'][1]}; raw write growth is the same for the raw write (the machine's drift).",
    ]
    if notes["capped"]:
        lines.append(f"- Capped (quadratic rewrite cost): {', '.join(notes['capped'])} replayed for their first "
                     f"{notes['cap']} entries only.")
    lines += ["", summary_markdown(tables["write_cost_summary"]), "",
              f"![Append latency against entry number]({figure.relative_to(run_dir)})", "",
              "### Goals", "", goals_markdown(tables["write_cost_goals"]), ""]
    return "\n".join(lines)
