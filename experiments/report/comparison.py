"""The headline of the report: the original design's comparison of the approaches, filled with
measured values instead of adjectives, and a Pareto plot of the main trade-off.

The approaches are the strategy families found in the run's tables (in the order they first
appear), so a family the harness never heard of gets its column and its marker like the others.
Every cell comes from a table of the run folder; a measurement the run did not make shows as
"not measured". For a family, "fast" takes its best non-durable setting and "durable" its best
setting that promises acknowledged appends survive a power loss.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_table

__all__ = ["comparison_section", "families", "pareto_figure", "pareto_points"]

_NOT = "not measured"
#: Markers of the Pareto figure, one per family in order of appearance (cycling after the last).
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")

_read = read_table


def _us(ns: float) -> str:
    if ns < 1_000_000:
        return f"{ns / 1000:,.1f} µs"
    return f"{ns / 1e6:,.1f} ms" if ns < 100_000_000 else f"{ns / 1e6:,.0f} ms"


#: Power-loss damage a strategy can be asked to survive: its own unsynced tail. A line spliced in
#: by a foreign writer (``middle``) is outside every promise and reported in the crash section.
_OWN_DAMAGE = pl.col("damage").is_in(["torn", "zero", "drop"])


def _in_default_mode(recovery: pl.DataFrame, run_dir: Path) -> pl.DataFrame:
    """The crash cases recovered in each strategy's own default mode (a store offering several recovery
    modes has its power-loss images recovered in every one; the crash notes name each default)."""
    notes_path = run_dir / "crash_notes.json"
    defaults = msgspec.json.decode(notes_path.read_bytes())["strategies"] if notes_path.exists() else {}
    modes = pl.DataFrame({"strategy": list(defaults), "default_mode": [s["default_mode"] for s in defaults.values()]},
                         schema={"strategy": pl.String, "default_mode": pl.String})
    return (recovery.join(modes, on="strategy", how="left")
            .filter(pl.col("mode").is_null() | pl.col("default_mode").is_null() | (pl.col("mode") == pl.col("default_mode")))
            .drop("default_mode"))


def _write_cost(part: pl.DataFrame) -> str:
    cells = []
    for durable, label in ((False, "fast"), (True, "durable")):
        rows = part.filter(pl.col("durable") == durable).sort("p50_ns")
        if rows.height:
            best = rows.row(0, named=True)
            cells.append(f"{label} {_us(best['p50_ns'])} ({best['strategy']}, {best['ratio_raw_write']:.1f}x raw write, "
                         f"growth {best['growth']:.2f}x over {best['entries']} entries)")
    return "; ".join(cells)


def _memory(part: pl.DataFrame) -> str:
    part = part.filter(pl.col("run") == "timed")
    if part.height == 0:
        return _NOT
    size = part["size_mb"].max()
    at = part.filter(pl.col("size_mb") == size)
    load = at.filter(pl.col("op") == "full_load")
    resume = at.filter(pl.col("op") == "resume")
    return (f"at {size:g} MB: full load {_us(load['wall_ns'].median())}, peak RSS {load['peak_rss_bytes'].median() / 1e6:.0f} MB; "
            f"resume {_us(resume['wall_ns'].median())}, peak RSS {resume['peak_rss_bytes'].median() / 1e6:.0f} MB")


def _readability(part: pl.DataFrame) -> str:
    row = part.row(0, named=True)
    tail = "`tail -n 1` is the last entry" if row["tail_is_last_entry"] else "no line per entry"
    return (f"{row['printable_pct']:.0f}% printable text, {row['entries_per_line']:g} entries per line, {tail}; "
            f"grep {'finds' if row['grep_finds_text'] else 'misses'} an entry's words")


def _fault_tolerance(part: pl.DataFrame) -> str:
    cells = []
    for kind, label in (("process", "process kill"), ("power_loss", "power loss")):
        rows = part.filter(pl.col("crash_kind") == kind)
        if kind == "power_loss":
            rows = rows.filter(_OWN_DAMAGE)
        if rows.height == 0:
            continue
        durable = rows.filter(pl.col("durable"))
        unloadable = rows.filter(~pl.col("loadable")).height
        label += " (own unsynced tail torn, zeroed or dropped)" if kind == "power_loss" else ""
        cells.append(f"{label}: {rows.height} cases, {unloadable} not loadable, acknowledged entries lost max "
                     f"{rows['lost'].max()} (durable settings: {durable['lost'].max() if durable.height else '-'}), "
                     f"{rows['violation'].sum()} broken promises")
    return "; ".join(cells) or _NOT


def _concurrency(part: pl.DataFrame) -> str:
    row = part.sort("lost", descending=True).row(0, named=True)
    return (f"{row['writers']} writers x {row['appends']} appends at once: {row['lost']} of {row['acknowledged']} "
            f"acknowledged entries lost, {row['damaged_lines']} damaged lines (worst of {part.height} settings)")


def _complexity(part: pl.DataFrame) -> str:
    row = part.row(0, named=True)
    engine = "" if row["external_engine"] == "none" else f" + {row['external_engine']}"
    return f"{row['code_lines']} lines of Python of its own{engine}"


#: The rows of the comparison: label -> (the table it reads, the cell it makes of one family's rows).
_ROWS: dict[str, tuple[str, Callable[[pl.DataFrame], str]]] = {
    "write cost (median append)": ("write_cost_summary", _write_cost),
    "memory": ("memory", _memory),
    "readability": ("anatomy", _readability),
    "fault tolerance": ("recovery", _fault_tolerance),
    "concurrency safety": ("concurrency", _concurrency),
    "complexity": ("anatomy", _complexity),
}


def _cell(make: Callable[[pl.DataFrame], str], table: pl.DataFrame | None, family: str) -> str:
    """One cell: ``make`` of the family's rows, or "not measured" when the run has none."""
    part = None if table is None else table.filter(pl.col("family") == family)
    return _NOT if part is None or part.height == 0 else make(part)


def families(tables: dict[str, pl.DataFrame | None]) -> list[str]:
    """The strategy families of the run, in the order they first appear in its tables."""
    seen: dict[str, None] = {}
    for table in tables.values():
        if table is not None and "family" in table.columns:
            seen.update(dict.fromkeys(table["family"].unique(maintain_order=True).to_list()))
    return list(seen)


_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def comparison_section(run_dir: Path) -> str | None:
    """The comparison table of the run's approaches and the Pareto figure (None if nothing to compare)."""
    tables = {name: _read(run_dir, name) for name in
              ("write_cost_summary", "memory", "anatomy", "recovery", "concurrency")}
    if tables["recovery"] is not None:
        tables["recovery"] = _in_default_mode(tables["recovery"], run_dir)
    found = families(tables)
    if not found:
        return None
    rows = [{"approach": family, **{label: _cell(cell, tables[table], family) for label, (table, cell) in _ROWS.items()}}
            for family in found]
    table = pl.DataFrame(rows)
    count = _COUNTS.get(len(found), str(len(found)))
    lines = [f"## The {count} approach{'es' if len(found) > 1 else ''} compared", "",
             "The original design's comparison, each cell measured in this run (the sections below give every "
             "strategy and setting).", "",
             markdown_table(table.transpose(include_header=True, header_name="", column_names="approach")), ""]
    points = pareto_points(run_dir)
    if points is not None and points.height:
        figure = pareto_figure(points, run_dir / "figures" / "pareto.png", found)
        lines += [f"![Write cost against entries lost on power loss]({figure.relative_to(run_dir)})", "",
                  "On the frontier (no other setting is both cheaper per append and loses fewer acknowledged entries): "
                  + ", ".join(points.filter(pl.col("frontier"))["strategy"].to_list()) + ".", ""]
    return "\n".join(lines)


def pareto_points(run_dir: Path) -> pl.DataFrame | None:
    """Per strategy: median append latency and mean acknowledged entries lost per simulated power loss."""
    summary, recovery = _read(run_dir, "write_cost_summary"), _read(run_dir, "recovery")
    if summary is None or recovery is None:
        return None
    power = (_in_default_mode(recovery, run_dir).filter((pl.col("crash_kind") == "power_loss") & _OWN_DAMAGE)
             .group_by("strategy").agg(pl.col("lost").mean().alias("lost_per_power_loss"), pl.len().alias("cases")))
    points = summary.select("strategy", "family", "durable", "p50_ns").join(power, on="strategy", how="inner")
    frontier = [
        not any((o["p50_ns"] <= p["p50_ns"] and o["lost_per_power_loss"] <= p["lost_per_power_loss"])
                and (o["p50_ns"] < p["p50_ns"] or o["lost_per_power_loss"] < p["lost_per_power_loss"])
                for o in points.iter_rows(named=True))
        for p in points.iter_rows(named=True)
    ]
    return points.with_columns(pl.Series("frontier", frontier)).sort("p50_ns")


def pareto_figure(points: pl.DataFrame, path: Path, order: list[str] | None = None) -> Path:
    """Scatter of append latency against entries lost per power loss, the frontier joined by a line.

    One marker per family, given in ``order`` (default: the order the families appear in ``points``).
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 6))
    present = points["family"].unique(maintain_order=True).to_list()
    ordered = [f for f in (order or []) if f in present] + [f for f in present if f not in (order or [])]
    for index, family in enumerate(ordered):
        marker = _MARKERS[index % len(_MARKERS)]
        part = points.filter(pl.col("family") == family)
        if part.height:
            ax.scatter(part["p50_ns"] / 1000, part["lost_per_power_loss"], marker=marker, s=70, label=family)
            for i, row in enumerate(part.iter_rows(named=True)):
                # Alternate labels above and below the point: settings of one family often sit close.
                ax.annotate(row["strategy"], (row["p50_ns"] / 1000, row["lost_per_power_loss"]), fontsize=8,
                            xytext=(5, 5 if i % 2 == 0 else -12), textcoords="offset points")
    front = points.filter(pl.col("frontier")).sort("p50_ns")
    ax.step(front["p50_ns"] / 1000, front["lost_per_power_loss"], where="post", color="grey", linestyle="--",
            label="Pareto frontier")
    ax.set_xscale("log")
    ax.set_xlabel("median append latency (µs, log scale)")
    ax.set_ylabel("acknowledged entries lost per simulated power loss (mean)")
    ax.set_title("The main trade-off: cost per append against durability")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return save_figure(fig, path)
