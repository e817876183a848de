"""Figures of the memory job, drawn from its summary table only (so ``experiments report`` can redraw them)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.palette import Style, strategy_styles

__all__ = ["load_time_figure", "peak_memory_figure"]

_PANELS = (("full_load", "Full load (iter_entries over every entry)"), ("resume", "Resume (read_live)"))


def _styles(summary: pl.DataFrame) -> dict[str, Style]:
    """One colour per family, the same as in every other figure; a line style and marker per strategy."""
    return strategy_styles(summary.select("strategy", "family").unique(maintain_order=True).rows())


def _log_axes(ax) -> None:
    """Log-log axes with plain numbers (0.5, 2, 100) on the ticks instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    class _PlainMinor(LogFormatter):
        # LogFormatter decides which minor ticks get a label (only when an axis spans few
        # decades); this prints them as plain numbers (0.4, not 4e-01).
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:g}"

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(_PlainMinor(labelOnlyBase=False, minor_thresholds=(1.5, 0.5)))
    ax.grid(True, which="both", alpha=0.3)


def load_time_figure(summary: pl.DataFrame, path: Path) -> Path:
    """Median wall time against session size, log-log: full load and resume side by side, one line per strategy.

    ``summary`` is :func:`experiments.measurements.memory.report.memory_summary`'s table (one row per
    strategy and size); the whiskers span the fastest and slowest timed run.
    """
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    names = summary["strategy"].unique(maintain_order=True).to_list()
    styles = _styles(summary)
    for ax, (op, title) in zip(axes, _PANELS, strict=True):
        for name in names:
            part = summary.filter(pl.col("strategy") == name).sort("session_mb")
            median, low, high = part[f"{op}_ms"], part[f"{op}_min_ms"], part[f"{op}_max_ms"]
            ax.errorbar(part["session_mb"], median, yerr=[median - low, high - median], markersize=4,
                        linewidth=1.3, capsize=2, label=name, **styles[name].line())
        _log_axes(ax)
        ax.set_xlabel("session size (MB of JSONL, log scale)")
        ax.set_title(title)
    axes[0].set_ylabel("wall time incl. opening the store, median (ms, log scale)")
    axes[1].legend(fontsize=8, ncol=1, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("Load time against session size (fresh process per run; whiskers: min-max)")
    return save_figure(fig, path)


def peak_memory_figure(summary: pl.DataFrame, path: Path) -> Path:
    """Peak RSS (solid) and peak traced heap (dotted) against session size, log-log, full load and resume.

    RSS is the child's whole high-water mark (interpreter included: the floor of each line);
    the traced heap counts only the Python allocations of the read itself. A grey line marks
    memory equal to the session's size, for scale.
    """
    plt = pyplot()
    from matplotlib.lines import Line2D  # after pyplot(), which picks the Agg backend first

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    names = summary["strategy"].unique(maintain_order=True).to_list()
    sizes = summary["session_mb"].unique().sort()
    styles = _styles(summary)
    for ax, (op, title) in zip(axes, _PANELS, strict=True):
        for name in names:
            part = summary.filter(pl.col("strategy") == name).sort("session_mb")
            style = styles[name]
            ax.plot(part["session_mb"], part[f"{op}_rss_mb"], markersize=4, linewidth=1.3, label=name,
                    color=style.color, linestyle="-", marker=style.marker)
            traced = part.filter(pl.col(f"{op}_heap_mb").is_not_null())
            if traced.height:
                # Unlabelled: the marker and colour name the strategy, the proxies below name the line kinds.
                ax.plot(traced["session_mb"], traced[f"{op}_heap_mb"], marker=style.marker, markersize=3, linewidth=1.0,
                        color=style.color, linestyle=":")
        ax.plot(sizes, sizes, color="grey", linewidth=0.8, linestyle="--", label="memory = session size")
        _log_axes(ax)
        ax.set_xlabel("session size (MB of JSONL, log scale)")
        ax.set_title(title)
    axes[0].set_ylabel("peak memory, median (MB, log scale)")
    handles, labels = axes[1].get_legend_handles_labels()
    handles += [Line2D([], [], color="black", linewidth=1.3), Line2D([], [], color="black", linestyle=":")]
    labels += ["solid: peak RSS", "dotted: traced heap peak"]
    axes[1].legend(handles, labels, fontsize=8, ncol=1, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("Peak memory against session size (RSS: VmHWM of a fresh process; traced heap: tracemalloc)")
    return save_figure(fig, path)
