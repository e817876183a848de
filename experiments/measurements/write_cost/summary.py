"""Summaries of write-cost samples: percentiles, ratios to the raw baselines, growth, goals.

Everything here is computed from the tidy samples table of :mod:`experiments.measurements.write_cost.samples`, so a
report can be rebuilt from the stored parquet alone. Percentiles use linear interpolation
(numpy's default): the median of an even count is the mean of the two middle samples.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["SYNCING", "goals", "summarize"]

#: declared durabilities that sync every append, so a ratio to ``os.write + fdatasync`` is meaningful.
SYNCING = ("per_append",)

_INFO = ["strategy", "family", "durable", "durability", "variant"]


def _window_p50(lo: pl.Expr, hi: pl.Expr, kind: str) -> pl.Expr:
    in_window = (pl.col("kind") == kind) & (pl.col("seq") >= lo) & (pl.col("seq") <= hi)
    return pl.col("latency_ns").filter(in_window).median()


def summarize(samples: pl.DataFrame, *, early: tuple[int, int] = (1, 100), late_size: int = 100) -> pl.DataFrame:
    """One row per strategy: percentiles, ratios of medians to the raw baselines, and growth.

    Columns: the strategy's descriptive columns; ``entries`` (how many it replayed); ``p50_ns``,
    ``p90_ns``, ``p99_ns``, ``max_ns``, ``mean_ns`` of its appends; ``raw_write_p50_ns`` and
    ``raw_fdatasync_p50_ns`` of the baselines timed beside it (null if not measured);
    ``ratio_raw_write`` = p50 / raw write p50; ``paired_ratio_raw_write`` = the median over
    entries of (append / raw write of the same entry), robust to drift during the run;
    ``encode_p50_ns``, the median of encoding a fresh copy of each entry, and
    ``ratio_encode_raw_write`` = p50 / (encode p50 + raw write p50): what the strategy costs
    beyond serializing the entry and the one write;
    ``ratio_raw_fdatasync`` = p50 / raw fdatasync p50, only for strategies whose durability
    syncs (:data:`SYNCING`), else null; ``early_window`` / ``late_window`` as "lo-hi" entry
    ranges: the early one is ``early``, the late one the last ``late_size`` entries replayed
    (4901-5000 for a 5,000-entry run); ``early_p50_ns``, ``late_p50_ns`` and ``growth`` =
    late / early medians of the strategy; ``raw_write_growth``, the same for the raw write (the
    machine's own drift, for comparison).
    """
    if late_size < 1 or early[0] < 1 or early[1] < early[0]:
        raise ValueError("windows must be non-empty ranges of 1-based entries")
    lat = pl.col("latency_ns")
    strat = pl.col("kind") == "strategy"
    n = pl.col("seq").filter(strat).max()
    late_lo = pl.max_horizontal(n - late_size + 1, pl.lit(1))
    by_seq = _paired(samples)
    out = (
        samples.group_by(_INFO, maintain_order=True)
        .agg(
            n.alias("entries"),
            lat.filter(strat).median().alias("p50_ns"),
            lat.filter(strat).quantile(0.9, "linear").alias("p90_ns"),
            lat.filter(strat).quantile(0.99, "linear").alias("p99_ns"),
            lat.filter(strat).max().cast(pl.Float64).alias("max_ns"),
            lat.filter(strat).mean().alias("mean_ns"),
            lat.filter(pl.col("kind") == "raw_write").median().alias("raw_write_p50_ns"),
            lat.filter(pl.col("kind") == "raw_write_fdatasync").median().alias("raw_fdatasync_p50_ns"),
            lat.filter(pl.col("kind") == "encode").median().alias("encode_p50_ns"),
            _window_p50(pl.lit(early[0]), pl.lit(early[1]), "strategy").alias("early_p50_ns"),
            _window_p50(late_lo, n, "strategy").alias("late_p50_ns"),
            _window_p50(pl.lit(early[0]), pl.lit(early[1]), "raw_write").alias("raw_early_p50_ns"),
            _window_p50(late_lo, n, "raw_write").alias("raw_late_p50_ns"),
            late_lo.alias("late_lo"),
        )
        .join(by_seq, on="strategy", how="left")
        .with_columns(
            (pl.col("p50_ns") / pl.col("raw_write_p50_ns")).alias("ratio_raw_write"),
            (pl.col("p50_ns") / (pl.col("encode_p50_ns") + pl.col("raw_write_p50_ns"))).alias("ratio_encode_raw_write"),
            pl.when(pl.col("durability").is_in(SYNCING))
            .then(pl.col("p50_ns") / pl.col("raw_fdatasync_p50_ns"))
            .otherwise(None)
            .alias("ratio_raw_fdatasync"),
            (pl.col("late_p50_ns") / pl.col("early_p50_ns")).alias("growth"),
            (pl.col("raw_late_p50_ns") / pl.col("raw_early_p50_ns")).alias("raw_write_growth"),
            pl.lit(f"{early[0]}-{early[1]}").alias("early_window"),
            pl.format("{}-{}", pl.col("late_lo"), pl.col("entries")).alias("late_window"),
        )
    )
    return out.select(
        *_INFO, "entries", "p50_ns", "p90_ns", "p99_ns", "max_ns", "mean_ns",
        "raw_write_p50_ns", "raw_fdatasync_p50_ns", "ratio_raw_write", "paired_ratio_raw_write",
        "encode_p50_ns", "ratio_encode_raw_write",
        "ratio_raw_fdatasync", "early_window", "late_window", "early_p50_ns", "late_p50_ns",
        "growth", "raw_write_growth",
    )


def _paired(samples: pl.DataFrame) -> pl.DataFrame:
    """Per strategy, the median over entries of (append latency / raw write latency of the same entry)."""
    keys = ["strategy", "seq"]
    appends = samples.filter(pl.col("kind") == "strategy").select(*keys, pl.col("latency_ns").alias("append_ns"))
    raws = samples.filter(pl.col("kind") == "raw_write").select(*keys, pl.col("latency_ns").alias("raw_ns"))
    return (
        appends.join(raws, on=keys, how="inner")
        .group_by("strategy")
        .agg((pl.col("append_ns") / pl.col("raw_ns")).median().alias("paired_ratio_raw_write"))
    )


def goals(summary: pl.DataFrame, *, reference: str | None, reported: Sequence[str] = (), max_ratio: float = 1.5,
          max_growth: float = 1.1) -> pl.DataFrame:
    """The write-cost goals of the design, checked on a summary; one row per goal and strategy.

    * ``reference`` (the strategy the design's goals are stated for: aptmem's log without sync)
      append median within ``max_ratio`` x the raw ``os.write``;
    * its median over the late window within ``max_growth`` x its median over the early window;
    * the growth of every strategy of ``reported`` (those whose appends rewrite the whole history),
      reported with no target: it is expected to grow.

    Columns: goal, strategy, value, target (null when only reported), met (null when only
    reported or when the strategy was not measured), windows.
    """
    rows: list[dict[str, object]] = []
    ref = summary.filter(pl.col("strategy") == reference) if reference is not None else summary.clear()
    first = ref.row(0, named=True) if ref.height else None
    windows = f"{first['early_window']} vs {first['late_window']}" if first else ""
    for goal, column, target, where in (
        (f"median append / median raw os.write <= {max_ratio}", "ratio_raw_write", max_ratio, ""),
        (f"median at the last entries / median at the first <= {max_growth}", "growth", max_growth, windows),
    ):
        value = first[column] if first else None
        rows.append({"goal": goal, "strategy": reference, "value": value, "target": target,
                     "met": None if value is None else bool(value <= target), "windows": where})
    if first is not None:
        rows.append({"goal": "median append / (median encode + median raw os.write) (reported)", "strategy": reference,
                     "value": first["ratio_encode_raw_write"], "target": None, "met": None, "windows": ""})
    for row in summary.filter(pl.col("strategy").is_in(list(reported))).iter_rows(named=True):
        rows.append({"goal": f"{row['family']} growth (reported)", "strategy": row["strategy"], "value": row["growth"],
                     "target": None, "met": None, "windows": f"{row['early_window']} vs {row['late_window']}"})
    return pl.DataFrame(rows, schema={"goal": pl.String, "strategy": pl.String, "value": pl.Float64,
                                      "target": pl.Float64, "met": pl.Boolean, "windows": pl.String})
