"""Summaries of write-cost samples: percentiles with their spread, ratios to the baselines, growth, goals.

Everything here is computed from the tidy samples table of :mod:`experiments.measurements.write_cost.samples`, so a
report can be rebuilt from the stored parquet alone. Percentiles use linear interpolation
(numpy's default): the median of an even count is the mean of the two middle samples.

Two choices that make the figures hold from one run to the next:

* **Spread.** Appends are not independent draws: a sync-bound store's latency moves in steps with
  the disk's journal and the machine's load, for seconds at a time. So the interval beside a
  median is a *block* bootstrap: the appends, in the order they ran, are cut into ``blocks``
  consecutive blocks, and the median is recomputed over ``resamples`` draws of that many blocks
  with replacement; the 2.5th and 97.5th percentiles of those medians are the 95% interval. A
  stretch of slow appends then widens the interval instead of hiding in a narrow one.
* **Growth** compares the median of a window of appends that starts after a warm-up (the first
  appends pay for cold caches, a first file creation, a first transaction) with the median of the
  last appends, and the two windows never overlap: a replay too short for a warm-up and two
  windows of at least :data:`MIN_WINDOW` appends has no growth figure (null), never a ratio of a
  window to itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

__all__ = ["MIN_WINDOW", "SYNCING", "goals", "growth_windows", "p50_interval", "summarize"]

#: declared durabilities that sync every append, so a ratio to ``os.write + fdatasync`` is meaningful.
SYNCING = ("per_append",)
#: the fewest appends a growth window may hold (fewer: no growth figure).
MIN_WINDOW = 20

_INFO = ["strategy", "family", "durable", "durability", "variant"]


def growth_windows(entries: int, *, warmup: int, window: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The early and late windows (1-based, inclusive) of a replay of ``entries`` appends, or None.

    The early window starts after ``warmup`` appends; both hold ``window`` appends, or fewer when
    the replay is short (as many as fit without overlapping, at least :data:`MIN_WINDOW`).
    """
    size = min(window, (entries - warmup) // 2)
    if size < MIN_WINDOW:
        return None
    return (warmup + 1, warmup + size), (entries - size + 1, entries)


def p50_interval(latencies: np.ndarray, *, blocks: int = 10, resamples: int = 400, seed: int = 0) -> tuple[float, float]:
    """The 95% block-bootstrap interval of the median of ``latencies`` (in the order they were taken).

    With fewer than ``blocks`` samples each sample is its own block (a plain bootstrap).
    """
    values = np.asarray(latencies, dtype=np.float64)
    if values.size == 0:
        return (float("nan"), float("nan"))
    count = min(blocks, values.size)
    size = values.size // count
    shaped = values[: count * size].reshape(count, size)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, count, size=(resamples, count))
    medians = np.median(shaped[picks].reshape(resamples, count * size), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return float(low), float(high)


def _window_p50(lo: int, hi: int, values: pl.DataFrame, kind: str) -> float | None:
    part = values.filter((pl.col("kind") == kind) & pl.col("seq").is_between(lo, hi))["latency_ns"]
    return None if part.len() == 0 else float(part.median())  # type: ignore[arg-type]


def summarize(samples: pl.DataFrame, *, warmup: int = 100, window: int = 100, blocks: int = 10,
              resamples: int = 400, seed: int = 0) -> pl.DataFrame:
    """One row per strategy: percentiles, the median's interval, ratios of medians to the baselines, growth.

    Columns: the strategy's descriptive columns; ``entries`` (how many it replayed); ``p50_ns``
    with ``p50_lo_ns`` / ``p50_hi_ns`` (its 95% block-bootstrap interval, see the module
    docstring), ``p90_ns``, ``p99_ns``, ``max_ns``, ``mean_ns`` of its appends;
    ``raw_write_p50_ns`` and ``raw_fdatasync_p50_ns`` of the baselines timed beside it (null if not
    measured); ``ratio_raw_write`` = p50 / raw write p50 and ``paired_ratio_raw_write``, the median
    over entries of (append / raw write of the same entry); ``encode_p50_ns``, the median of
    encoding a fresh copy of each entry, ``ratio_encode_raw_write`` = p50 / (encode p50 + raw write
    p50) and ``paired_ratio_encode_raw_write``, the median over entries of (append / (encode + raw
    write) of the same entry): what the store costs beyond serializing the entry and the one
    write, robust to drift; ``ratio_raw_fdatasync`` = p50 / raw fdatasync p50, only for strategies
    whose durability syncs (:data:`SYNCING`), else null; ``early_window`` / ``late_window`` as
    "lo-hi" entry ranges (:func:`growth_windows`; null when the replay is too short),
    ``early_p50_ns``, ``late_p50_ns`` and ``growth`` = late / early medians of the strategy;
    ``raw_write_growth``, the same for the raw write (the machine's own drift, for comparison).
    """
    if warmup < 0 or window < MIN_WINDOW:
        raise ValueError(f"warmup must be >= 0 and window >= {MIN_WINDOW}")
    lat = pl.col("latency_ns")
    strat = pl.col("kind") == "strategy"
    base = (
        samples.group_by(_INFO, maintain_order=True)
        .agg(
            pl.col("seq").filter(strat).max().alias("entries"),
            lat.filter(strat).median().alias("p50_ns"),
            lat.filter(strat).quantile(0.9, "linear").alias("p90_ns"),
            lat.filter(strat).quantile(0.99, "linear").alias("p99_ns"),
            lat.filter(strat).max().cast(pl.Float64).alias("max_ns"),
            lat.filter(strat).mean().alias("mean_ns"),
            lat.filter(pl.col("kind") == "raw_write").median().alias("raw_write_p50_ns"),
            lat.filter(pl.col("kind") == "raw_write_fdatasync").median().alias("raw_fdatasync_p50_ns"),
            lat.filter(pl.col("kind") == "encode").median().alias("encode_p50_ns"),
        )
        .join(_paired(samples), on="strategy", how="left")
    )
    extra = []
    for row in base.iter_rows(named=True):
        part = samples.filter(pl.col("strategy") == row["strategy"])
        appends = part.filter(strat).sort("seq")["latency_ns"].to_numpy()
        lo, hi = p50_interval(appends, blocks=blocks, resamples=resamples, seed=seed)
        windows = growth_windows(int(row["entries"] or 0), warmup=warmup, window=window)
        figures: dict[str, object] = {"strategy": row["strategy"], "p50_lo_ns": lo, "p50_hi_ns": hi,
                                      "early_window": None, "late_window": None, "early_p50_ns": None,
                                      "late_p50_ns": None, "raw_early_p50_ns": None, "raw_late_p50_ns": None}
        if windows is not None:
            (e_lo, e_hi), (l_lo, l_hi) = windows
            figures.update(early_window=f"{e_lo}-{e_hi}", late_window=f"{l_lo}-{l_hi}",
                           early_p50_ns=_window_p50(e_lo, e_hi, part, "strategy"),
                           late_p50_ns=_window_p50(l_lo, l_hi, part, "strategy"),
                           raw_early_p50_ns=_window_p50(e_lo, e_hi, part, "raw_write"),
                           raw_late_p50_ns=_window_p50(l_lo, l_hi, part, "raw_write"))
        extra.append(figures)
    spread = pl.DataFrame(extra, schema={"strategy": pl.String, "p50_lo_ns": pl.Float64, "p50_hi_ns": pl.Float64,
                                         "early_window": pl.String, "late_window": pl.String,
                                         "early_p50_ns": pl.Float64, "late_p50_ns": pl.Float64,
                                         "raw_early_p50_ns": pl.Float64, "raw_late_p50_ns": pl.Float64})
    out = base.join(spread, on="strategy", how="left").with_columns(
        (pl.col("p50_ns") / pl.col("raw_write_p50_ns")).alias("ratio_raw_write"),
        (pl.col("p50_ns") / (pl.col("encode_p50_ns") + pl.col("raw_write_p50_ns"))).alias("ratio_encode_raw_write"),
        pl.when(pl.col("durability").is_in(SYNCING))
        .then(pl.col("p50_ns") / pl.col("raw_fdatasync_p50_ns"))
        .otherwise(None)
        .alias("ratio_raw_fdatasync"),
        (pl.col("late_p50_ns") / pl.col("early_p50_ns")).alias("growth"),
        (pl.col("raw_late_p50_ns") / pl.col("raw_early_p50_ns")).alias("raw_write_growth"),
    )
    return out.select(
        *_INFO, "entries", "p50_ns", "p50_lo_ns", "p50_hi_ns", "p90_ns", "p99_ns", "max_ns", "mean_ns",
        "raw_write_p50_ns", "raw_fdatasync_p50_ns", "ratio_raw_write", "paired_ratio_raw_write",
        "encode_p50_ns", "ratio_encode_raw_write", "paired_ratio_encode_raw_write",
        "ratio_raw_fdatasync", "early_window", "late_window", "early_p50_ns", "late_p50_ns",
        "growth", "raw_write_growth",
    )


def _paired(samples: pl.DataFrame) -> pl.DataFrame:
    """Per strategy, the medians over entries of append / raw write and append / (encode + raw write) of the same entry."""
    keys = ["strategy", "seq"]

    def kind(name: str, alias: str) -> pl.DataFrame:
        return samples.filter(pl.col("kind") == name).select(*keys, pl.col("latency_ns").alias(alias))

    joined = kind("strategy", "append_ns").join(kind("raw_write", "raw_ns"), on=keys, how="inner")
    joined = joined.join(kind("encode", "encode_ns"), on=keys, how="left")
    return joined.group_by("strategy").agg(
        (pl.col("append_ns") / pl.col("raw_ns")).median().alias("paired_ratio_raw_write"),
        (pl.col("append_ns") / (pl.col("raw_ns") + pl.col("encode_ns"))).median().alias("paired_ratio_encode_raw_write"),
    )


_GOAL_SCHEMA = {"goal": pl.String, "strategy": pl.String, "value": pl.Float64, "target": pl.Float64, "met": pl.Boolean,
                "windows": pl.String}


def goals(summary: pl.DataFrame, *, reference: str | None, reported: Sequence[str] = (), max_overhead: float = 1.5,
          max_sync_overhead: float = 1.5, max_growth: float = 1.1) -> pl.DataFrame:
    """The write-cost goals, checked on a summary; one row per goal and strategy.

    The goals measure the store, not the JSON encoder or the disk:

    * ``reference`` (aptmem's log without sync): its append median within ``max_overhead`` x
      (median encode + median raw ``os.write``): what the log adds to serializing the entry and the
      one write it cannot avoid;
    * every setting of the reference's family that syncs per append: its median within
      ``max_sync_overhead`` x a raw ``os.write`` + ``fdatasync`` of the same bytes;
    * against the peers: for each other family and each promise (durable or not) the reference's
      family also offers, aptmem's fastest setting is not slower than that family's fastest beyond
      the noise (its interval's low end at most the other's high end); the value is the ratio of
      the medians;
    * the reference's growth (late window over the early one, after the warm-up) within ``max_growth``;
    * the growth of every strategy of ``reported`` (those whose appends rewrite the whole history),
      reported with no target: it is expected to grow.

    Columns: goal, strategy, value, target (null when only reported), met (null when only reported
    or when the strategy was not measured), windows.
    """
    rows: list[dict[str, object]] = []
    ref = summary.filter(pl.col("strategy") == reference) if reference is not None else summary.clear()
    first = ref.row(0, named=True) if ref.height else None
    windows = f"{first['early_window']} vs {first['late_window']}" if first and first["early_window"] else ""

    def goal(text: str, strategy: str | None, value: float | None, target: float | None, met: bool | None = None,
             where: str = "") -> None:
        if met is None and value is not None and target is not None:
            met = bool(value <= target)
        rows.append({"goal": text, "strategy": strategy, "value": value, "target": target, "met": met, "windows": where})

    goal(f"median append / (median encode + median raw os.write) <= {max_overhead}", reference,
         first["ratio_encode_raw_write"] if first else None, max_overhead)
    if first is not None:
        family = summary.filter(pl.col("family") == first["family"])
        for row in family.filter(pl.col("durability").is_in(SYNCING)).iter_rows(named=True):
            goal(f"median append / median (raw os.write + fdatasync) <= {max_sync_overhead}", row["strategy"],
                 row["ratio_raw_fdatasync"], max_sync_overhead)
        for durable in (False, True):
            ours = family.filter(pl.col("durable") == durable).sort("p50_ns")
            if ours.height == 0:
                continue
            mine = ours.row(0, named=True)
            others = summary.filter((pl.col("family") != first["family"]) & (pl.col("durable") == durable))
            for peer_family in others["family"].unique(maintain_order=True).to_list():
                peer = others.filter(pl.col("family") == peer_family).sort("p50_ns").row(0, named=True)
                label = "durable" if durable else "not durable"
                goal(f"{mine['strategy']} vs {peer['strategy']} ({label}): not slower beyond the noise", mine["strategy"],
                     mine["p50_ns"] / peer["p50_ns"], 1.0, met=bool(mine["p50_lo_ns"] <= peer["p50_hi_ns"]))
    growth = first["growth"] if first else None
    goal(f"median at the last entries / median after the warm-up <= {max_growth}", reference, growth, max_growth,
         met=None if growth is None else bool(growth <= max_growth), where=windows)
    for row in summary.filter(pl.col("strategy").is_in(list(reported))).iter_rows(named=True):
        where = f"{row['early_window']} vs {row['late_window']}" if row["early_window"] else "too few entries"
        rows.append({"goal": f"{row['family']} growth (reported)", "strategy": row["strategy"], "value": row["growth"],
                     "target": None, "met": None, "windows": where})
    return pl.DataFrame(rows, schema=_GOAL_SCHEMA)
