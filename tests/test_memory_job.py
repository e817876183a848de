"""The memory job: its table (schema, row counts, values), its correctness check, and its report section.

No timing assertions: the run is tiny and the machine shared; only shapes and invariants are checked.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import polars as pl
import pytest

from aptmem.store import select_live
from experiments.core.strategy import build_store, load_strategy
from experiments.measurements.memory.job import MEMORY_SCHEMA, OPS, _check, planned_measurements, read_tables, run_memory
from experiments.measurements.memory.report import memory_section, memory_summary
from experiments.measurements.memory.settings import MemorySettings
from experiments.measurements.memory.store_child import ReadJob, StoreResult, run
from experiments.report.page import build_report
from experiments.workloads.resume import ResumeSession
from experiments.workloads.synthetic import WorkloadConfig

NAMES = ["jsonl_none", "sqlite_wal_normal", "full_json_atomic"]
SPECS = [load_strategy(name) for name in NAMES]
SIZES = [0.2, 0.5]
# full_json only at 0.2 MB: the cap is part of what is tested.
SETTINGS = MemorySettings(sizes_mb=SIZES, repeats=1, trace=True, keep_turns=2, tail_entries=5, whole_read_max_mb=0.3)
SEED = 11


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, int]:
    """One run of the job on tiny sessions: (run folder, memory table, progress calls)."""
    out = tmp_path_factory.mktemp("memory-run")
    calls: list[int] = []
    tables = run_memory(SPECS, SETTINGS, WorkloadConfig(seed=SEED), out, progress=calls.append)
    return out, tables["memory"], sum(calls)


def test_table_schema_and_exact_row_counts(job: tuple[Path, pl.DataFrame, int]) -> None:
    out, memory, progressed = job
    assert memory.schema == pl.Schema(MEMORY_SCHEMA)
    # (jsonl, sqlite at both sizes) + (full_json at the smaller) = 5 cells; 2 ops; 1 timed + 1 traced run.
    cells = 2 * len(SIZES) + 1
    assert memory.height == cells * len(OPS) * 2
    assert memory.filter(pl.col("strategy") == "full_json_atomic")["size_mb"].unique().to_list() == [0.2]
    counts = memory.group_by("strategy", "size_mb", "op", "run").len()
    assert counts["len"].to_list() == [1] * counts.height
    # Every child counted once: a verify per cell, then the timed and traced runs.
    assert progressed == planned_measurements(SPECS, SETTINGS) == cells * (1 + len(OPS) * 2)
    stored, notes = read_tables(out)
    assert stored["memory"].equals(memory)
    assert pl.read_csv(out / "memory.csv").height == memory.height
    assert notes["checked"] == cells and notes["capped"] == [{"strategy": "full_json_atomic", "size_mb": 0.5}]
    assert notes["commit"] == memory["commit"][0] and notes["seed"] == SEED


def test_values_are_positive_and_consistent(job: tuple[Path, pl.DataFrame, int]) -> None:
    out, memory, _ = job
    assert (memory["seed"] == SEED).all() and (memory["workload"] == "synthetic").all()
    for column in ("wall_ns", "open_ns", "entries", "session_bytes", "bytes_on_disk", "files_bytes", "rss_before_bytes"):
        assert (memory[column] > 0).all(), column
    assert (memory["peak_rss_bytes"] >= memory["rss_before_bytes"]).all()
    assert (memory["wall_ns"] >= memory["open_ns"]).all()
    # tracemalloc figures only on the traced runs.
    assert memory.filter(pl.col("run") == "traced")["traced_peak_bytes"].is_not_null().all()
    assert memory.filter(pl.col("run") == "timed")["traced_peak_bytes"].is_null().all()
    # The same session went into every store: same bytes and entries per size.
    per_size = memory.group_by("size_mb").agg(pl.col("session_bytes").n_unique(), pl.col("entries").n_unique())
    assert (per_size["session_bytes"] == 1).all() and (per_size["entries"] == 1).all()
    # full load streamed everything; resume returned the live context only, which skips history.
    full = memory.filter(pl.col("op") == "full_load")
    assert (full["entries_read"] == full["entries"]).all() and full["live_entries"].is_null().all()
    resume = memory.filter(pl.col("op") == "resume")
    assert (resume["live_entries"] < resume["entries"]).all()
    _, notes = read_tables(out)
    live = {s["size_mb"]: s["live_entries"] for s in notes["sessions"]}
    assert all(row["live_entries"] == live[row["size_mb"]] for row in resume.iter_rows(named=True))
    # JSONL and full JSON store the session's bytes (plus the array's brackets and commas).
    jsonl = memory.filter(pl.col("family") == "jsonl")
    assert (jsonl["bytes_on_disk"] == jsonl["session_bytes"]).all()


def test_verify_child_checks_read_live_against_select_live(tmp_path: Path) -> None:
    source = ResumeSession(150_000, workload=WorkloadConfig(seed=SEED), keep_turns=2, tail_entries=3)
    entries = [entry for entry, _ in source]
    sid = "3f2c9a8e-1b7d-4c6e-9a2b-5d8f0e1c2b3a"
    spec = load_strategy("sqlite_wal_off")
    store = build_store(spec, tmp_path)
    store.replace(sid, entries)
    store.close()
    got = run("verify", ReadJob(store=spec.store, root=str(tmp_path), session_id=sid))
    assert got.verified and got.entries_read == len(entries) == source.info.entries
    assert got.live_entries == len(select_live(entries)) == source.info.live_entries < len(entries)
    # And the parent refuses a child that read something else.
    _check("sqlite_wal_off", 0.15, source.info, got)
    wrong = msgspec.structs.replace(got, op="resume", entries_read=got.live_entries - 1, live_entries=got.live_entries - 1)
    with pytest.raises(RuntimeError, match="resume"):
        _check("sqlite_wal_off", 0.15, source.info, wrong)
    with pytest.raises(RuntimeError, match="verified False"):
        _check("sqlite_wal_off", 0.15, source.info, msgspec.structs.replace(got, verified=False))
    assert isinstance(got, StoreResult)


def test_section_rebuilds_from_the_stored_tables_alone(job: tuple[Path, pl.DataFrame, int], tmp_path: Path) -> None:
    out, memory, _ = job
    assert memory_section(tmp_path) is None  # no memory table: no section
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("memory.parquet", "memory_notes.json"):  # the tables only: no CSV, no figures
        shutil.copy(out / name, run_dir / name)
    text = memory_section(run_dir)
    assert text is not None and text.startswith("## Load time, resume time and memory")
    for name in NAMES:
        assert f"| {name} |" in text
    for figure in ("load_time.png", "peak_memory.png"):
        assert (run_dir / "figures" / figure).stat().st_size > 0 and f"figures/{figure}" in text
    shutil.rmtree(run_dir / "figures")
    report = build_report(run_dir).read_text(encoding="utf-8")
    assert "## Load time, resume time and memory" in report and (run_dir / "figures" / "load_time.png").exists()


def test_summary_one_row_per_strategy_and_size(job: tuple[Path, pl.DataFrame, int]) -> None:
    _, memory, _ = job
    summary = memory_summary(memory)
    assert summary.height == 2 * len(SIZES) + 1
    assert summary["strategy"].unique(maintain_order=True).to_list() == NAMES  # the run's order
    assert (summary["speedup"] > 0).all() and summary["full_load_heap_mb"].is_not_null().all()
    assert (summary["full_load_runs"] == 1).all() and (summary["resume_runs"] == 1).all()


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        MemorySettings(sizes_mb=[])
    with pytest.raises(ValueError):
        MemorySettings(repeats=0)
    # A subset that names none of the run's strategies measures all of them, not none.
    everything = MemorySettings(sizes_mb=[1.0], repeats=2, trace=False, strategies=["nope"])
    assert planned_measurements(SPECS, everything) == len(NAMES) * (1 + len(OPS) * 2)
    only = MemorySettings(sizes_mb=[1.0], repeats=2, trace=False, strategies=["jsonl_none"])
    assert planned_measurements(SPECS, only) == 1 + len(OPS) * 2
