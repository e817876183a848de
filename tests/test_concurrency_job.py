"""Concurrency safety, measured with real processes: locked and transactional stores lose nothing."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.concurrency_job import ConcurrencySettings, run_concurrency
from experiments.concurrency_report import concurrency_section


def test_writers_at_once_lose_nothing_with_a_lock_or_a_transaction(tmp_path: Path) -> None:
    settings = ConcurrencySettings(writers=3, appends=20)
    table = run_concurrency(["jsonl_none", "sqlite_wal_normal", "full_json_atomic"], settings, tmp_path)["concurrency"]
    assert (tmp_path / "concurrency.parquet").exists() and (tmp_path / "concurrency.csv").exists()
    rows = {r["strategy"]: r for r in table.iter_rows(named=True)}
    for safe in ("jsonl_none", "sqlite_wal_normal"):
        row = rows[safe]
        assert row["multi_process_safe"] is True
        assert (row["acknowledged"], row["found"], row["lost"], row["duplicated"], row["damaged_lines"]) == (60, 60, 0, 0, 0)
        assert row["writers_failed"] == 0 and row["loadable"] is True
    unsafe = rows["full_json_atomic"]
    assert unsafe["multi_process_safe"] is False
    # Each writer rewrites the whole array from its own copy: the survivors are at most one
    # writer's worth plus whatever it had read; in any case lost + found == acknowledged.
    assert unsafe["found"] + unsafe["lost"] == unsafe["acknowledged"]
    text = concurrency_section(tmp_path)
    assert text is not None and "| jsonl_none |" in text
    assert concurrency_section(tmp_path / "elsewhere") is None
    assert pl.read_parquet(tmp_path / "concurrency.parquet").height == 3
