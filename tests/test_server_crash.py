"""A server strategy's server SIGKILLed mid-append by the crash job, restarted, and judged (real processes).

Skipped where PostgreSQL's server binaries are missing (the harness skips those strategies with a
note then: see tests/test_report_folders.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from aptmem.errors import ServiceUnavailable
from experiments.core.strategy import load_strategy, services_started
from experiments.measurements.crash.job import run_crash
from experiments.measurements.crash.settings import CrashSettings
from experiments.workloads.synthetic import WorkloadConfig
from strategies.postgres_server import find_bin_dir

try:
    find_bin_dir()
except ServiceUnavailable as exc:
    pytest.skip(str(exc), allow_module_level=True)


def test_server_kills_are_cases_judged_against_the_promise(tmp_path: Path) -> None:
    seed = 11
    settings = CrashSettings(kills=0, compaction_kills=0, images=0, server_kills=2, entries=60, seed=seed)
    live: dict[str, object] = {}
    skipped: list[object] = []
    specs = [load_strategy("postgres_sync_on"), load_strategy("postgres_sync_off")]
    # the server's scratch folder in the system's temp folder, as in a run: its unprivileged user must reach it
    with services_started(specs, skipped=skipped, live=live) as ready:  # type: ignore[arg-type]
        assert not skipped and len({id(s) for s in live.values()}) == 1, f"one server for both settings: {skipped}"
        tables = run_crash(ready, settings, WorkloadConfig(seed=seed), tmp_path / "run", tmp=str(tmp_path),
                           services=live)  # type: ignore[arg-type]
    server = tables["recovery"].filter(pl.col("crash_kind") == "server")
    assert server.group_by("strategy").len().sort("strategy").rows() == [("postgres_sync_off", 2), ("postgres_sync_on", 2)], \
        f"seed {seed}"
    assert server["loadable"].all(), f"seed {seed}: PostgreSQL replays its WAL after a kill"
    on = server.filter(pl.col("strategy") == "postgres_sync_on")
    # synchronous_commit=on: an acknowledged commit is in the flushed WAL, so a server kill loses none of it
    assert on["lost"].sum() == 0 and not on["violation"].any(), f"seed {seed}: {on.select('note', 'lost').rows()}"
    # the kill comes within 4 ms of the append after a seeded acknowledgement (15..45); the writer waits for the
    # parent's step after each acknowledgement, so however loaded the machine it cannot finish first
    assert server["acknowledged"].min() >= 15 and (server["acknowledged"] < 60).all(), f"seed {seed}: the kill lands mid-run"
    assert server["note"].str.contains("it saw").all(), f"seed {seed}: every writer lost its server: {server['note'].to_list()}"
    assert not server["violation"].any(), f"seed {seed}: sync_off promises only what a process crash keeps"


def test_a_served_strategy_without_its_service_is_noted_not_crashed(tmp_path: Path) -> None:
    settings = CrashSettings(kills=0, compaction_kills=0, images=0, server_kills=1, entries=20, seed=3)
    tables = run_crash([load_strategy("postgres_sync_on")], settings, WorkloadConfig(seed=3), tmp_path / "run",
                       tmp=str(tmp_path))
    assert tables["recovery"].filter(pl.col("crash_kind") == "server").height == 0
    import msgspec

    notes = msgspec.json.decode((tmp_path / "run" / "crash_notes.json").read_bytes())
    assert any(n["strategy"] == "postgres_sync_on" and n["crash_kind"] == "server" for n in notes["not_simulated"])
