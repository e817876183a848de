"""What a measurement leaves in its run folder: its tables and its notes.

Every table is written twice: parquet, which ``python -m experiments report`` rebuilds the
report from, and CSV, for people and spreadsheets. The notes (``<measure>_notes.json``) hold
what the tables do not: the settings, the commit and machine, how long it took.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

__all__ = ["read_measurement", "write_measurement"]


def write_measurement(out: Path, tables: Mapping[str, pl.DataFrame], notes_name: str,
                      notes: Mapping[str, Any]) -> dict[str, pl.DataFrame]:
    """Write each table as ``<name>.parquet`` and ``<name>.csv`` and the notes as
    ``<notes_name>_notes.json`` into ``out`` (created if absent); return the tables."""
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.write_parquet(out / f"{name}.parquet")
        table.write_csv(out / f"{name}.csv")
    (out / f"{notes_name}_notes.json").write_bytes(msgspec.json.format(msgspec.json.encode(notes)))
    return dict(tables)


def read_measurement(run_dir: str | Path, table_names: Iterable[str],
                     notes_name: str) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """The tables (from parquet) and the notes a measurement wrote into ``run_dir``."""
    run_dir = Path(run_dir)
    tables = {name: pl.read_parquet(run_dir / f"{name}.parquet") for name in table_names}
    return tables, msgspec.json.decode((run_dir / f"{notes_name}_notes.json").read_bytes())
