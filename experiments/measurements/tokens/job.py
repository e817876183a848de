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
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from aptmem.errors import TokenizerUnavailable
from aptmem.tokens import Estimator, get_estimator
from experiments.core.runfolder import read_measurement, write_measurement
from experiments.core.runinfo import run_metadata
from experiments.measurements.tokens.accuracy import (
    accuracy_table,
    goals,
    speed_table,
    summarize_accuracy,
    summarize_growth,
    summarize_speed,
    tally_growth,
)
from experiments.measurements.tokens.corpus import TOKEN_KINDS, real_samples, token_corpus
from experiments.workloads.synthetic import generate

__all__ = ["RAW_TABLES", "TABLES", "TokensSettings", "build_estimator", "parse_spec", "planned_steps", "read_tables",
           "run_tokens", "summaries"]

RAW_TABLES = ("tokens", "token_speed", "token_growth")
TABLES = (*RAW_TABLES, "tokens_summary", "token_speed_summary", "token_growth_summary", "token_goals")


def _default_estimators() -> list[str]:
    return ["rough:bytes", "rough:chars", "medium", "precise:cl100k_base"]


@dataclass(kw_only=True)
class TokensSettings:
    """How token estimates are scored (a plain dataclass: also the Hydra schema of ``tokens``)."""

    #: texts per content kind in the scored corpus (experiments/measurements/tokens/corpus.py)
    per_kind: int = 300
    #: content kinds scored; the goals are checked on each (english, chinese, code, json, logs, mixed)
    kinds: list[str] = field(default_factory=lambda: list(TOKEN_KINDS))
    #: median size of a corpus text, in UTF-8 bytes (sizes are lognormal, 16 B .. max_bytes)
    median_bytes: int = 600
    #: largest corpus text, in UTF-8 bytes
    max_bytes: int = 32 * 1024
    #: estimators compared: rough:bytes (bytes/4), rough:chars (chars/4), medium, precise:<tokenizer>
    #: (precise:cl100k_base, precise:tekken, ...); a precise one other than the reference that
    #: cannot load offline is left out, with a note in the report
    estimators: list[str] = field(default_factory=_default_estimators)
    #: the tokenizer whose exact counts every estimate is scored against; also the speed baseline
    reference: str = "cl100k_base"
    #: timed passes of every estimator over every kind's texts (speed-ups are medians over passes)
    repeats: int = 7
    #: entries of the session whose appends time the running tally; 0 skips the growth check
    growth_entries: int = 2000
    #: estimators of the growth check: the cheap tiers, which a session runs on every append
    growth_estimators: list[str] = field(default_factory=lambda: ["rough:bytes", "medium"])
    #: also score real text of this Python installation (kinds real_*; not part of the goals)
    real_text: bool = False
    #: corpus, session and shuffle seed; the shipped medium constants were fitted on seed 0, so 1 is held out
    seed: int = 1

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(TOKEN_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"kinds must be a non-empty subset of {', '.join(TOKEN_KINDS)}; unknown: {sorted(unknown)}")
        if self.per_kind < 1 or self.repeats < 1 or self.growth_entries < 0:
            raise ValueError("per_kind and repeats must be >= 1, growth_entries >= 0")
        if self.growth_entries and self.growth_entries < 2:
            raise ValueError("growth_entries must be 0 (skip) or at least 2")
        for spec in (*self.estimators, *self.growth_estimators):
            parse_spec(spec)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split an estimator spec ``tier[:option]`` into (tier, option); raise ValueError if it names none."""
    tier, _, option = spec.partition(":")
    if tier not in ("rough", "medium", "precise"):
        raise ValueError(f"unknown estimator {spec!r}: use rough:bytes, rough:chars, medium or precise:<tokenizer>")
    if tier == "rough" and option not in ("", "bytes", "chars"):
        raise ValueError(f"unknown rough unit in {spec!r}: bytes or chars")
    if tier == "medium" and option:
        raise ValueError(f"medium takes no option: {spec!r}")
    return tier, option or None


def build_estimator(spec: str) -> Estimator:
    """The estimator a spec names: ``rough:bytes``, ``rough:chars``, ``medium``, ``precise:<tokenizer>``."""
    tier, option = parse_spec(spec)
    if tier == "rough":
        return get_estimator("rough", unit=option or "bytes")
    if tier == "medium":
        return get_estimator("medium")
    return get_estimator("precise", option)


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
    out: Path,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Score and time every estimator of ``settings``; write the tables to ``out``; return them."""
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
    meta = run_metadata()
    stamp = [pl.lit(settings.seed).cast(pl.Int64).alias("seed"), pl.lit(meta["commit"]).alias("commit"),
             pl.lit(meta["machine"]).alias("machine")]
    tables = {"tokens": acc.with_columns(stamp), "token_speed": speed.with_columns(stamp),
              "token_growth": growth.with_columns(stamp)}
    tables.update(summaries(tables, baseline=reference.name, kinds=settings.kinds))
    notes_doc = {
        "seed": settings.seed, "per_kind": settings.per_kind, "kinds": list(settings.kinds),
        "median_bytes": settings.median_bytes, "max_bytes": settings.max_bytes, "repeats": settings.repeats,
        "reference": reference.tokenizer, "baseline": reference.name, "estimators": [e.name for e in estimators],
        "real_text": settings.real_text, "growth_entries": settings.growth_entries, "left_out": notes,
        "commit": meta["commit"], "machine": meta["machine"],
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 2),
    }
    return write_measurement(out, tables, "tokens", notes_doc)


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
