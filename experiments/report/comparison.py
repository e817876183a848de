"""The headline of the report: the original design's comparison of the approaches, filled with
measured values instead of adjectives, and the main trade-off drawn with its intervals.

The approaches are the strategy families found in the run's tables (in the order they first
appear), so a family the harness never heard of gets its column and its colour like the others.
Every cell comes from a table of the run folder; a measurement the run did not make shows as
"not measured", and a strategy the run had to skip (its server cannot be had here) is named
with the reason. For a family, "fast" takes its best non-durable setting and "durable" its best
setting that promises acknowledged appends survive a power loss; each median is given with its
95% interval, so two cells whose intervals overlap are not read as a ranking.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_table
from experiments.report.frontier import frontier_figure, frontier_points, in_default_mode, ties

__all__ = ["comparison_section", "families", "pareto_points"]

_NOT = "not measured"

_read = read_table


def _us(ns: float) -> str:
    if ns < 1_000_000:
        return f"{ns / 1000:,.1f} µs"
    return f"{ns / 1e6:,.1f} ms" if ns < 100_000_000 else f"{ns / 1e6:,.0f} ms"


#: Power-loss damage a strategy can be asked to survive: its own unsynced tail. A line spliced in
#: by a foreign writer (``middle``) is outside every promise and reported in the crash section.
_OWN_DAMAGE = pl.col("damage").is_in(["torn", "zero", "drop"])


def _interval(row: dict[str, object]) -> str:
    """`` [lo – hi]``: the median's 95% interval, when the table has one."""
    if row.get("p50_lo_ns") is None:
        return ""
    return f" [{_us(float(row['p50_lo_ns']))} – {_us(float(row['p50_hi_ns']))}]"  # type: ignore[arg-type]


def _growth(row: dict[str, object]) -> str:
    """The growth figure with its windows, or why there is none (never a figure over overlapping windows)."""
    if row.get("growth") is None:
        return f"no growth figure: {row['entries']} entries are too few for two windows after the warm-up"
    return f"growth {row['growth']:.2f}x over entries {row['early_window']} vs {row['late_window']}"


def _write_cost(part: pl.DataFrame) -> str:
    cells = []
    for durable, label in ((False, "fast"), (True, "durable")):
        rows = part.filter(pl.col("durable") == durable).sort("p50_ns")
        if rows.height:
            best = rows.row(0, named=True)
            over = best.get("ratio_encode_raw_write")
            cost = f", {over:.1f}x encode + raw write" if over is not None else ""
            cells.append(f"{label} {_us(best['p50_ns'])}{_interval(best)} ({best['strategy']}{cost}; {_growth(best)})")
    return "; ".join(cells)


def _memory(part: pl.DataFrame) -> str:
    part = part.filter(pl.col("run") == "timed")
    if part.height == 0:
        return _NOT
    size = part["size_mb"].max()
    at = part.filter(pl.col("size_mb") == size)
    load = at.filter(pl.col("op") == "full_load")
    resume = at.filter(pl.col("op") == "resume")
    measured = at["session_bytes"].max() / 1e6 if "session_bytes" in at.columns else size
    return (f"at {measured:.1f} MB: full load {_us(load['wall_ns'].median())}, peak RSS "
            f"{load['peak_rss_bytes'].median() / 1e6:.0f} MB; resume {_us(resume['wall_ns'].median())}, peak RSS "
            f"{resume['peak_rss_bytes'].median() / 1e6:.0f} MB")


def _readability(part: pl.DataFrame) -> str:
    row = part.row(0, named=True)
    if row.get("printable_pct") is None:  # its data lives in a server's files: nothing to open with an editor
        return "its entries live in the server's files: read through SQL, not with an editor"
    tail = "`tail -n 1` is the last entry" if row["tail_is_last_entry"] else "no line per entry"
    return (f"{row['printable_pct']:.0f}% printable text, {row['entries_per_line']:g} entries per line, {tail}; "
            f"grep {'finds' if row['grep_finds_text'] else 'misses'} an entry's words")


_KILLS = (("process", "process kill"), ("server", "server kill (its server SIGKILLed mid-append)"),
          ("power_loss", "power loss (own unsynced tail torn, zeroed or dropped)"))


def _fault_tolerance(part: pl.DataFrame) -> str:
    cells = []
    for kind, label in _KILLS:
        rows = part.filter(pl.col("crash_kind") == kind)
        if kind == "power_loss":
            rows = rows.filter(_OWN_DAMAGE)
        if rows.height == 0:
            continue
        durable = rows.filter(pl.col("durable"))
        unloadable = rows.filter(~pl.col("loadable")).height
        cells.append(f"{label}: {rows.height} cases, {unloadable} not loadable, acknowledged entries lost max "
                     f"{rows['lost'].max()} (durable settings: {durable['lost'].max() if durable.height else '-'}), "
                     f"{rows['violation'].sum()} broken promises")
    return "; ".join(cells) or _NOT


def _concurrency(part: pl.DataFrame) -> str:
    # worst first: entries lost, then writers that failed (a store that refuses concurrent writers loses
    # nothing it acknowledged, but an agent's process failed)
    row = part.sort("lost", "writers_failed", descending=True).row(0, named=True)
    failed = f", {row['writers_failed']} of {row['writers']} writers failed" if row["writers_failed"] else ""
    return (f"{row['writers']} writers x {row['appends']} appends at once: {row['lost']} of {row['acknowledged']} "
            f"acknowledged entries lost, {row['damaged_lines']} damaged lines{failed} (worst of {part.height} settings)")


def _complexity(part: pl.DataFrame) -> str:
    row = part.row(0, named=True)
    engine = "" if row["external_engine"] == "none" else f" + {row['external_engine']}"
    return f"{row['code_lines']} lines of Python of its own{engine}"


#: The rows of the comparison: label -> (the table it reads, the cell it makes of one family's rows).
_ROWS: dict[str, tuple[str, Callable[[pl.DataFrame], str]]] = {
    "write cost (median append [95% interval])": ("write_cost_summary", _write_cost),
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


_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _skipped_lines(run_dir: Path) -> list[str]:
    """One line per strategy the run was given but could not measure, with the reason (never a silent gap)."""
    strategies = _read(run_dir, "strategies")
    if strategies is None:
        return []
    return [f"- **Skipped: `{name}`** ({family}): {reason}. Its column and rows are missing from every table below."
            for name, family, reason in strategies.filter(pl.col("skipped")).select("strategy", "family", "reason").rows()]


def _frontier_lines(run_dir: Path, points: pl.DataFrame) -> list[str]:
    """The frontier figure and its reading: who is on it, which of them tie, who could not be placed."""
    figure = frontier_figure(points, run_dir / "figures" / "pareto.png")
    front = points.filter(pl.col("frontier")).sort("p50_ns")
    tied = ties(points)
    lines = [f"![Write cost against entries lost per storage crash]({figure.relative_to(run_dir)})", "",
             "On the frontier (no other setting loses fewer acknowledged entries per storage crash without being slower "
             "beyond the noise, or is surely faster while losing no more): "
             + ", ".join(f"`{name}`" for name in front["strategy"].to_list()) + "."]
    if tied:
        lines.append("Ties (same loss, overlapping 95% intervals of the median: which is faster is noise in this run): "
                     + "; ".join(" = ".join(f"`{n}`" for n in group) for group in tied) + ".")
    else:
        lines.append("No two frontier settings tie: every pair differs in loss or beyond their intervals.")
    summary = _read(run_dir, "write_cost_summary")
    unplaced = sorted(set(summary["strategy"].to_list()) - set(points["strategy"].to_list())) if summary is not None else []
    if unplaced:
        lines.append("Not placed (no crash of their storage was simulated in this run): "
                     + ", ".join(f"`{n}`" for n in unplaced) + ".")
    return [*lines, ""]


def _memory_quality_line(run_dir: Path) -> list[str]:
    """The memory-quality measurement's headline line (its own strategies, not storage families)."""
    from experiments.measurements.memory_quality.report import headline_row

    summary = _read(run_dir, "memory_summary")
    if summary is None or "window" not in summary.columns:
        return []
    window = max(summary["window"].unique().to_list())
    cells = headline_row(summary, window)
    if not cells:
        return []
    return [f"Memory strategies (what the agent still knows: answerable share within 1,024 tokens at a {window:,}-token "
            "window, mean over seeds): " + ", ".join(f"`{name}` {value}" for name, value in cells.items()) + ".", ""]


def pareto_points(run_dir: Path) -> pl.DataFrame | None:
    """The frontier's points of a run folder (:func:`experiments.report.frontier.frontier_points`)."""
    recovery = _read(run_dir, "recovery")
    return frontier_points(_read(run_dir, "write_cost_summary"),
                           None if recovery is None else in_default_mode(recovery, run_dir))


def comparison_section(run_dir: Path) -> str | None:
    """The comparison table of the run's approaches and the frontier figure (None if nothing to compare)."""
    tables = {name: _read(run_dir, name) for name in
              ("write_cost_summary", "memory", "anatomy", "recovery", "concurrency")}
    if tables["recovery"] is not None:
        tables["recovery"] = in_default_mode(tables["recovery"], run_dir)
    found = families(tables)
    if not found:  # nothing measured to compare; a skipped strategy is still said
        skipped = _skipped_lines(run_dir)
        return "\n".join(["## Strategies skipped", "", *skipped, ""]) if skipped else None
    rows = [{"approach": family, **{label: _cell(cell, tables[table], family) for label, (table, cell) in _ROWS.items()}}
            for family in found]
    table = pl.DataFrame(rows)
    count = _COUNTS.get(len(found), str(len(found)))
    lines = [f"## The {count} approach{'es' if len(found) > 1 else ''} compared", "",
             "The original design's comparison, each cell measured in this run (the sections below give every "
             "strategy and setting). Medians come with their 95% block-bootstrap interval in brackets.", "",
             *_skipped_lines(run_dir), "",
             markdown_table(table.transpose(include_header=True, header_name="", column_names="approach")), "",
             *_memory_quality_line(run_dir)]
    points = pareto_points(run_dir)
    if points is not None and points.height:
        lines += _frontier_lines(run_dir, points)
    return "\n".join(lines)
