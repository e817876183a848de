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
        # Ratios on a shared machine wander by tens of percent: hold them loosely. A strategy that
        # syncs every append is compared with a raw write + fdatasync (the disk's sync cost would
        # swamp a ratio to a bare write); the others with the per-entry paired ratio to a raw
        # write, which drift during the run does not move.
        if row["ratio_raw_fdatasync"] is not None:
            yield Metric(f"write_cost.{name}.ratio_raw_fdatasync", row["ratio_raw_fdatasync"], "lower", 0.6)
        else:
            yield Metric(f"write_cost.{name}.paired_ratio_raw_write", row["paired_ratio_raw_write"], "lower", 0.6)
            # Growth says whether an append costs more as the session grows: a property of the code
            # for a store that does not sync, but of the disk's sync latency (which wanders with
            # everything else on the machine) for one that does, so only the former is gated.
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
    modes = _table(run_dir, "concurrency_modes")
    if modes is not None:
        for row in modes.filter(pl.col("mode") == "lock").iter_rows(named=True):
            # With the lock nothing may be lost, damaged or doubled, on any machine: held at zero.
            # (Without it the counts depend on how the writers happen to overlap: the finding, not a figure.)
            key = f"concurrency_modes.{row['target']}.lock" + (f".{row['line_bytes']}" if row["line_bytes"] else "")
            for column in ("lost", "damaged_lines", "duplicated", "writers_failed"):
                yield Metric(f"{key}.{column}", float(row[column]), "lower", 0, relative=False)


def _hostile(run_dir: Path) -> Iterator[Metric]:
    table = _table(run_dir, "hostile")
    if table is None:
        return
    # Deterministic: a case that stops being refused, clear or harmless is a regression.
    yield Metric("hostile.not_as_expected", float((~table["as_expected"]).sum()), "lower", 0, relative=False)
    yield Metric("hostile.unclear_errors", float((~table["clear"]).sum()), "lower", 0, relative=False)
    yield Metric("hostile.stored_data_lost", float((~table["intact"]).sum()), "lower", 0, relative=False)


def _table(run_dir: Path, name: str) -> pl.DataFrame | None:
    path = run_dir / f"{name}.parquet"
    return pl.read_parquet(path) if path.exists() else None


def _memory(run_dir: Path) -> Iterator[Metric]:
    table = _table(run_dir, "memory")
    if table is None:
        return
    timed = table.filter(pl.col("run") == "timed")
    top = timed.filter(pl.col("size_mb") == timed["size_mb"].max())
    for (name,), part in top.group_by("strategy"):
        load = part.filter(pl.col("op") == "full_load")
        resume = part.filter(pl.col("op") == "resume")
        # Both sides timed in the same run: the ratio survives a slower machine, raw times would not.
        yield Metric(f"memory.{name}.resume_speedup", load["wall_ns"].median() / resume["wall_ns"].median(), "higher", 0.5)
        growth = (load["peak_rss_bytes"] - load["rss_before_bytes"]).median() / load["session_bytes"].max()
        yield Metric(f"memory.{name}.full_load_rss_per_session_byte", growth, "lower", 0.5)


def _crash(run_dir: Path) -> Iterator[Metric]:
    table = _table(run_dir, "recovery")
    if table is None:
        return
    for (name,), part in table.group_by("strategy"):
        # A broken promise is a bug whatever the machine: none may appear.
        yield Metric(f"crash.{name}.violations", float(part["violation"].sum()), "lower", 0, relative=False)
        if part["durability"][0] != "none":  # a store without a promise loses what the kill's timing decides
            process = part.filter(pl.col("crash_kind") == "process")
            yield Metric(f"crash.{name}.process_crash_lost", float(process["lost"].sum()), "lower", 0, relative=False)


def _crash_explore(run_dir: Path) -> Iterator[Metric]:
    table = _table(run_dir, "crash_states")
    if table is None:
        return
    for (name,), part in table.group_by("strategy", maintain_order=True):
        # A crash state that breaks a strategy's own promise is a bug whatever the machine (every
        # recovery mode counted): none may appear. Losses a weaker promise allows are not counted.
        yield Metric(f"crash_explore.{name}.violations", float(part["violations"].sum()), "lower", 0, relative=False)


def _tokens(run_dir: Path) -> Iterator[Metric]:
    summary = _table(run_dir, "tokens_summary")
    if summary is not None:
        for row in summary.filter(pl.col("tier") != "precise").iter_rows(named=True):
            # (A precise tokenizer scored against the reference is a fixed fact about two
            # vocabularies, not something code can regress.) Estimates are deterministic for a corpus seed: half a percentage point is a real change.
            yield Metric(f"tokens.{row['estimator']}.{row['kind']}.mape_pct", row["mape_pct"], "lower", 0.5, relative=False)
    speed = _table(run_dir, "token_speed_summary")
    if speed is not None:
        for row in speed.filter(pl.col("kind") == "all").iter_rows(named=True):
            if row["speedup_vs_baseline"] is not None and not row["estimator"].startswith(("tiktoken:", "hf:", "mistral:")):
                yield Metric(f"tokens.{row['estimator']}.speedup", row["speedup_vs_baseline"], "higher", 0.5)


def _compaction(run_dir: Path) -> Iterator[Metric]:
    summary = _table(run_dir, "compaction_summary")
    if summary is None:
        return
    for row in summary.iter_rows(named=True):
        key = f"compaction.{row['window']}.{row['tier']}"
        # The replay is deterministic for a seed: the thresholds are held exactly.
        yield Metric(f"{key}.compactions", row["compactions"], "equal", 0, relative=False)
        yield Metric(f"{key}.max_occupancy", row["max_occupancy"], "lower", 0.005, relative=False)
        yield Metric(f"{key}.split_tool_pairs", row["split_tool_pairs"], "lower", 0, relative=False)
        if row["retained_pct"] is not None:  # a transcript workload plants no facts
            yield Metric(f"{key}.facts_retained_pct", row["retained_pct"], "higher", 0, relative=False)
        if row["median_survived"] is not None:
            yield Metric(f"{key}.median_compactions_survived", row["median_survived"], "higher", 0, relative=False)


def _transcripts(run_dir: Path) -> Iterator[Metric]:
    summary = _table(run_dir, "usage_summary")
    if summary is not None:
        for row in summary.iter_rows(named=True):
            key = f"transcripts.{row['format']}.{row['tier']}"
            # Estimates of fixed transcripts are deterministic: half a percentage point is a real change.
            for column in ("mape_pct", "mape_overhead_pct", "test_mape_pct"):
                if row[column] is not None:
                    yield Metric(f"{key}.{column}", row[column], "lower", 0.5, relative=False)
    replays = _table(run_dir, "transcript_compaction")
    if replays is not None:
        for row in replays.iter_rows(named=True):
            key = f"transcripts.{row['session']}.{row['window']}.{row['tier']}"
            yield Metric(f"{key}.aptmem_compactions", row["aptmem_compactions"], "equal", 0, relative=False)
            yield Metric(f"{key}.split_tool_pairs", row["split_tool_pairs"], "lower", 0, relative=False)


def _fuzz(run_dir: Path) -> Iterator[Metric]:
    table = _table(run_dir, "fuzz")
    if table is None:
        return
    for (name,), part in table.group_by("target", maintain_order=True):
        target = name.replace(":", ".")  # big_line:scan -> big_line.scan
        # Any of these is a bug the fuzzer found, whatever the machine: held at zero.
        yield Metric(f"fuzz.{target}.unexpected_exceptions", float(part["unexpected_exceptions"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.lost_good_lines", float(part["lost_good_lines"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.invented_entries", float(part["invented_entries"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.violations", float(part["violations"].sum()), "lower", 0, relative=False)


#: Functions that read one measurement's tables and yield its metrics (nothing if it was not run).
COLLECTORS: list[Callable[[Path], Iterator[Metric]]] = [_write_cost, _memory, _crash, _crash_explore, _concurrency, _hostile,
                                                         _tokens, _compaction, _transcripts, _fuzz]


def collect_metrics(run_dir: Path) -> dict[str, Metric]:
    """Every metric of the run in ``run_dir``, by name."""
    return {m.name: m for collect in COLLECTORS for m in collect(Path(run_dir))}
