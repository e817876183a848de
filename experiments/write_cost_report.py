"""Markdown tables of the write-cost summary and goals, built from the tables alone."""

from __future__ import annotations

import polars as pl

from experiments.markdown import markdown_table

__all__ = ["summary_markdown", "goals_markdown"]


def _us(ns: float) -> str:
    return f"{ns / 1000:,.1f}" if ns < 100_000_000 else f"{ns / 1e6:,.0f} ms"


def _x(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio < 100 else f"{ratio:,.0f}x"


def summary_markdown(summary: pl.DataFrame) -> str:
    """The per-strategy table: percentiles in microseconds, ratios to the raw baselines, growth."""
    table = summary.select(
        "strategy", "durability", "entries", "p50_ns", "p90_ns", "p99_ns", "max_ns", "raw_write_p50_ns",
        "ratio_raw_write", "paired_ratio_raw_write", "encode_p50_ns", "ratio_encode_raw_write",
        "raw_fdatasync_p50_ns", "ratio_raw_fdatasync",
        pl.format("{} vs {}", "early_window", "late_window").alias("windows"), "growth", "raw_write_growth",
    )
    us = {c: _us for c in ("p50_ns", "p90_ns", "p99_ns", "max_ns", "raw_write_p50_ns", "raw_fdatasync_p50_ns", "encode_p50_ns")}
    xs = {c: _x for c in ("ratio_raw_write", "paired_ratio_raw_write", "ratio_encode_raw_write", "ratio_raw_fdatasync",
                          "growth", "raw_write_growth")}
    headers = {
        "p50_ns": "p50 µs", "p90_ns": "p90 µs", "p99_ns": "p99 µs", "max_ns": "max µs",
        "raw_write_p50_ns": "raw write p50 µs", "ratio_raw_write": "p50 / raw write",
        "paired_ratio_raw_write": "paired ratio", "encode_p50_ns": "encode p50 µs",
        "ratio_encode_raw_write": "p50 / (encode + raw write)", "raw_fdatasync_p50_ns": "raw write+fdatasync p50 µs",
        "ratio_raw_fdatasync": "p50 / raw+fdatasync", "windows": "growth windows (entries)",
        "growth": "growth (late p50 / early p50)", "raw_write_growth": "raw write growth",
    }
    return markdown_table(table, {**us, **xs}, headers)


def goals_markdown(goals: pl.DataFrame) -> str:
    """The goals table: value, target and whether it is met."""
    fmt = {"value": _x, "target": lambda t: f"<= {t:g}x", "met": lambda m: "**met**" if m else "**NOT met**"}
    return markdown_table(goals, fmt)
