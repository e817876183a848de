"""Which strategy for which need, computed from the run's own tables (never typed in).

Each need is a filter over the measured facts and a choice among what passes it: the fastest
median append, with every setting whose interval overlaps the winner's named beside it as a tie.

* **durable per append**: it promises ``per_append`` and, in this run, lost no acknowledged entry to
  any crash of its storage the run simulated (process kill, power loss, server crash) and broke no
  promise; a promise no crash tested is said to be untested.
* **several processes**: the concurrent writers lost no acknowledged entry and left no damaged line.
* **readable with an editor**: its files are printable text, a plain search finds an entry's words,
  and the last line is the last entry (``tail -n 1``, ``grep`` and an editor work on it).
* **large sessions**: the fastest resume (``read_live``) at the largest size measured, and how it
  compares with loading everything.
* **sessions shared across machines**: a strategy whose data lives in a server, durable by the
  above, the fastest of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_table
from experiments.report.frontier import in_default_mode

__all__ = ["recommendation_section", "recommendations"]


def _us(ns: float) -> str:
    return f"{ns / 1000:,.1f} µs" if ns < 1_000_000 else f"{ns / 1e6:,.2f} ms"


def _pick(summary: pl.DataFrame, names: list[str]) -> tuple[dict[str, object] | None, list[str]]:
    """The fastest of ``names`` by median append, and the others whose interval overlaps its own (ties)."""
    part = summary.filter(pl.col("strategy").is_in(names)).sort("p50_ns")
    if part.height == 0:
        return None, []
    best = part.row(0, named=True)
    lo, hi = ("p50_lo_ns", "p50_hi_ns") if "p50_lo_ns" in part.columns else ("p50_ns", "p50_ns")
    tied = [r["strategy"] for r in part.rows(named=True)[1:]
            if r[lo] <= best[hi] and best[lo] <= r[hi]] if part.height > 1 else []
    return best, tied


def _cost(row: dict[str, object]) -> str:
    interval = f" ({_us(row['p50_lo_ns'])} – {_us(row['p50_hi_ns'])})" if row.get("p50_lo_ns") is not None else ""
    return f"median append {_us(float(row['p50_ns']))}{interval}"  # type: ignore[arg-type]


def recommendations(run_dir: Path) -> pl.DataFrame | None:
    """One row per need: the strategy recommended, why (measured), ties and what else passes (None: no write cost)."""
    summary = read_table(run_dir, "write_cost_summary")
    if summary is None:
        return None
    recovery, concurrency = read_table(run_dir, "recovery"), read_table(run_dir, "concurrency")
    if recovery is not None:
        recovery = in_default_mode(recovery, run_dir)
    anatomy, memory, strategies = read_table(run_dir, "anatomy"), read_table(run_dir, "memory"), read_table(run_dir, "strategies")
    names = summary["strategy"].to_list()
    rows: list[dict[str, str]] = []

    def add(need: str, passing: list[str], why: Callable[[dict[str, object]], str], unmet: str) -> None:
        best, tied = _pick(summary, passing)
        others = [n for n in passing if best is None or (n != best["strategy"] and n not in tied)]
        rows.append({"need": need, "recommended": f"`{best['strategy']}`" if best else "none in this run",
                     "why (measured in this run)": why(best) if best else unmet,
                     "tied (intervals overlap)": ", ".join(f"`{n}`" for n in tied) or "—",
                     "also passes": ", ".join(f"`{n}`" for n in others) or "—"})

    durable: list[str] = []
    if recovery is not None:
        simulated = recovery.filter(pl.col("crash_kind") != "process")["strategy"].unique().to_list()
        clean = (recovery.filter(pl.col("damage").is_null() | pl.col("damage").is_in(["torn", "zero", "drop"]))
                 .group_by("strategy").agg(pl.col("lost").max().alias("lost"), pl.col("violation").sum().alias("broken"),
                                           pl.len().alias("cases")))
        ok = clean.filter((pl.col("lost") == 0) & (pl.col("broken") == 0))
        cases = dict(clean.select("strategy", "cases").iter_rows())
        durable = [n for n in summary.filter(pl.col("durability") == "per_append")["strategy"].to_list()
                   if n in ok["strategy"].to_list() and n in simulated]
        add("durable per append (nothing acknowledged lost to a power loss or a crash)", durable,
            lambda r: f"promises `per_append`; lost nothing in {cases.get(r['strategy'])} crashes of its storage and "
                      f"process kills; {_cost(r)}",
            "no `per_append` strategy whose power loss or server crash was simulated kept everything")
    if concurrency is not None:
        safe = concurrency.filter((pl.col("lost") == 0) & (pl.col("damaged_lines") == 0) & (pl.col("writers_failed") == 0))
        facts = {r["strategy"]: r for r in concurrency.iter_rows(named=True)}
        add("several processes writing one session", [n for n in names if n in safe["strategy"].to_list()],
            lambda r: (f"{facts[r['strategy']]['writers']} writers x {facts[r['strategy']]['appends']} appends at once: "
                       f"0 lost, 0 damaged lines; {_cost(r)}"),
            "no strategy kept every concurrent writer's entries")
        both = [n for n in durable if n in safe["strategy"].to_list()]
        add("several processes, and durable per append", both,
            lambda r: f"passes both rows above; {_cost(r)}", "no strategy passes both")
    if anatomy is not None:
        readable = anatomy.filter((pl.col("printable_pct") >= 99) & pl.col("grep_finds_text") & pl.col("tail_is_last_entry"))
        add("readable with an editor (text, one entry a line)", [n for n in names if n in readable["strategy"].to_list()],
            lambda r: f"100% printable, one entry per line, `tail -n 1` is the last entry; {_cost(r)}",
            "no strategy keeps one entry per line of text")
    if memory is not None:
        timed = memory.filter(pl.col("run") == "timed")
        largest = timed.filter(pl.col("size_mb") == pl.col("size_mb").max())
        per = (largest.group_by("strategy", "op").agg(pl.col("wall_ns").median().alias("median"),
                                                       pl.col("wall_ns").min().alias("low"),
                                                       pl.col("wall_ns").max().alias("high"),
                                                       pl.col("session_bytes").first()))
        resume = per.filter(pl.col("op") == "resume").join(
            per.filter(pl.col("op") == "full_load").select("strategy", pl.col("median").alias("full_load")),
            on="strategy").sort("median")
        if resume.height:
            best = resume.row(0, named=True)
            # a tie: its range over the repeats overlaps the winner's (which resumes faster is noise here)
            tied = [r["strategy"] for r in resume.rows(named=True)[1:] if r["low"] <= best["high"]]
            slow = resume.filter(pl.col("median") >= 0.5 * pl.col("full_load"))["strategy"].to_list()
            rows.append({"need": f"large sessions (resume at {best['session_bytes'] / 1e6:.1f} MB, the largest measured)",
                         "recommended": f"`{best['strategy']}`",
                         "why (measured in this run)": (f"resume {_us(best['median'])} ({_us(best['low'])} – "
                                                        f"{_us(best['high'])} over the repeats) against a full load of "
                                                        f"{_us(best['full_load'])}"),
                         "tied (intervals overlap)": ", ".join(f"`{n}`" for n in tied) or "—",
                         "also passes": ("resume costs at least half a full load (it reads everything): "
                                         + ", ".join(f"`{n}`" for n in slow)) if slow else "—"})
    if strategies is not None:
        served = strategies.filter(pl.col("served") & ~pl.col("skipped"))["strategy"].to_list()
        skipped = strategies.filter(pl.col("skipped"))
        if served or skipped.height:
            add("sessions shared across processes and machines (a server)", [n for n in durable if n in served],
                lambda r: f"its data lives in a server every machine can reach; durable as above; {_cost(r)}",
                "not measured: " + "; ".join(f"`{s}` skipped ({why})" for s, why in skipped.select("strategy", "reason").rows())
                if skipped.height else "no served strategy was durable in this run")
    return pl.DataFrame(rows) if rows else None


def recommendation_section(run_dir: Path) -> str | None:
    """The report's recommendation section (None when the run measured no write cost)."""
    table = recommendations(run_dir)
    if table is None:
        return None
    return "\n".join([
        "## Which strategy for which need", "",
        "Computed from this run's tables: for each need, the settings that pass its test, the fastest of them by median "
        "append, and those whose median's interval overlaps the winner's (a tie: which one is faster is noise here).", "",
        markdown_table(table), ""])
