"""The token-estimate figures the regression gate holds: error per tier and kind, and speed-ups measured side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["tokens_metrics"]


def tokens_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per cheap estimator and content kind: its error against the reference; per estimator: its speed-up."""
    summary = read_table(run_dir, "tokens_summary")
    if summary is not None:
        for row in summary.filter(pl.col("tier") != "precise").iter_rows(named=True):
            # (A precise tokenizer scored against the reference is a fixed fact about two
            # vocabularies, not something code can regress.) Estimates are deterministic for a corpus seed: half a percentage point is a real change.
            yield Metric(f"tokens.{row['estimator']}.{row['kind']}.mape_pct", row["mape_pct"], "lower", 0.5, relative=False)
    speed = read_table(run_dir, "token_speed_summary")
    if speed is not None:
        for row in speed.filter(pl.col("kind") == "all").iter_rows(named=True):
            if row["speedup_vs_baseline"] is not None and not row["estimator"].startswith(("tiktoken:", "hf:", "mistral:")):
                yield Metric(f"tokens.{row['estimator']}.speedup", row["speedup_vs_baseline"], "higher", 0.5)
