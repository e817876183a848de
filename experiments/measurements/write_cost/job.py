"""The write-cost job: generate a session, measure every strategy, store the tables.

Shared by ``python -m experiments run`` and ``benchmarks/write_cost.py``, so both measure the
same way. The job writes tidy tables only (``write_cost_samples``, ``write_cost_summary``,
``write_cost_goals``, as parquet and CSV, plus ``write_cost_notes.json``); the report is built
from those files alone (:mod:`experiments.report.page`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from aptmem.entries import encode_line
from experiments.core.runfolder import read_measurement, write_measurement
from experiments.core.runinfo import run_metadata
from experiments.core.strategy import load_strategy
from experiments.workloads.synthetic import WorkloadConfig
from experiments.workloads.transcripts import workload_entries, workload_name
from experiments.measurements.write_cost.samples import measure_strategies
from experiments.measurements.write_cost.summary import goals, summarize

__all__ = ["WriteCostSettings", "run_write_cost", "planned_appends", "read_tables", "TABLES"]

TABLES = ("write_cost_samples", "write_cost_summary", "write_cost_goals")


@dataclass(kw_only=True)
class WriteCostSettings:
    """How the write cost is measured (a plain dataclass: also the Hydra schema of ``write_cost``)."""

    #: entries in the replayed session (the goals are stated at 5,000)
    entries: int = 5000
    #: replay the full_json family for this many entries only (its rewrites are quadratic); 0 = all
    full_json_entries: int = 500
    #: time os.write + fdatasync beside strategies that sync per append (``per_append``) or beside all
    sync_baseline: str = "per_append"
    #: the early window of the growth ratio, 1-based entries [lo, hi]
    early: tuple[int, int] = (1, 100)
    #: the late window of the growth ratio: the last N entries replayed
    late_size: int = 100


def _limits(settings: WriteCostSettings) -> dict[str, int]:
    return {"full_json": settings.full_json_entries} if settings.full_json_entries else {}


def _config(strategy: str | Any) -> Any:
    return load_strategy(strategy) if isinstance(strategy, str) else strategy


def planned_appends(names: Sequence[str | Any], settings: WriteCostSettings) -> int:
    """How many appends the job will time (for a progress bar)."""
    limits = _limits(settings)
    return sum(min(settings.entries, limits.get(str(_config(n).family), settings.entries)) for n in names)


def run_write_cost(
    names: Sequence[str | Any],
    settings: WriteCostSettings,
    workload: WorkloadConfig,
    out: Path,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Measure ``names`` on a session of ``workload`` (``settings.entries`` long, or all a transcript
    workload holds if fewer); write the tables to ``out``."""
    started = time.perf_counter_ns()
    entries = workload_entries(workload, limit=settings.entries)
    limits = _limits(settings)
    samples = measure_strategies(list(names), entries, limits=limits, base_dir=tmp,
                                 sync_baseline=settings.sync_baseline, progress=progress)
    meta = run_metadata()
    samples = samples.with_columns(
        pl.lit(workload_name(workload)).alias("workload"), pl.lit(workload.seed).alias("seed"),
        pl.lit(len(entries)).alias("session_entries"),
        pl.lit(meta["commit"]).alias("commit"), pl.lit(meta["machine"]).alias("machine"),
    )
    summary = summarize(samples, early=tuple(settings.early), late_size=settings.late_size)  # type: ignore[arg-type]
    goal_table = goals(summary)
    capped = sorted({str(_config(n).name) for n in names
                     if limits.get(str(_config(n).family), settings.entries) < settings.entries})
    notes = {
        "entries": len(entries),
        "workload": workload_name(workload),
        "seed": workload.seed,
        "session_mb": round(sum(len(encode_line(e)) for e in entries) / 1e6, 1),
        "sync_baseline": settings.sync_baseline,
        "early": list(settings.early),
        "late_size": settings.late_size,
        "capped": capped,
        "cap": settings.full_json_entries,
        "commit": meta["commit"],
        "machine": meta["machine"],
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }
    tables = {"write_cost_samples": samples, "write_cost_summary": summary, "write_cost_goals": goal_table}
    return write_measurement(out, tables, "write_cost", notes)


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, object]]:
    """Read a run folder's write-cost tables and notes back."""
    return read_measurement(run_dir, TABLES, "write_cost")
