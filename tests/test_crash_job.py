"""The crash job: a small real run (schema, row counts, promises kept), the byte-level power-loss
model built deterministically, the judge's rules, and the report section rebuilt from the
stored tables alone. No timing assertions: the machine is shared and noisy."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from aptmem.entries import encode_line
from aptmem.fsutil import atomic_write, fsync_dir
from aptmem.jsonl_store import JsonlStore
from experiments.core.crashsim.fs_model import FileImage, FsModel
from experiments.core.crashsim.images import write_image
from experiments.core.crashsim.judge import allowed_loss, compare, judge
from experiments.core.crashsim.recovery import RecoveryOutcome, digest, recover_case
from experiments.core.strategy import load_strategy
from experiments.measurements.crash.job import RECOVERY_SCHEMA, planned_cases, power_how, read_tables, run_crash
from experiments.measurements.crash.power_loss import build_image, splice_middle, wal_state
from experiments.measurements.crash.report import crash_section
from experiments.measurements.crash.settings import CrashSettings
from experiments.workloads.synthetic import WorkloadConfig, generate

SID = "5c1d7a4e-3b2f-4e6a-8d9c-0a1b2c3d4e5f"
NAMES = [load_strategy("jsonl_always"), load_strategy("full_json_in_place")]
SMALL = CrashSettings(kills=2, compaction_kills=1, images=1)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small real run over jsonl_always and full_json_in_place (2 kills + 1 in a compaction, 1 image per kind)."""
    out = tmp_path_factory.mktemp("crash-run")
    done: list[int] = []
    run_crash(NAMES, SMALL, WorkloadConfig(seed=0), out, tmp=str(tmp_path_factory.mktemp("scratch")), progress=done.append)
    assert sum(done) == planned_cases(NAMES, SMALL)
    return out


@pytest.fixture(scope="module")
def table(run_dir: Path) -> pl.DataFrame:
    """The run's recovery table, read back from parquet."""
    return pl.read_parquet(run_dir / "recovery.parquet")


def test_schema_and_row_counts(table: pl.DataFrame, run_dir: Path) -> None:
    assert table.schema == pl.Schema(RECOVERY_SCHEMA)
    counts = dict(((s, k), n) for s, k, n in table.group_by("strategy", "crash_kind").agg(pl.len()).iter_rows())
    # process: 2 append kills + 1 compaction kill; power loss: 1 image x 4 damage kinds x (4 modes | 1 mode).
    assert counts == {("jsonl_always", "process"): 3, ("jsonl_always", "power_loss"): 16,
                      ("full_json_in_place", "process"): 3, ("full_json_in_place", "power_loss"): 4}
    assert table.height == planned_cases(NAMES, SMALL) == 26
    jsonl_power = table.filter((pl.col("strategy") == "jsonl_always") & (pl.col("crash_kind") == "power_loss"))
    assert sorted(jsonl_power.select("damage", "mode").unique().rows()) == sorted(
        (d, m) for d in ("torn", "zero", "drop", "middle") for m in ("strict", "truncate_tail", "point_in_time", "skip"))
    assert set(table.filter(pl.col("crash_kind") == "process")["mode"]) == {"skip", "strict"}  # each default mode
    assert table.filter(pl.col("crash_kind") == "process")["damage"].null_count() == 6
    assert (table["invented"] == 0).all() and (table["recovery_ns"] > 0).all()
    assert table.select(pl.col("seed").unique(), pl.col("workload").unique()).rows() == [(0, "synthetic")]
    assert (run_dir / "recovery.csv").exists()
    _, notes = read_tables(run_dir)
    assert notes["commit"] and notes["machine"] and notes["settings"]["kills"] == 2
    assert set(notes["strategies"]) == {s.name for s in NAMES}


def test_jsonl_always_keeps_its_promise(table: pl.DataFrame) -> None:
    jsonl = table.filter(pl.col("strategy") == "jsonl_always")
    assert not jsonl["violation"].any()
    assert set(jsonl.select("durable", "durability").rows()) == {(True, "per_append")}
    process = jsonl.filter(pl.col("crash_kind") == "process")
    assert process["loadable"].all() and (process["lost"] == 0).all() and (process["allowed_loss"] == 0).all()
    # Power loss: nothing acknowledged is lost in any mode that repairs a torn tail (strict refuses, by contract).
    power = jsonl.filter((pl.col("crash_kind") == "power_loss") & pl.col("damage").is_in(["torn", "zero", "drop"]))
    repaired = power.filter(pl.col("mode") != "strict")
    assert repaired["loadable"].all() and (repaired["lost"] == 0).all()
    assert (repaired["recovered"] >= repaired["acknowledged"]).all()
    middle = jsonl.filter(pl.col("damage") == "middle")
    assert middle.filter(pl.col("mode") == "skip")["lost"].to_list() == [0]
    assert middle["allowed_loss"].null_count() == 4  # foreign damage: outside every promise


def test_full_json_in_place_is_judged_against_no_promise(table: pl.DataFrame) -> None:
    in_place = table.filter(pl.col("strategy") == "full_json_in_place")
    assert set(in_place["durability"]) == {"none"} and in_place["allowed_loss"].null_count() == in_place.height
    assert not in_place["violation"].any()
    # Never synced, not even its name: after any simulated power loss the session is gone.
    power = in_place.filter((pl.col("crash_kind") == "power_loss") & (pl.col("damage") != "middle"))
    assert not power["loadable"].any() and (power["lost"] == power["acknowledged"]).all()


def test_section_renders_from_stored_tables_alone(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("recovery.parquet", "crash_notes.json"):
        shutil.copy(run_dir / name, copy / name)
    text = crash_section(copy)
    assert text is not None and text.startswith("## Crash recovery")
    for heading in ("By crash kind and durability class", "jsonl power-loss images by recovery mode",
                    "What was modelled, not traced", "Violations"):
        assert heading in text
    assert "full_json_in_place" in text and "jsonl_always" in text
    assert (copy / "figures" / "recovery_outcomes.png").stat().st_size > 10_000
    assert crash_section(tmp_path / "empty") is None


# -- the power-loss model, built deterministically --------------------------------------------


def _lines(n: int) -> tuple[list[str], list[bytes]]:
    entries = generate(WorkloadConfig(max_entries=n, seed=3)).entries
    return [digest(e) for e in entries], [encode_line(e) for e in entries]


def _recover(root: Path, mode: str = "skip") -> RecoveryOutcome:
    return recover_case(load_strategy("jsonl_none").in_mode(mode), SID, str(root), mode)


@pytest.mark.parametrize("synced", [0, 4, 9])
def test_drop_loses_exactly_the_unsynced_tail(synced: int, tmp_path: Path) -> None:
    digests, lines = _lines(12)
    log = f"{SID}.jsonl"
    files = {log: FileImage(current=b"".join(lines), durable=b"".join(lines[:synced]))}
    write_image(tmp_path / "drop", build_image(files, "drop", random.Random(1), target=log))
    outcome = _recover(tmp_path / "drop")
    assert outcome.loadable and outcome.recovered == digests[:synced]
    assert compare(digests, 12, outcome.recovered) == (12 - synced, 0)
    for damage in ("torn", "zero"):  # part of the tail may survive, never less than the synced part
        write_image(tmp_path / damage, build_image(files, damage, random.Random(2), target=log))
        got = _recover(tmp_path / damage)
        assert got.loadable and got.recovered == digests[: len(got.recovered)]
        assert synced <= len(got.recovered) < 12


def test_jsonl_sync_none_traced_loses_what_followed_the_last_sync(tmp_path: Path) -> None:
    """The file-system model, installed in this process: 5 appends, an explicit fsync, 3 more."""
    digests, _ = _lines(8)
    entries = generate(WorkloadConfig(max_entries=8, seed=3)).entries
    root = tmp_path / "root"
    model = FsModel(root)
    root.mkdir()
    model.install()
    try:
        store = JsonlStore(root, sync="none")
        store.create(SID)  # create() fsyncs the folder: the name is durable, no data yet
        for entry in entries[:5]:
            store.append(SID, entry)
        fd = os.open(store.path(SID), os.O_RDONLY)
        os.fsync(fd)  # a sync point: the first five lines are now durable
        os.close(fd)
        for entry in entries[5:]:
            store.append(SID, entry)
        files = model.snapshot()
        store.close()
    finally:
        model.uninstall()
    log = files[f"{SID}.jsonl"]
    assert log.current is not None and log.durable == log.current[: len(log.durable or b"")]
    write_image(tmp_path / "image", build_image(files, "drop", random.Random(0), target=f"{SID}.jsonl"))
    outcome = _recover(tmp_path / "image")
    assert outcome.recovered == digests[:5]
    verdict = judge(intended=digests, acked=8, recovered=outcome.recovered, loadable=True, live_ok=True,
                    durability="process", crash_kind="power_loss", damage="drop", mode="skip", modes_offered=4,
                    unsynced_acked=3)
    assert (verdict.lost, verdict.allowed_loss, verdict.violation) == (3, None, False)


def test_a_rename_is_durable_only_after_the_folder_is_synced(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    model = FsModel(root)
    model.install()
    try:
        atomic_write(root / "doc.json", b"old", sync=True)  # fsyncs the file and the folder
        atomic_write(root / "doc.json", b"new", sync=False)
        before = model.snapshot()["doc.json"]
        fsync_dir(root)
        after = model.snapshot()["doc.json"]
    finally:
        model.uninstall()
    assert (before.current, before.durable) == (b"new", b"old")  # replaced, folder not synced: old on disk
    assert after.durable == b""  # the new file's name is durable now, its data was never synced


def test_splice_middle_damages_one_line_between_good_ones() -> None:
    _, lines = _lines(6)
    data = b"".join(lines)
    spliced = splice_middle(data, random.Random(5))
    assert len(spliced) > len(data) and spliced.count(b"\n") == data.count(b"\n") + 1
    assert spliced.startswith(lines[0]) and spliced.endswith(lines[-1])
    assert all(line in spliced for line in lines)  # no good line is touched


# -- the judge and the models ------------------------------------------------------------------


def test_compare_counts_losses_and_inventions_in_order() -> None:
    intended = ["a", "b", "c", "d", "e"]
    assert compare(intended, 4, ["a", "b", "c", "d", "e"]) == (0, 0)  # the in-flight entry made it too
    assert compare(intended, 4, ["a", "c"]) == (2, 0)
    assert compare(intended, 4, ["a", "x", "c", "b"]) == (2, 2)  # made up, and out of order
    assert compare(intended, 0, []) == (0, 0)


def test_promises() -> None:
    assert allowed_loss("per_append", "power_loss", "torn", 0) == 0
    assert allowed_loss("batch", "power_loss", "drop", 7) == 7
    assert allowed_loss("process", "power_loss", "drop", None) is None
    assert allowed_loss("process", "process", None, None) == 0
    assert allowed_loss("none", "process", None, None) is None
    assert allowed_loss("per_append", "power_loss", "middle", 0) is None
    common = {"intended": ["a", "b"], "acked": 2, "live_ok": None, "crash_kind": "power_loss", "damage": "torn",
              "modes_offered": 4, "unsynced_acked": 0}
    refused = judge(recovered=None, loadable=False, durability="per_append", mode="strict", **common)
    assert (refused.lost, refused.violation) == (2, False)  # strict refuses by contract; nothing changed
    broken = judge(recovered=None, loadable=False, durability="per_append", mode="skip", **common)
    assert broken.violation and "allows 0" in broken.reason
    assert judge(recovered=["a", "z"], loadable=True, durability="none", mode="strict", **common).violation


def test_power_models_are_the_strategies_own_and_settings_are_checked() -> None:
    assert load_strategy("jsonl_none").power_loss.model == "trace" and load_strategy("jsonl_none").power_loss.lines
    assert load_strategy("sqlite_wal_full").power_loss.region == "last_commit"
    assert load_strategy("sqlite_wal_off").power_loss.caveat
    assert load_strategy("sqlite_delete_off").power_loss.model == "none"
    assert power_how(load_strategy("full_json_atomic").power_loss).startswith("the writer's os.open")  # the trace model's words
    assert power_how(load_strategy("sqlite_delete_off").power_loss) == load_strategy("sqlite_delete_off").power_loss.reason
    for bad in ({"damages": ["melted"]}, {"modes": ["lenient"]}, {"kills": -1}, {"persist": "rewrite"}):
        with pytest.raises(ValueError):
            CrashSettings(**bad)  # type: ignore[arg-type]


def test_wal_state_finds_the_current_generation(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (x)")
    for i in range(5):
        conn.execute("INSERT INTO t VALUES (?)", (i,))
    data = (tmp_path / "db-wal").read_bytes()
    state = wal_state(data)
    conn.close()
    assert state.salts is not None and state.commits == 6 and state.end == len(data)
    assert wal_state(data[: state.end - 10]).commits == 5  # a torn last frame is not a commit
    assert wal_state(None).end == 0


@pytest.mark.parametrize("sync, durable", [("always", True), ("batch", True), ("none", False)])
def test_a_log_created_by_its_first_append_has_a_durable_name(sync: str, durable: bool, tmp_path: Path) -> None:
    """With a sync policy, a session created implicitly by ``append`` survives a power loss (its
    folder is fsynced when the log is created); without one, nothing is promised."""
    entries = generate(WorkloadConfig(max_entries=3, seed=3)).entries
    root = tmp_path / "root"
    root.mkdir()
    model = FsModel(root)
    model.install()
    try:
        store = JsonlStore(root, sync=sync)
        for entry in entries:
            store.append(SID, entry)
        store.close()
        log = model.snapshot()[f"{SID}.jsonl"]
    finally:
        model.uninstall()
    assert (log.durable is not None) is durable
    if sync == "always":
        assert log.durable == log.current
