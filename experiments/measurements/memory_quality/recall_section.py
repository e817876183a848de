"""The recall part of the memory section, rebuilt from the stored tables alone.

:func:`recall_lines` reads ``memory_recall``, ``memory_recall_runs`` and ``memory_summary`` from a
run folder and returns markdown lines (none when no recall strategy ran): the retrieval figures per
strategy, window and wording (:func:`.recall_scoring.recall_summary`), the index's build time, size
and query latency, and the issue's target for recall strategies: answerable within a 1,024-token
packet for at least 90% of planted facts, flat from 8k to 128k.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_table
from experiments.measurements.memory_quality.recall_scoring import recall_summary

__all__ = ["FLAT_POINTS", "recall_lines", "recall_targets"]

#: "Flat" across windows: the answerable share moves by at most this much between the smallest and largest window.
FLAT_POINTS = 0.05
_TARGET = 0.90


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def recall_targets(summary: pl.DataFrame, strategies: list[str]) -> pl.DataFrame:
    """Per recall strategy: answerable within 1,024 tokens at its worst window >= 90%, and flat across windows."""
    rows: list[dict[str, object]] = []
    part = summary.filter(pl.col("metric") == "answerable_1024")
    for strategy in strategies:
        values = part.filter(pl.col("strategy") == strategy).sort("window")
        if not values.height:
            continue
        low, high = float(values["mean"].min()), float(values["mean"].max())  # type: ignore[arg-type]
        windows = f"{values['window'][0]:,}–{values['window'][-1]:,}"
        rows.append({"target": "answerable within 1,024 tokens >= 90% at every window", "strategy": strategy,
                     "windows": windows, "measured": low, "met": low >= _TARGET})
        rows.append({"target": f"flat across windows (max − min <= {FLAT_POINTS * 100:.0f} points)", "strategy": strategy,
                     "windows": windows, "measured": high - low, "met": high - low <= FLAT_POINTS})
    return pl.DataFrame(rows, schema={"target": pl.String, "strategy": pl.String, "windows": pl.String,
                                      "measured": pl.Float64, "met": pl.Boolean})


def recall_lines(run_dir: str | Path) -> list[str]:
    """The markdown lines of the recall part (empty when the run scored no recall strategy)."""
    questions = read_table(run_dir, "memory_recall")
    runs = read_table(run_dir, "memory_recall_runs")
    summary = read_table(run_dir, "memory_summary")
    if questions is None or runs is None or summary is None or not questions.height:
        return []
    table = recall_summary(questions)
    shown = ["strategy", "window", "wording", "questions", "entry_recall@1", "entry_recall@5", "entry_recall@10",
             "session_recall@5", "entry_ndcg@10", "session_ndcg@10", "entry_rr", "session_rr",
             "aggregation_evidence@10", "false_positive_rate", "false_positive_shown_rate", "abstained_rate",
             "answerable_1024"]
    percent = {c: _percent for c in shown[4:] if c not in ("entry_ndcg@10", "session_ndcg@10", "entry_rr", "session_rr")}
    ratio = {c: (lambda v: "—" if v is None else f"{v:.3f}") for c in ("entry_ndcg@10", "session_ndcg@10", "entry_rr", "session_rr")}
    cost = runs.group_by("strategy", "window", "engine", "level", "l3").agg(
        pl.col("records").mean(), pl.col("bytes").mean(), pl.col("seconds_per_10k").median(),
        pl.col("query_p50_ms").median(), pl.col("query_p95_ms").median()).sort("strategy", "window")
    strategies = sorted(table["strategy"].unique().to_list())
    return [
        "",
        "### Recall strategies: retrieval (k = 10, their own index over the replay's sessions)",
        "",
        "Each item asked in each wording of the strategy's recall index after the run; evidence is the entries that "
        "state it (session id, entry id). MRR columns are the mean reciprocal rank (`entry_rr`, `session_rr`); the "
        "aggregation column is the share of a set's evidence in the top 10; `false_positive_rate` is the share of "
        "absent-fact questions whose top hit is some planted item's evidence (the ranking, before any abstention); "
        "`false_positive_shown_rate` the share whose packet, after the strategy's abstention test (`min_coverage`), "
        "still names the subject beside a value (what the strategy would show; the rule of `absent_abstained`); "
        "`abstained_rate` the share of questions with evidence the test answered with nothing; `answerable_1024` "
        "judges the 1,024-token recall packet by the measurement's rules.",
        "",
        markdown_table(table.select(shown), {**percent, **ratio, "window": lambda v: f"{v:,}"}),
        "",
        "Index built afresh from the logs (seconds per 10k records, size) and query latency (median over seeds):",
        "",
        markdown_table(cost, {"records": lambda v: f"{v:,.0f}", "bytes": lambda v: f"{v / 2**20:.1f} MiB",
                              "seconds_per_10k": lambda v: f"{v:.2f}", "query_p50_ms": lambda v: f"{v:.2f}",
                              "query_p95_ms": lambda v: f"{v:.2f}", "window": lambda v: f"{v:,}"}),
        "",
        "Target of the recall issue (the context's 1,024-token packet, as for every strategy above):",
        "",
        markdown_table(recall_targets(summary, strategies),
                       {"measured": lambda v: f"{v * 100:.1f}%"}),
    ]
