"""Concurrency safety, measured with real processes: locked and transactional stores lose nothing."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from aptmem.entries import decode_line
from experiments.measurements.concurrency.job import run_concurrency
from experiments.measurements.concurrency.settings import ConcurrencySettings
from experiments.measurements.concurrency.modes import analyse_log, entry_line, measure_log_mode, measure_sidecar_mode
from experiments.measurements.concurrency.report import concurrency_section
from experiments.core.strategy import load_strategy
from experiments.gate.metrics import collect_metrics

SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"


def test_writers_at_once_lose_nothing_with_a_lock_or_a_transaction(tmp_path: Path) -> None:
    settings = ConcurrencySettings(writers=3, appends=20, cli_appends=30, max_bytes_per_writer=2_000_000, sidecar_sets=5)
    tables = run_concurrency([load_strategy(n) for n in ("jsonl_none", "sqlite_wal_normal", "full_json_atomic")], settings, tmp_path)
    table = tables["concurrency"]
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

    modes = tables["concurrency_modes"]
    assert (tmp_path / "concurrency_modes.parquet").exists() and (tmp_path / "concurrency_modes.csv").exists()
    assert modes.height == 3 * 2 + 2  # three log modes at two sizes, two sidecar modes
    for row in modes.filter(pl.col("mode") == "lock").iter_rows(named=True):
        assert row["writers_failed"] == 0, row
        assert row["acknowledged"] == row["expected"] == row["found"], row
        assert (row["lost"], row["duplicated"], row["damaged_lines"], row["interleaved_lines"]) == (0, 0, 0, 0), row
    for row in modes.iter_rows(named=True):
        assert row["found"] + row["lost"] == row["acknowledged"], row
    large = modes.filter((pl.col("target") == "log") & (pl.col("line_bytes") == 1_000_000))
    assert set(large["per_writer"]) == {2}, "large lines are capped by max_bytes_per_writer"

    text = concurrency_section(tmp_path)
    assert text is not None and "| jsonl_none |" in text
    assert "### Through the command line" in text and "### The working-memory sidecar" in text
    assert "python -m aptmem append --root DIR SESSION_ID" in text
    assert concurrency_section(tmp_path / "elsewhere") is None
    metrics = collect_metrics(tmp_path)
    assert metrics["concurrency_modes.log.lock.1000000.lost"].value == 0
    assert metrics["concurrency_modes.sidecar.lock.lost"].tolerance == 0
    assert not any(name.startswith("concurrency_modes.log.no_lock") for name in metrics), "unlocked runs are not gated"


def test_the_analysis_tells_interleaved_lines_from_torn_ones(tmp_path: Path) -> None:
    """A synthetic log: whole lines, one line holding two writers' pieces, one lone fragment."""
    a0, a1, b0 = entry_line(0, 0, 200), entry_line(0, 1, 200), entry_line(1, 0, 200)
    path = tmp_path / "log.jsonl"
    path.write_bytes(a0 + a1[:90] + b0 + a1[90:] + entry_line(1, 1, 200)[:50] + b"\n")
    outcome = analyse_log(path, [2, 2])
    # a1's head glued to b0 is one interleaved line (b0 lost with it); a1's tail and b1's head are torn.
    assert outcome["damaged_lines"] == 3 and outcome["interleaved_lines"] == 1
    assert outcome["found"] == 1 and outcome["lost"] == 3 and outcome["duplicated"] == 0


def test_entry_lines_are_the_size_asked_and_decode(tmp_path: Path) -> None:
    for size in (100, 1000, 1_000_000):
        line = entry_line(3, 7, size)
        assert len(line) == size and line.endswith(b"\n")
        entry = decode_line(line[:-1])
        assert entry.id == "w3-7" and "<w3-7>" in entry.content  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["lock", "no_lock", "buffered"])
def test_one_writer_alone_never_damages_a_line(tmp_path: Path, mode: str) -> None:
    """Damage in the table comes from other writers, not from the writer itself."""
    outcome = measure_log_mode(mode, tmp_path, SID, writers=1, appends=30, size=3000, buffer_bytes=512, timeout=60)
    assert (outcome["acknowledged"], outcome["found"], outcome["lost"], outcome["damaged_lines"]) == (30, 30, 0, 0)
    assert outcome["writers_failed"] == 0 and outcome["error"] is None


def test_the_sidecar_with_its_lock_keeps_every_key(tmp_path: Path) -> None:
    outcome = measure_sidecar_mode("lock", tmp_path, SID, writers=3, sets=8, timeout=60)
    assert (outcome["acknowledged"], outcome["found"], outcome["lost"]) == (24, 24, 0)


def test_settings_refuse_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="sideways"):
        ConcurrencySettings(modes=["lock", "sideways"])
