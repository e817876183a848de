"""The tables of the memory-quality measurement: their declared schemas, and the summary derived from them.

Raw tables (every figure of the report is recomputed from these):

* ``memory_items``: one row per (seed, item): what was planted, where, its answers;
* ``memory_checks``: one row per (strategy, window, seed, item, checkpoint): present in context (every answer)?
* ``memory_plants``: one row per (strategy, window, seed, item, evidence entry that carries answers): at the
  first compaction or hand-over after that entry, are the answers it carried in context?
* ``memory_answers``: one row per (strategy, window, seed, item, wording, budget): answerable?
  (``budget`` null: the whole rendering, ranked);
* ``memory_runs``: one row per (strategy, window, seed): cost and counts, and where the context went right
  after a compaction (means over the run's compactions).

Derived: ``memory_summary``, one row per (strategy, window, metric) with the mean, min and max
over seeds (:func:`summarize`), stored for ``experiments check`` and the report.
"""

from __future__ import annotations

import polars as pl

__all__ = ["ANSWER_SCHEMA", "CHECK_SCHEMA", "FINDABLE", "ITEM_SCHEMA", "METRICS", "PLANT_SCHEMA", "RUN_SCHEMA", "SUMMARY_SCHEMA",
           "TABLES", "summarize"]

TABLES = ("memory_items", "memory_checks", "memory_answers", "memory_runs", "memory_summary", "memory_plants")

_KEY = {"strategy": pl.String, "window": pl.Int64, "seed": pl.Int64}

ITEM_SCHEMA = {"seed": pl.Int64, "split": pl.String, "item": pl.String, "type": pl.String, "kind": pl.String,
               "lang": pl.String, "carrier": pl.String, "format": pl.String, "subject": pl.String,
               "answers": pl.String, "stale": pl.String, "evidence": pl.Int64, "session": pl.Int64, "turn": pl.Int64,
               "first_turn": pl.Int64}
CHECK_SCHEMA = {**_KEY, "item": pl.String, "checkpoint": pl.Int64, "at": pl.String, "seq": pl.Int64, "turn": pl.Int64,
                "age_checkpoints": pl.Int64, "age_turns": pl.Int64, "present": pl.Boolean, "where": pl.String}
PLANT_SCHEMA = {**_KEY, "item": pl.String, "evidence": pl.String, "checkpoint": pl.Int64, "at": pl.String, "seq": pl.Int64,
                "age_turns": pl.Int64, "present": pl.Boolean}
ANSWER_SCHEMA = {**_KEY, "item": pl.String, "wording": pl.String, "budget": pl.Int64, "answerable": pl.Boolean,
                 "packet_tokens": pl.Int64}
RUN_SCHEMA = {**_KEY, "appends": pl.Int64, "compactions": pl.Int64, "handoffs": pl.Int64,
              "mean_context_tokens": pl.Float64, "max_context_tokens": pl.Int64, "end_context_tokens": pl.Int64,
              "compaction_seconds": pl.Float64, "handoff_seconds": pl.Float64, "seconds": pl.Float64,
              # where the context went right after a compaction, means over the run's (replay.budget_figures)
              "post_fixed_tokens": pl.Float64, "post_summary_tokens": pl.Float64, "post_kept_tokens": pl.Float64,
              "post_kept_turns": pl.Float64, "shortened_share": pl.Float64, "floored_share": pl.Float64,
              "memory_empty_share": pl.Float64,
              "items": pl.Int64, "dropped": pl.Int64, "distractors": pl.Int64, "commit": pl.String, "machine": pl.String}
SUMMARY_SCHEMA = {"strategy": pl.String, "window": pl.Int64, "metric": pl.String, "mean": pl.Float64,
                  "min": pl.Float64, "max": pl.Float64, "seeds": pl.Int64}

#: Items whose question asks for a value that is there to find (updates and absent facts are judged apart).
FINDABLE = ("fact", "update_before", "aggregate", "order")

#: The summary's metrics, in the order the report shows them, with what each means.
METRICS = {
    "present_first": "each plant (an evidence entry, and the answers it carries) present right after the first "
                     "compaction or hand-over following it",
    "present_end": "present in the context at the end of the run",
    "answerable_512": "answerable within a 512-token packet (facts, previous values, sets, order; 3 wordings)",
    "answerable_1024": "answerable within a 1,024-token packet",
    "answerable_2048": "answerable within a 2,048-token packet",
    "answerable_all": "answerable from the whole rendering",
    "updates_right": "knowledge updates right within 1,024 tokens (current value, no stale one after it)",
    "updates_right_all": "knowledge updates right from the whole rendering (what the context holds, before any packet)",
    "absent_abstained": "absent facts abstained within 1,024 tokens (no unit names the subject beside such a value)",
    "gap_to_oracle": "answerable within 1,024 tokens: full_history's share minus this one's",
    "mean_context_tokens": "mean context tokens over every append (what each request costs)",
    "summarize_seconds": "seconds spent compacting and handing over (summarizing), per run",
}


def _share(frame: pl.DataFrame, column: str, name: str) -> pl.DataFrame:
    return frame.group_by("strategy", "window", "seed").agg(pl.col(column).cast(pl.Float64).mean().alias("value")) \
        .with_columns(pl.lit(name).alias("metric"))


def summarize(items: pl.DataFrame, checks: pl.DataFrame, answers: pl.DataFrame, runs: pl.DataFrame,
              plants: pl.DataFrame) -> pl.DataFrame:
    """The per-seed metrics of :data:`METRICS`, then their mean, min and max over seeds."""
    types = items.select("seed", "item", "type")
    answers = answers.join(types, on=["seed", "item"], how="left")
    end = checks.filter(pl.col("at") == "end")
    findable = answers.filter(pl.col("type").is_in(FINDABLE))
    parts = [_share(plants, "present", "present_first"), _share(end, "present", "present_end")]
    for budget in (512, 1024, 2048):
        parts.append(_share(findable.filter(pl.col("budget") == budget), "answerable", f"answerable_{budget}"))
    parts.append(_share(findable.filter(pl.col("budget").is_null()), "answerable", "answerable_all"))
    at_1024 = answers.filter(pl.col("budget") == 1024)
    parts.append(_share(at_1024.filter(pl.col("type") == "update"), "answerable", "updates_right"))
    whole = answers.filter(pl.col("budget").is_null())
    parts.append(_share(whole.filter(pl.col("type") == "update"), "answerable", "updates_right_all"))
    parts.append(_share(at_1024.filter(pl.col("type") == "absent"), "answerable", "absent_abstained"))
    per_seed = pl.concat([p.select("strategy", "window", "seed", "metric", "value") for p in parts])
    oracle = per_seed.filter((pl.col("strategy") == "full_history") & (pl.col("metric") == "answerable_1024")) \
        .select("window", "seed", pl.col("value").alias("oracle"))
    gap = per_seed.filter(pl.col("metric") == "answerable_1024").join(oracle, on=["window", "seed"], how="inner") \
        .select("strategy", "window", "seed", pl.lit("gap_to_oracle").alias("metric"), (pl.col("oracle") - pl.col("value")).alias("value"))
    costs = runs.select("strategy", "window", "seed", pl.lit("mean_context_tokens").alias("metric"),
                        pl.col("mean_context_tokens").alias("value"))
    seconds = runs.select("strategy", "window", "seed", pl.lit("summarize_seconds").alias("metric"),
                          (pl.col("compaction_seconds") + pl.col("handoff_seconds")).alias("value"))
    per_seed = pl.concat([per_seed, gap, costs, seconds])
    order = {name: i for i, name in enumerate(METRICS)}
    return per_seed.group_by("strategy", "window", "metric").agg(
        pl.col("value").mean().alias("mean"), pl.col("value").min().alias("min"), pl.col("value").max().alias("max"),
        pl.len().cast(pl.Int64).alias("seeds"),
    ).with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("_order")) \
        .sort("strategy", "window", "_order").drop("_order").cast(SUMMARY_SCHEMA)  # type: ignore[arg-type]
