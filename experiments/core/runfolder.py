"""What a measurement leaves in its run folder: its tables and its notes, stamped with the run's commit and machine.

Every table is written twice: parquet, which ``python -m experiments report`` rebuilds the
report from, and CSV, for people and spreadsheets. The notes (``<measure>_notes.json``) hold
what the tables do not: the settings, the commit and machine, how long it took. The commit and
the machine are found once per run (:meth:`RunMeta.current`) and carried by the
:class:`RunFolder` every measurement writes through.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from experiments.core.runinfo import commit, machine

__all__ = ["LEADING_COLUMNS", "STRATEGIES_SCHEMA", "RunFolder", "RunMeta", "is_run_folder", "is_sweep_folder",
           "read_measurement",
           "read_table", "write_strategies"]


#: The leading columns of a table about strategies (the values: ``StrategySpec.columns()``).
LEADING_COLUMNS: dict[str, pl.DataType] = {
    "strategy": pl.String(),  # config name, e.g. jsonl_none
    "family": pl.String(),  # the strategy config's family
    "variant": pl.String(),  # the store's settings, "key=value;..." in config order
    "durable": pl.Boolean(),  # the config's promise: acknowledged appends survive a power loss
}


class RunMeta(msgspec.Struct, frozen=True, kw_only=True):
    """Where a run's figures came from: the checked-out commit (``+dirty`` with changes) and the machine."""

    commit: str
    machine: str

    @classmethod
    def current(cls) -> RunMeta:
        """This checkout's commit and this machine."""
        return cls(commit=commit(), machine=machine())

    def columns(self) -> list[pl.Expr]:
        """``commit`` and ``machine`` as literal columns, to stamp on every row of a table."""
        return [pl.lit(self.commit).alias("commit"), pl.lit(self.machine).alias("machine")]


class RunFolder:
    """A run's output folder and its :class:`RunMeta`, which every note written here carries."""

    def __init__(self, path: str | os.PathLike[str], meta: RunMeta | None = None) -> None:
        self.path = Path(path)
        self.meta = meta or RunMeta.current()

    @classmethod
    def of(cls, out: str | os.PathLike[str] | RunFolder) -> RunFolder:
        """``out`` itself, or a run folder at that path (stamped with this checkout and machine)."""
        return out if isinstance(out, RunFolder) else cls(out)

    def write(self, notes_name: str, tables: Mapping[str, pl.DataFrame], notes: Mapping[str, Any]) -> dict[str, pl.DataFrame]:
        """Write each table as ``<name>.parquet`` and ``<name>.csv`` and the notes (with the run's commit and
        machine) as ``<notes_name>_notes.json``; return the tables."""
        self.path.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            table.write_parquet(self.path / f"{name}.parquet")
            table.write_csv(self.path / f"{name}.csv")
        doc = {**notes, "commit": self.meta.commit, "machine": self.meta.machine}
        (self.path / f"{notes_name}_notes.json").write_bytes(msgspec.json.format(msgspec.json.encode(doc)))
        return dict(tables)


#: The columns of the ``strategies`` table: every strategy the run was given, measured or skipped.
STRATEGIES_SCHEMA: dict[str, pl.DataType] = {
    **LEADING_COLUMNS,
    "served": pl.Boolean(),  # it needs a service (a database server) the run started
    "data_in": pl.String(),  # root | server: where its session data lives
    "quadratic_appends": pl.Boolean(),  # every append rewrites its whole history
    "whole_reads": pl.Boolean(),  # every read parses its whole session
    "skipped": pl.Boolean(),  # left out of the run: its service cannot be had here
    "reason": pl.String(),  # why it was skipped (null when measured)
}


def write_strategies(folder: RunFolder, measured: Iterable[Any], skipped: Iterable[Any]) -> None:
    """Write the ``strategies`` table: each measured ``StrategySpec`` and each ``Skipped`` one, with the reason."""
    rows = [{**spec.columns(), "served": spec.service is not None, "data_in": spec.data_in,
             "quadratic_appends": spec.quadratic_appends, "whole_reads": spec.whole_reads, "skipped": False,
             "reason": None} for spec in measured]
    rows += [{"strategy": gone.strategy, "family": gone.family, "variant": None, "durable": None, "served": True,
              "data_in": None, "quadratic_appends": None, "whole_reads": None, "skipped": True, "reason": gone.reason}
             for gone in skipped]
    folder.write("run", {"strategies": pl.DataFrame(rows, schema=STRATEGIES_SCHEMA)}, {})


def is_run_folder(path: str | Path) -> bool:
    """Whether ``path`` holds what a run writes: the notes of at least one measurement."""
    path = Path(path)
    return path.is_dir() and any(path.glob("*_notes.json"))


def is_sweep_folder(path: str | Path) -> bool:
    """Whether ``path`` is a Hydra multirun's folder (its ``multirun.yaml``, a subfolder per job)."""
    return (Path(path) / "multirun.yaml").is_file()


def read_table(run_dir: str | Path, name: str) -> pl.DataFrame | None:
    """A stored table of a run folder, or None when the run did not write it."""
    path = Path(run_dir) / f"{name}.parquet"
    return pl.read_parquet(path) if path.exists() else None


def read_measurement(run_dir: str | Path, table_names: Iterable[str],
                     notes_name: str) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """The tables (from parquet) and the notes a measurement wrote into ``run_dir``."""
    run_dir = Path(run_dir)
    tables = {name: pl.read_parquet(run_dir / f"{name}.parquet") for name in table_names}
    return tables, msgspec.json.decode((run_dir / f"{notes_name}_notes.json").read_bytes())
