"""The write-cost job: generate a session, measure every strategy, store the tables.

The job writes tidy tables only (``write_cost_samples``, ``write_cost_summary``,
``write_cost_goals``, as parquet and CSV, plus ``write_cost_notes.json``); the report is built
from those files alone (:mod:`experiments.measurements.write_cost.report`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from aptmem.entries import encode_line
from experiments.core.runfolder import RunFolder, read_measurement
from experiments.core.strategy import StrategySpec
from experiments.measurements.write_cost.samples import measure_strategies, replayed
from experiments.measurements.write_cost.settings import WriteCostSettings
from experiments.measurements.write_cost.summary import goals, summarize
from experiments.workloads import Workload, workload_entries, workload_name

__all__ = ["TABLES", "planned_appends", "read_tables", "run_write_cost"]

TABLES = ("write_cost_samples", "write_cost_summary", "write_cost_goals")


def planned_appends(strategies: Sequence[StrategySpec], settings: WriteCostSettings) -> int:
    """How many appends the job will time (for a progress bar)."""
    return sum(replayed(s, settings.entries, settings.quadratic_entries) for s in strategies)


def run_write_cost(
    strategies: Sequence[StrategySpec],
    settings: WriteCostSettings,
    workload: Workload,
    out: Path | RunFolder,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Measure ``strategies`` on a session of ``workload`` (``settings.entries`` long, or all a transcript
    workload holds if fewer); write the tables to ``out``."""
    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    entries = workload_entries(workload, limit=settings.entries)
    samples = measure_strategies(list(strategies), entries, quadratic_entries=settings.quadratic_entries, base_dir=tmp,
                                 sync_baseline=settings.sync_baseline, rounds=settings.blocks, progress=progress)
    samples = samples.with_columns(
        pl.lit(workload_name(workload)).alias("workload"), pl.lit(workload.seed).alias("seed"),
        pl.lit(len(entries)).alias("session_entries"), *folder.meta.columns(),
    )
    summary = summarize(samples, warmup=settings.warmup, window=settings.window, blocks=settings.blocks,
                        resamples=settings.resamples, seed=workload.seed)
    reference = next((s.name for s in strategies if s.reference), None)
    goal_table = goals(summary, reference=reference, reported=[s.name for s in strategies if s.quadratic_appends])
    # capped: replayed fewer entries than the session holds (a session shorter than the cap caps nothing)
    capped = sorted(s.name for s in strategies if replayed(s, len(entries), settings.quadratic_entries) < len(entries))
    notes = {
        "entries": len(entries),
        "workload": workload_name(workload),
        "seed": workload.seed,
        "session_bytes": sum(len(encode_line(e)) for e in entries),
        "sync_baseline": settings.sync_baseline,
        "warmup": settings.warmup,
        "window": settings.window,
        "blocks": settings.blocks,
        "resamples": settings.resamples,
        "capped": capped,
        "replayed": {s.name: replayed(s, len(entries), settings.quadratic_entries) for s in strategies},
        "cap": settings.quadratic_entries,
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }
    tables = {"write_cost_samples": samples, "write_cost_summary": summary, "write_cost_goals": goal_table}
    return folder.write("write_cost", tables, notes)


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, object]]:
    """Read a run folder's write-cost tables and notes back."""
    return read_measurement(run_dir, TABLES, "write_cost")
