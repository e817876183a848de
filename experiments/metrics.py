"""The figures a run is judged by: ratios and counts read from its stored tables, never raw times.

Each metric has a name (``section.subject.figure``), a value, and how it may move: which way is
better and how far it may drift before ``experiments check`` calls it a regression. Timing
figures enter only as ratios measured side by side in one run (a strategy against a raw write
of the same bytes), so a slower or busier machine does not move them much; counts and error
rates are deterministic for a seed and are held tightly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

__all__ = ["Metric", "collect_metrics", "COLLECTORS"]


@dataclass(frozen=True)
class Metric:
    """One figure of a run and its tolerance.

    ``better`` is ``lower``, ``higher`` or ``equal``. A regression is a move the wrong way by
    more than ``tolerance``, which is relative (a fraction of the baseline) when ``relative``
    is True, else absolute (in the metric's own unit).
    """

    name: str
    value: float
    better: str
    tolerance: float
    relative: bool = True


def _write_cost(run_dir: Path) -> Iterator[Metric]:
    path = run_dir / "write_cost_summary.parquet"
    if not path.exists():
        return
    for row in pl.read_parquet(path).iter_rows(named=True):
        name = row["strategy"]
        # Ratios of medians on a shared machine wander by tens of percent: hold them loosely.
        yield Metric(f"write_cost.{name}.ratio_raw_write", row["ratio_raw_write"], "lower", 0.6)
        if row["growth"] is not None:
            yield Metric(f"write_cost.{name}.growth", row["growth"], "lower", 0.6)


def _concurrency(run_dir: Path) -> Iterator[Metric]:
    path = run_dir / "concurrency.parquet"
    if not path.exists():
        return
    for row in pl.read_parquet(path).iter_rows(named=True):
        # Only a store that promises multi-process safety is held to it: full_json's losses
        # depend on how the writers' rewrites interleave, which is the finding, not a figure.
        if row["multi_process_safe"]:
            yield Metric(f"concurrency.{row['strategy']}.lost", row["lost"], "lower", 0, relative=False)


#: Functions that read one measurement's tables and yield its metrics (nothing if it was not run).
COLLECTORS: list[Callable[[Path], Iterator[Metric]]] = [_write_cost, _concurrency]


def collect_metrics(run_dir: Path) -> dict[str, Metric]:
    """Every metric of the run in ``run_dir``, by name."""
    return {m.name: m for collect in COLLECTORS for m in collect(Path(run_dir))}
