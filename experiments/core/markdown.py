"""Render small polars tables as GitHub markdown (polars has no markdown writer of its own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

__all__ = ["markdown_table"]


def _default(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value).replace("|", "\\|")


def markdown_table(df: pl.DataFrame, formats: Mapping[str, Callable[[Any], str]] | None = None,
                   headers: Mapping[str, str] | None = None) -> str:
    """Return ``df`` as a markdown table; ``formats`` maps a column to a formatter, ``headers`` renames."""
    formats = formats or {}
    headers = headers or {}
    cols = df.columns
    lines = ["| " + " | ".join(headers.get(c, c) for c in cols) + " |",
             "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.iter_rows(named=True):
        cells = []
        for c in cols:
            value = row[c]
            cells.append("—" if value is None else formats.get(c, _default)(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
