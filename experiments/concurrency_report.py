"""The concurrency section of the report, from the stored ``concurrency`` table alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.markdown import markdown_table

__all__ = ["concurrency_section"]


def concurrency_section(run_dir: Path) -> str | None:
    """Markdown: per strategy, writers, entries acknowledged, found, lost, damaged lines (None if not measured)."""
    path = run_dir / "concurrency.parquet"
    if not path.exists():
        return None
    table = pl.read_parquet(path)
    first = table.row(0, named=True)
    shown = table.select("strategy", "multi_process_safe", "expected", "acknowledged", "found", "lost", "duplicated",
                         "damaged_lines", "writers_failed", "error").sort("strategy")
    headers = {"multi_process_safe": "declares multi-process safety", "expected": "appends tried",
               "acknowledged": "acknowledged", "found": "found after", "writers_failed": "writers that failed"}
    return "\n".join([
        "## Concurrency safety",
        "",
        f"{first['writers']} processes append {first['appends']} entries each to one session at the same moment "
        "(released together); a fresh reader then counts what survived. `lost` = acknowledged by a writer but "
        "absent afterwards.",
        "",
        markdown_table(shown, headers=headers),
        "",
    ])
