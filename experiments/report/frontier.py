"""The report's main trade-off: cost per append against what a crash of its storage takes, with intervals.

A point per strategy: its median append with the median's 95% interval (the write-cost table's
block bootstrap) against the mean number of acknowledged entries lost per simulated crash of its
storage: a power loss (its own unsynced tail torn, zeroed or dropped), or, for a strategy whose
data lives in a server, a crash of that server. A strategy none of whose storage crashes could be
simulated is left off the figure and named under it.

The frontier takes the intervals seriously: a setting is *dominated* when another loses no more and
is not slower beyond the noise (its interval's low end at most this one's high end), and is
better on one of the two for sure (it loses fewer, or its whole interval lies below this one's).
Two frontier settings that lose the same and whose intervals overlap are a *tie*, named as such:
which of them a run finds faster is noise, and the report says so instead of flipping between runs.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.palette import strategy_styles

__all__ = ["LOSS_KINDS", "dominates", "frontier_points", "frontier_figure", "in_default_mode", "ties"]

#: The crash kinds that count on the loss axis: what a strategy's storage loses when it crashes.
LOSS_KINDS = ("power_loss", "server")
_OWN = ("torn", "zero", "drop")


def in_default_mode(recovery: pl.DataFrame, run_dir: Path) -> pl.DataFrame:
    """The crash cases recovered in each strategy's own default mode (a store offering several recovery
    modes has its power-loss images recovered in every one; the crash notes name each default)."""
    import msgspec

    notes_path = run_dir / "crash_notes.json"
    defaults = msgspec.json.decode(notes_path.read_bytes())["strategies"] if notes_path.exists() else {}
    modes = pl.DataFrame({"strategy": list(defaults), "default_mode": [s["default_mode"] for s in defaults.values()]},
                         schema={"strategy": pl.String, "default_mode": pl.String})
    return (recovery.join(modes, on="strategy", how="left")
            .filter(pl.col("mode").is_null() | pl.col("default_mode").is_null() | (pl.col("mode") == pl.col("default_mode")))
            .drop("default_mode"))


def dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether ``a`` dominates ``b`` (see the module docstring): no worse on both, better on one for sure."""
    no_more_loss = a["lost"] <= b["lost"]
    not_slower = a["p50_lo_ns"] <= b["p50_hi_ns"]
    surely_better = a["lost"] < b["lost"] or a["p50_hi_ns"] < b["p50_lo_ns"]
    return no_more_loss and not_slower and surely_better


def frontier_points(summary: pl.DataFrame | None, recovery: pl.DataFrame | None) -> pl.DataFrame | None:
    """Per strategy: median append, its interval, mean acknowledged entries lost per storage crash, and ``frontier``.

    ``recovery`` holds only each strategy's default recovery mode. Columns: strategy, family,
    durable, p50_ns, p50_lo_ns, p50_hi_ns, lost (mean per case), cases, loss_kind, frontier.
    """
    if summary is None or recovery is None:
        return None
    crashes = recovery.filter(pl.col("crash_kind").is_in(LOSS_KINDS)
                              & (pl.col("damage").is_null() | pl.col("damage").is_in(_OWN)))
    loss = crashes.group_by("strategy").agg(
        pl.col("lost").mean().alias("lost"), pl.len().alias("cases"),
        pl.col("crash_kind").unique().sort().str.join(" + ").alias("loss_kind"))
    columns = ["strategy", "family", "durable", "p50_ns"]
    interval = [c for c in ("p50_lo_ns", "p50_hi_ns") if c in summary.columns]
    points = summary.select(*columns, *interval).join(loss, on="strategy", how="inner")
    if len(interval) < 2:  # a run folder written before the intervals: the median alone
        points = points.with_columns(pl.col("p50_ns").alias("p50_lo_ns"), pl.col("p50_ns").alias("p50_hi_ns"))
    rows = list(points.iter_rows(named=True))
    on_front = [not any(dominates(o, p) for o in rows if o is not p) for p in rows]
    return points.with_columns(pl.Series("frontier", on_front, dtype=pl.Boolean)).sort("p50_ns")


def ties(points: pl.DataFrame) -> list[list[str]]:
    """Groups of frontier settings that lose the same and whose median intervals overlap (in latency order)."""
    front = points.filter(pl.col("frontier")).sort("p50_ns").rows(named=True)
    groups: list[list[dict[str, object]]] = []
    for row in front:
        for group in groups:
            if any(row["lost"] == o["lost"] and row["p50_lo_ns"] <= o["p50_hi_ns"] and o["p50_lo_ns"] <= row["p50_hi_ns"]
                   for o in group):
                group.append(row)
                break
        else:
            groups.append([row])
    return [[str(r["strategy"]) for r in group] for group in groups if len(group) > 1]


def frontier_figure(points: pl.DataFrame, path: Path) -> Path:
    """Append latency (with its interval) against entries lost per storage crash; the frontier joined by a line.

    One colour per family (as in every figure), a marker per strategy; the legend sits outside the axes.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 6))
    styles = strategy_styles(points.select("strategy", "family").rows())
    for row in points.iter_rows(named=True):
        style = styles[row["strategy"]]
        x = row["p50_ns"] / 1000
        err = [[x - row["p50_lo_ns"] / 1000], [row["p50_hi_ns"] / 1000 - x]]
        ax.errorbar([x], [row["lost"]], xerr=err, fmt=style.marker, color=style.color, markersize=8, capsize=4,
                    label=f"{row['strategy']} ({row['family']})", markeredgecolor="black" if row["frontier"] else style.color)
    front = points.filter(pl.col("frontier")).sort("p50_ns")
    ax.step(front["p50_ns"] / 1000, front["lost"], where="post", color="grey", linestyle="--", label="Pareto frontier")
    ax.set_xscale("log")
    top = max(1.0, float(points["lost"].max() or 0))
    ax.set_ylim(-0.05 * top, 1.1 * top)  # a real range even when every point loses nothing
    ax.set_xlabel("median append latency with its 95% interval (µs, log scale)")
    ax.set_ylabel("acknowledged entries lost per storage crash (mean)")
    ax.set_title("The main trade-off: cost per append against what a crash takes")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="colour: family; black edge: frontier",
              title_fontsize=8)
    return save_figure(fig, path)
