"""Measure token estimators: accuracy against a reference tokenizer, speed side by side, and the
per-append cost of a running context tally. Every function returns a tidy polars table, one
row per observation; the summaries and goals are computed from those tables.

* accuracy: per text, ``signed_pct = (estimate - exact) / exact * 100`` and its absolute value;
* speed: every repeat times each estimator over all texts of a kind, the estimators in a fresh
  random order per kind and repeat, so drift of a shared machine hits them alike; a speed-up
  is the median over repeats of the paired ratio (baseline time / estimator time). The time is
  the counting thread's CPU time (``time.thread_time_ns``), not the wall clock: every estimator,
  tiktoken's Rust encoder included, counts in the calling thread, so its CPU time is its whole
  cost, and it leaves out the time another process held the core (on a shared machine at load
  5-10 the wall clock put English anywhere from 8x to 27x; on an idle one the two clocks agree);
* tally growth: the time of ``ContextTally.add`` for every entry of a long session, paired with
  the time of counting that entry alone, so early and late appends compare on equal content
  (the running total must not make appends slower as the session grows).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence

import polars as pl

from aptmem.entries import Entry
from aptmem.tokens import ContextTally, Estimator, count_entry, render_entry
from experiments.measurements.tokens.corpus import Sample

__all__ = ["accuracy_table", "goals", "speed_table", "summarize_accuracy", "summarize_growth", "summarize_speed", "tally_growth"]


def accuracy_table(estimators: Sequence[Estimator], samples: Sequence[Sample], exact: Sequence[int]) -> pl.DataFrame:
    """One row per (text, estimator): the estimate beside the exact count ``exact[i]`` of ``samples[i]``."""
    rows: dict[str, list] = {k: [] for k in ("kind", "index", "chars", "bytes", "estimator", "tier", "tokenizer",
                                             "estimate", "exact")}
    for est in estimators:
        count = est.count
        for sample, truth in zip(samples, exact, strict=True):
            rows["kind"].append(sample.kind)
            rows["index"].append(sample.index)
            rows["chars"].append(len(sample.text))
            rows["bytes"].append(len(sample.text.encode("utf-8", "surrogatepass")))
            rows["estimator"].append(est.name)
            rows["tier"].append(est.tier)
            rows["tokenizer"].append(est.tokenizer)
            rows["estimate"].append(count(sample.text))
            rows["exact"].append(truth)
    df = pl.DataFrame(rows)
    signed = (pl.col("estimate") - pl.col("exact")) / pl.col("exact") * 100
    return df.with_columns(signed.alias("signed_pct"), signed.abs().alias("abs_pct"))


def summarize_accuracy(acc: pl.DataFrame) -> pl.DataFrame:
    """Per (estimator, kind): texts, MAPE (mean, median, p90), mean signed error, and the error of the total."""
    return (acc.group_by("estimator", "tier", "kind", maintain_order=True)
               .agg(pl.len().alias("texts"),
                    pl.col("abs_pct").mean().alias("mape_pct"),
                    pl.col("abs_pct").median().alias("median_ape_pct"),
                    pl.col("abs_pct").quantile(0.9, "linear").alias("p90_ape_pct"),
                    pl.col("signed_pct").mean().alias("mean_signed_pct"),
                    ((pl.col("estimate").sum() / pl.col("exact").sum() - 1) * 100).alias("total_signed_pct")))


def speed_table(estimators: Sequence[Estimator], samples: Sequence[Sample], repeats: int = 7,
                seed: int = 0) -> pl.DataFrame:
    """One row per (repeat, kind, estimator): nanoseconds to count every text of the kind once."""
    by_kind: dict[str, list[str]] = {}
    for s in samples:
        by_kind.setdefault(s.kind, []).append(s.text)
    rng = random.Random(f"aptmem-token-speed:{seed}")
    rows: dict[str, list] = {k: [] for k in ("repeat", "kind", "estimator", "ns", "chars", "texts")}
    for est in estimators:  # warm up: first calls load files and fill caches
        for texts in by_kind.values():
            est.count(texts[0])
    for repeat in range(repeats):
        for kind, texts in by_kind.items():
            order = list(estimators)
            rng.shuffle(order)
            chars = sum(map(len, texts))
            for est in order:
                count = est.count
                started = time.thread_time_ns()
                for text in texts:
                    count(text)
                elapsed = time.thread_time_ns() - started
                for key, value in (("repeat", repeat), ("kind", kind), ("estimator", est.name), ("ns", elapsed),
                                   ("chars", chars), ("texts", len(texts))):
                    rows[key].append(value)
    return pl.DataFrame(rows)


def summarize_speed(speed: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """Per (estimator, kind, and ``all`` kinds): median µs per 1,000 characters and the paired speed-up over ``baseline``."""
    whole = (speed.group_by("repeat", "estimator", maintain_order=True)
                  .agg(pl.col("ns").sum(), pl.col("chars").sum(), pl.col("texts").sum())
                  .with_columns(pl.lit("all").alias("kind")).select(speed.columns))
    both = pl.concat([speed, whole])
    base = both.filter(pl.col("estimator") == baseline).select("repeat", "kind", pl.col("ns").alias("base_ns"))
    paired = both.join(base, on=["repeat", "kind"], how="left")
    return (paired.group_by("estimator", "kind", maintain_order=True)
                  .agg(pl.len().alias("repeats"),
                       (pl.col("ns") / pl.col("chars") * 1000 / 1000).median().alias("us_per_1k_chars"),
                       (pl.col("chars") / pl.col("ns") * 1e3).median().alias("mchars_per_s"),
                       (pl.col("base_ns") / pl.col("ns")).median().alias("speedup_vs_baseline"))
                  .sort("estimator", "kind"))


def goals(acc_summary: pl.DataFrame, speed_summary: pl.DataFrame, kinds: Sequence[str], *,
          medium: str = "medium", max_mape: float = 10.0, min_speedup: float = 10.0) -> pl.DataFrame:
    """The issue's goals: ``medium`` MAPE <= ``max_mape`` on every kind; >= ``min_speedup`` x faster than the baseline."""
    rows: list[Mapping[str, object]] = []
    for kind in kinds:
        hit = acc_summary.filter((pl.col("estimator") == medium) & (pl.col("kind") == kind))
        value = float(hit["mape_pct"][0]) if hit.height else float("nan")
        rows.append({"goal": f"medium MAPE on {kind} (%)", "value": value, "target": f"<= {max_mape:g}",
                     "met": value <= max_mape})
    for kind in ("all", *kinds):
        hit = speed_summary.filter((pl.col("estimator") == medium) & (pl.col("kind") == kind))
        value = float(hit["speedup_vs_baseline"][0]) if hit.height else float("nan")
        rows.append({"goal": f"medium speed-up over tiktoken, {kind} (x)", "value": value,
                     "target": f">= {min_speedup:g}", "met": value >= min_speedup})
    return pl.DataFrame(rows)


def tally_growth(estimator: Estimator, entries: Sequence[Entry]) -> pl.DataFrame:
    """Time every ``ContextTally.add`` over ``entries``, each beside a bare ``count_entry`` of the same entry.

    One row per append: ``ns`` (the tally's add), ``bare_ns`` (counting the entry alone, no
    tally), the entry's rendered characters, its tokens and the running total. ``ns / bare_ns``
    staying flat from the first appends to the last is what "O(1) per append" means here.
    """
    tally = ContextTally(estimator)
    rows: dict[str, list] = {k: [] for k in ("ns", "bare_ns", "chars", "tokens", "total")}
    clock = time.perf_counter_ns
    for entry in entries:
        started = clock()
        count_entry(estimator, entry)
        bare = clock() - started
        started = clock()
        n = tally.add(entry)
        rows["ns"].append(clock() - started)
        rows["bare_ns"].append(bare)
        rows["chars"].append(len(render_entry(entry)))
        rows["tokens"].append(n)
        rows["total"].append(tally.total)
    return pl.DataFrame({"append": range(1, len(entries) + 1), **rows, "estimator": estimator.name})


def summarize_growth(growth: pl.DataFrame, window: int = 500) -> pl.DataFrame:
    """Per estimator, first vs last ``window`` appends: median ns per add, and median of add / bare count."""
    n = growth["append"].max()
    tagged = growth.with_columns(pl.when(pl.col("append") <= window).then(pl.lit("early"))
                                 .when(pl.col("append") > n - window).then(pl.lit("late")).otherwise(None).alias("part"))
    per = (tagged.drop_nulls("part").group_by("estimator", "part")
                 .agg(pl.col("ns").median().alias("ns"), (pl.col("ns") / pl.col("bare_ns")).median().alias("ratio")))
    wide = per.pivot(on="part", index="estimator", values=["ns", "ratio"])
    return wide.with_columns((pl.col("ratio_late") / pl.col("ratio_early")).alias("growth"),
                             pl.lit(int(n)).alias("appends"), pl.lit(window).alias("window")).sort("estimator")
