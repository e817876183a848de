"""The token-estimate job: every tier against the reference tokenizer, per content kind, plus speed.

It reuses the measurement functions of :mod:`experiments.measurements.tokens.accuracy` on the seeded corpus of
:mod:`experiments.measurements.tokens.corpus` and writes tidy tables only, as parquet and CSV, plus
``tokens_notes.json``; :mod:`experiments.measurements.tokens.report` builds the report section from those
files alone. Tables:

* ``tokens``: one row per (text, estimator): the estimate beside the reference's exact count;
* ``token_speed``: one row per (repeat, kind, estimator): nanoseconds to count the kind's texts;
* ``token_growth``: one row per (append, estimator) of ``ContextTally.add`` over a long session,
  beside counting the same entry alone (the running total must not slow appends down);
* ``tokens_summary``, ``token_speed_summary``, ``token_growth_summary``, ``token_goals``: what
  :func:`summaries` derives from the three above (stored for ``experiments check``; the report
  recomputes them from the raw tables).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from aptmem.errors import TokenizerUnavailable
from aptmem.tokens import Estimator, get_estimator
from aptmem.tokens.tiers import build_estimator
from experiments.core.runfolder import RunFolder, read_measurement
from experiments.measurements.tokens.accuracy import (
    accuracy_table,
    goals,
    speed_table,
    summarize_accuracy,
    summarize_growth,
    summarize_speed,
    tally_growth,
)
from experiments.measurements.tokens.corpus import real_samples, token_corpus
from experiments.measurements.tokens.settings import TokensSettings
from experiments.workloads.synthetic import generate

__all__ = ["RAW_TABLES", "TABLES", "planned_steps", "read_tables", "run_tokens", "summaries"]

RAW_TABLES = ("tokens", "token_speed", "token_growth")
TABLES = (*RAW_TABLES, "tokens_summary", "token_speed_summary", "token_growth_summary", "token_goals")


def planned_steps(settings: TokensSettings) -> int:
    """How many progress steps :func:`run_tokens` reports (for a progress bar)."""
    return 3 + (len(settings.growth_estimators) if settings.growth_entries else 0)


def _estimators(settings: TokensSettings) -> tuple[Estimator, list[Estimator], list[str]]:
    """The reference, the estimators to compare (the reference among them), and notes on any left out."""
    reference = get_estimator("precise", settings.reference)  # no reference, no measurement: let it raise
    compared: list[Estimator] = []
    notes: list[str] = []
    for spec in settings.estimators:
        try:
            est = build_estimator(spec)
        except TokenizerUnavailable as exc:
            notes.append(f"{spec} left out: {exc}")
            continue
        if all(e.name != est.name for e in compared):
            compared.append(est)
    if all(e.name != reference.name for e in compared):
        compared.append(reference)  # the speed baseline is always timed beside the others
    return reference, compared, notes


def run_tokens(
    settings: TokensSettings,
    out: Path | RunFolder,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Score and time every estimator of ``settings``; write the tables to ``out``; return them."""
    folder = RunFolder.of(out)
    tick = progress or (lambda n: None)
    started = time.perf_counter_ns()
    reference, estimators, notes = _estimators(settings)
    corpus = token_corpus(settings.seed, settings.per_kind, kinds=settings.kinds,
                          median_bytes=settings.median_bytes, max_bytes=settings.max_bytes)
    samples = corpus + (real_samples() if settings.real_text else [])
    exact = [reference.count(s.text) for s in samples]
    tick(1)
    acc = accuracy_table(estimators, samples, exact).with_columns(pl.lit(reference.tokenizer).alias("reference"))
    tick(1)
    speed = speed_table(estimators, corpus, repeats=settings.repeats, seed=settings.seed)
    who = pl.DataFrame({"estimator": [e.name for e in estimators], "tier": [e.tier for e in estimators],
                        "tokenizer": [e.tokenizer for e in estimators]})
    speed = speed.join(who, on="estimator", how="left").select(
        "repeat", "kind", "estimator", "tier", "tokenizer", "ns", "chars", "texts")
    tick(1)
    growth_parts = []
    if settings.growth_entries:
        entries = generate(max_entries=settings.growth_entries, seed=settings.seed).entries
        for spec in settings.growth_estimators:
            est = build_estimator(spec)
            growth_parts.append(tally_growth(est, entries).with_columns(pl.lit(est.tier).alias("tier")))
            tick(1)
    growth = pl.concat(growth_parts) if growth_parts else _empty_growth()
    stamp = [pl.lit(settings.seed).cast(pl.Int64).alias("seed"), *folder.meta.columns()]
    tables = {"tokens": acc.with_columns(stamp), "token_speed": speed.with_columns(stamp),
              "token_growth": growth.with_columns(stamp)}
    tables.update(summaries(tables, baseline=reference.name, kinds=settings.kinds))
    notes_doc = {
        "seed": settings.seed, "per_kind": settings.per_kind, "kinds": list(settings.kinds),
        "median_bytes": settings.median_bytes, "max_bytes": settings.max_bytes, "repeats": settings.repeats,
        "reference": reference.tokenizer, "baseline": reference.name, "estimators": [e.name for e in estimators],
        "real_text": settings.real_text, "growth_entries": settings.growth_entries, "left_out": notes,
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 2),
    }
    return folder.write("tokens", tables, notes_doc)


def _empty_growth() -> pl.DataFrame:
    return pl.DataFrame(schema={"append": pl.Int64, "ns": pl.Int64, "bare_ns": pl.Int64, "chars": pl.Int64,
                                "tokens": pl.Int64, "total": pl.Int64, "estimator": pl.String, "tier": pl.String})


def summaries(tables: dict[str, pl.DataFrame], *, baseline: str, kinds: Sequence[str]) -> dict[str, pl.DataFrame]:
    """The derived tables, from the raw ones alone: accuracy and speed per estimator and kind,
    tally growth, and the goals (medium MAPE <= 10% on every kind of ``kinds``, >= 10x faster
    than ``baseline``)."""
    acc_summary = summarize_accuracy(tables["tokens"])
    speed_summary = summarize_speed(tables["token_speed"].select("repeat", "kind", "estimator", "ns", "chars", "texts"),
                                    baseline)
    growth = tables["token_growth"]
    if growth.height:
        n = int(growth["append"].max())
        growth_summary = summarize_growth(growth.select("append", "ns", "bare_ns", "chars", "tokens", "total", "estimator"),
                                          window=max(1, min(500, n // 2)))
    else:
        growth_summary = pl.DataFrame(schema={"estimator": pl.String, "growth": pl.Float64})
    return {"tokens_summary": acc_summary, "token_speed_summary": speed_summary,
            "token_growth_summary": growth_summary, "token_goals": goals(acc_summary, speed_summary, kinds)}


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, object]]:
    """Read a run folder's raw token tables and notes back (the summaries are recomputed, not read)."""
    return read_measurement(run_dir, RAW_TABLES, "tokens")
