"""The regression gate: ``python -m experiments check RUN_DIR --baseline FILE [--update]``.

Compares a run's metrics (:mod:`experiments.gate.metrics`: ratios and counts, never raw times) with
a baseline file kept in the repository, prints a table of what moved, and exits 1 when a metric
moved the wrong way by more than its tolerance (0 otherwise, 2 on bad usage). A metric in the
baseline that the run lacks is a regression too: a gate that silently measures less is no gate.
``--update`` writes the run's metrics as the new baseline (review the diff before committing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec
import polars as pl

from experiments.core.markdown import markdown_table
from experiments.gate.metrics import Metric, collect_metrics

__all__ = ["compare", "main", "read_baseline", "write_baseline"]


class _BaselineMetric(msgspec.Struct):
    value: float
    better: str
    tolerance: float
    relative: bool = True


class _Baseline(msgspec.Struct):
    source: str
    metrics: dict[str, _BaselineMetric]


def read_baseline(path: Path) -> dict[str, Metric]:
    """Load a baseline file."""
    doc = msgspec.json.decode(Path(path).read_bytes(), type=_Baseline)
    return {name: Metric(name, m.value, m.better, m.tolerance, m.relative) for name, m in doc.metrics.items()}


def write_baseline(path: Path, metrics: dict[str, Metric], source: str) -> None:
    """Write ``metrics`` as a baseline file (sorted, indented, so diffs read well)."""
    doc = _Baseline(source=source, metrics={
        name: _BaselineMetric(m.value, m.better, m.tolerance, m.relative) for name, m in sorted(metrics.items())})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(msgspec.json.format(msgspec.json.encode(doc)) + b"\n")


def _limit(base: Metric) -> float:
    return abs(base.value) * base.tolerance if base.relative else base.tolerance


def _status(base: Metric, value: float | None) -> str:
    if value is None:
        return "missing"
    delta = value - base.value
    limit = _limit(base)
    if base.better == "equal":
        return "ok" if abs(delta) <= limit else "regressed"
    worse = delta if base.better == "lower" else -delta
    if worse > limit:
        return "regressed"
    if -worse > limit:
        return "improved"
    return "ok"


def compare(current: dict[str, Metric], baseline: dict[str, Metric]) -> pl.DataFrame:
    """One row per baseline metric: baseline, current, change, allowed change, status."""
    rows = []
    for name, base in sorted(baseline.items()):
        now = current.get(name)
        value = None if now is None else now.value
        rows.append({
            "metric": name,
            "baseline": base.value,
            "current": value,
            "change": None if value is None else value - base.value,
            "allowed": ("±" if base.better == "equal" else "+" if base.better == "lower" else "-")
            + (f"{base.tolerance:.0%}" if base.relative else f"{base.tolerance:g}"),
            "status": _status(base, value),
        })
    return pl.DataFrame(rows, schema={"metric": pl.String, "baseline": pl.Float64, "current": pl.Float64,
                                      "change": pl.Float64, "allowed": pl.String, "status": pl.String})


def main(argv: list[str]) -> int:
    """Run the gate; return the exit code."""
    p = argparse.ArgumentParser(prog="python -m experiments check", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="a run folder written by `python -m experiments run`")
    p.add_argument("--baseline", type=Path, required=True, help="the baseline file (JSON) to compare with")
    p.add_argument("--update", action="store_true", help="write this run's metrics as the baseline instead")
    p.add_argument("--all", action="store_true", help="list every metric, not only those that moved")
    args = p.parse_args(argv)
    if not args.run_dir.is_dir():
        print(f"experiments check: {args.run_dir}: not a run folder", file=sys.stderr)
        return 2
    current = collect_metrics(args.run_dir)
    if not current:
        print(f"experiments check: {args.run_dir}: no measurement tables found", file=sys.stderr)
        return 2
    if args.update:
        write_baseline(args.baseline, current, source=str(args.run_dir))
        print(f"wrote {len(current)} metrics to {args.baseline}")
        return 0
    if not args.baseline.is_file():
        print(f"experiments check: {args.baseline}: no such baseline file (create it with --update)", file=sys.stderr)
        return 2
    table = compare(current, read_baseline(args.baseline))
    moved = table.filter(pl.col("status") != "ok")
    fmt = {c: (lambda v: f"{v:.4g}") for c in ("baseline", "current", "change")}
    if args.all or moved.height:
        print(markdown_table(table if args.all else moved, fmt))
    else:
        print("nothing moved beyond its tolerance")
    regressed = table.filter(pl.col("status").is_in(["regressed", "missing"])).height
    new = sorted(set(current) - set(read_baseline(args.baseline)))
    print(f"\n{table.height} metrics checked: {regressed} regressed or missing, "
          f"{moved.filter(pl.col('status') == 'improved').height} improved"
          + (f"; {len(new)} not in the baseline (run with --update to add them)" if new else ""))
    return 1 if regressed else 0
