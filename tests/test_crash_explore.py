"""The crash-state explorer: exact state counts on hand-built operation logs, the POSIX rules
(unsynced writes dropped or reordered, an unsynced rename undone), the recorders (FsModel and
the strace parser) against the files really left, real strategies judged against their own
promise, and the report section rebuilt from the stored tables alone. No timing assertions."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from experiments.core.crashsim.fs_model import FsModel
from experiments.core.crashsim.images import write_image
from experiments.core.crashsim.oplog import Creat, DirSync, OpLog, Rename, Sync, Unlink, Write, replay
from experiments.core.crashsim.recovery import RecoveryOutcome, digest
from experiments.core.strategy import load_strategy
from experiments.gate.metrics import collect_metrics
from experiments.measurements.crash_explore.check import Expectation, judge_state, promised_version, recover_state
from experiments.measurements.crash_explore.child import record_in_fork
from experiments.measurements.crash_explore.job import STATES_SCHEMA, _units, read_tables, run_crash_explore
from experiments.measurements.crash_explore.protocol import ExploreUnit, OperationJob, UnitResult
from experiments.measurements.crash_explore.report import crash_explore_section
from experiments.measurements.crash_explore.settings import CrashExploreSettings
from experiments.measurements.crash_explore.states import Limits, StateSpec, choose, enumerate_states, materialize, torn_positions
from experiments.measurements.crash_explore.strace import parse_trace, strace_problem
from experiments.measurements.crash_explore.unit import check_log, explore_unit
from experiments.workloads.synthetic import WorkloadConfig, generate
from strategies.full_json import FullJsonStore

SID = "5c1d7a4e-3b2f-4e6a-8d9c-0a1b2c3d4e5f"
EVERY_BYTE = Limits(torn_max=10_000, max_subsets=10_000, seed="t")
NO_STRACE = strace_problem()


def _tiny() -> OpLog:
    """A log file holding one line, then two appends and an fdatasync (a batch of two)."""
    return OpLog(names={"s.jsonl": 0}, contents={0: b"a\n"},
                 ops=[Write(0, 2, b"bb\n"), Write(0, 5, b"ccc\n"), Sync(0, 3)], acked_before=[0, 1, 2], acked=3)


def test_two_appends_and_a_sync_give_exactly_the_states_worked_out_by_hand() -> None:
    # Crash points 0..3. prefix: one each (4). torn / torn_zero: after write 1 (3 bytes: torn at 1, 2)
    # and after write 2 (4 bytes: at 1, 2, 3): 5 each. zero: each write pending at a point: 1 at
    # point 1, 2 at point 2 (3). Subsets of the pending writes, the whole set left out: point 1
    # {} ; point 2 {}, {w1} (dropped: the earliest ones) and {w2} (reordered): 3 dropped, 1 reordered.
    # After the sync nothing is pending: point 3 has its prefix state only.
    specs = list(enumerate_states(_tiny(), EVERY_BYTE))
    assert Counter(s.kind for s in specs) == {"prefix": 4, "torn": 5, "torn_zero": 5, "zero": 3, "dropped": 3,
                                              "reordered": 1}
    assert len(specs) == 21 and Counter(s.point for s in specs)[3] == 1
    files = {(s.kind, s.point, s.dropped, s.altered): materialize(_tiny(), s)["s.jsonl"] for s in specs}
    assert files[("prefix", 3, (), None)] == b"a\nbb\nccc\n"
    assert files[("reordered", 2, (0,), None)] == b"a\n\0\0\0ccc\n"  # the hole reads as NUL bytes
    assert files[("dropped", 2, (1,), None)] == b"a\nbb\n"
    assert files[("torn", 2, (), (1, "torn", 2))] == b"a\nbb\ncc"
    assert files[("torn_zero", 2, (), (1, "torn_zero", 1))] == b"a\nbb\nc\0\0\0"
    assert files[("zero", 2, (), (0, "zero", 0))] == b"a\n\0\0\0ccc\n"


def test_torn_bytes_are_sampled_with_a_seed_past_the_limit() -> None:
    assert torn_positions(5, 10, random.Random(0)) == [1, 2, 3, 4]
    a, b = (torn_positions(4096, 16, random.Random("s")) for _ in range(2))
    assert a == b and len(a) == 16 and a == sorted(a) and 0 < a[0] and a[-1] < 4096
    limited = Counter(s.kind for s in enumerate_states(_tiny(), Limits(torn_max=1, max_subsets=1, seed="t")))
    assert limited["torn"] == 2 and limited["dropped"] + limited["reordered"] == 2  # one subset per pending point


def test_a_budget_gives_torn_writes_half_and_the_other_states_the_rest() -> None:
    specs = list(enumerate_states(_tiny(), EVERY_BYTE))  # 10 torn, 11 others
    torn = [s for s in specs if s.kind in ("torn", "torn_zero")]
    for budget, torn_kept in ((20, 10), (14, 7), (6, 3)):
        chosen = choose(specs, budget, random.Random(0))
        assert len(chosen) == budget and [s for s in specs if s in chosen] == chosen  # in enumeration order
        assert sum(s in torn for s in chosen) == torn_kept
    assert choose(specs, 0, random.Random(0)) == specs == choose(specs, 21, random.Random(0))
    assert choose(specs, 14, random.Random(1)) == choose(specs, 14, random.Random(1))


def _atomic_replace(dir_sync: bool) -> OpLog:
    """temp file, write, fsync, rename over the session, (fsync of the folder), then the acknowledgement."""
    ops = [Creat(".s.json.tmp", 1), Write(1, 0, b"[new]"), Sync(1, 1), Rename(".s.json.tmp", "s.json")]
    ops += [DirSync()] if dir_sync else []
    return OpLog(names={"s.json": 0}, contents={0: b"[old]"}, ops=ops, acked_before=[0] * len(ops), acked=1)


def test_an_unsynced_rename_is_undone_and_a_folder_fsync_makes_it_stay() -> None:
    log = _atomic_replace(dir_sync=True)
    assert log.pending(4) == ([], [0, 3])  # the write is synced; the create and the rename are not yet
    undone = [s for s in enumerate_states(log, EVERY_BYTE) if s.point == 4 and s.kind == "undone"]
    assert [s.dropped for s in undone] == [(0, 3), (3,)]  # names survive in order: none, or the create only
    assert [materialize(log, s) for s in undone] == [{"s.json": b"[old]"}, {".s.json.tmp": b"[new]", "s.json": b"[old]"}]
    assert [s.kind for s in enumerate_states(log, EVERY_BYTE) if s.point == 5] == ["prefix"]


def test_a_rename_undone_after_the_acknowledgement_is_a_lost_durable_entry(tmp_path: Path) -> None:
    """A hand-built state: the session file's rename undone by a power loss after the append returned
    (a store that skips the folder fsync). Recovered by the real full_json store, judged per_append."""
    store = FullJsonStore(tmp_path / "before", variant="atomic")
    entries = generate(WorkloadConfig(seed=3, max_entries=3)).entries
    old, new = entries[:2], entries[2:3]
    for entry in old:
        store.append(SID, entry)
    store.close()
    log = _atomic_replace(dir_sync=False)
    spec = StateSpec(4, "undone", dropped=(3,))  # the rename did not reach the disk
    image = {name.replace("s.json", f"{SID}.json"): data for name, data in materialize(log, spec).items()}
    image[f"{SID}.json"] = (tmp_path / "before" / f"{SID}.json").read_bytes()
    write_image(tmp_path / "state", image)
    result = recover_state(load_strategy("full_json_atomic").store, SID, str(tmp_path / "state"), "strict", 10)
    pairs = [(digest(e), e.id) for e in old]
    exp = Expectation.build("append", "per_append", pairs, pairs + [(digest(e), e.id) for e in new],
                            [(digest(e), e.id) for e in new], 1)
    outcome = judge_state(exp, result, acked=1, synced=3, mode="strict")
    assert outcome.loadable and outcome.matched == "old" and outcome.violations == ("lost_durable",)
    assert judge_state(exp, result, acked=0, synced=3, mode="strict").violations == ()  # before the acknowledgement


def test_promises_per_durability_class() -> None:
    def exp(durability: str, operation: str = "append") -> Expectation:
        return Expectation(operation, durability, ((), ("a",), ("a", "b")), frozenset(), 10, 2, 1)

    assert promised_version(exp("per_append"), acked=1, synced=10) == 1
    assert promised_version(exp("batch"), acked=2, synced=10) == 0  # nothing synced since the session before
    assert promised_version(exp("batch"), acked=2, synced=11) == 1
    assert promised_version(exp("batch"), acked=3, synced=10) == 2  # closed: the close synced
    assert promised_version(exp("process"), acked=3, synced=12) is None
    assert promised_version(exp("none", "compaction_append"), acked=2, synced=12) is None
    assert promised_version(exp("per_append", "compaction_rewrite"), acked=1, synced=0) == 1


def test_a_compaction_amid_appends_has_a_version_per_acknowledgement_and_holds_each() -> None:
    """Versions: the old session growing by the writer's first half, then the compacted session growing
    by its second half. Once the compaction is acknowledged the old file coming back loses it; an
    append after it that went to the replaced file (a stale descriptor) is lost too."""
    old = [("o1", "O1"), ("o2", "O2"), ("k", "K")]
    intended = [("a1", "A1"), ("a2", "A2"), ("b1", "B1"), ("b2", "B2")]
    compacted = [("c", None), ("k", "K"), ("a1", "A1"), ("a2", "A2")]
    exp = Expectation.build("compaction_amid_appends", "per_append", old, compacted + intended[2:], intended, 1)
    assert exp.versions == (("o1", "o2", "k"), ("o1", "o2", "k", "a1"), ("o1", "o2", "k", "a1", "a2"),
                            ("c", "k", "a1", "a2"), ("c", "k", "a1", "a2", "b1"), ("c", "k", "a1", "a2", "b1", "b2"))

    def judged(recovered: list[str], acked: int) -> tuple[str, ...]:
        outcome = judge_state(exp, RecoveryOutcome(mode="strict", loadable=True, live_ok=True, recovered=recovered,
                                                   ids=[None] * len(recovered)), acked=acked, synced=0, mode="strict")
        return outcome.violations

    assert judged(["o1", "o2", "k", "a1", "a2"], acked=2) == ()  # before the compaction returned
    assert judged(["o1", "o2", "k", "a1", "a2"], acked=3) == ("lost_durable",)  # the compaction was acknowledged
    assert judged(["c", "k", "a1", "a2", "b1"], acked=4) == ()
    assert judged(["o1", "o2", "k", "a1", "a2", "b1"], acked=4) == ("lost_durable", "mixed_compaction")  # b1 went to the replaced file
    assert judged(["c", "k", "a1", "a2", "b1"], acked=5) == ("lost_durable",)


def test_mixed_compaction_altered_and_invented_are_told_apart() -> None:
    exp = Expectation("compaction_rewrite", "none", (("o1", "o2", "k"), ("c", "k2")), frozenset({"O1", "O2", "K", "C"}), 3, 0, 1)
    def ok(recovered: list[str], ids: list[str | None]) -> RecoveryOutcome:
        return RecoveryOutcome(mode="strict", loadable=True, live_ok=True, recovered=recovered, ids=ids)

    assert judge_state(exp, ok(["c", "k2"], ["C", "K"]), acked=0, synced=0, mode="strict").violations == ()
    assert judge_state(exp, ok(["o1", "c", "k2"], ["O1", "C", "K"]), acked=0, synced=0,
                       mode="strict").violations == ("mixed_compaction",)
    assert judge_state(exp, ok(["o1", "o2", "x"], ["O1", "O2", "K"]), acked=0, synced=0,
                       mode="strict").violations == ("altered",)
    assert judge_state(exp, ok(["o1", "o2", "k", "y"], ["O1", "O2", "K", "new"]), acked=0,
                       synced=0, mode="strict").violations == ("invented",)


def test_the_fs_model_records_every_call_and_replays_to_the_files_left(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "old").write_bytes(b"0123456789")
    model = FsModel(root)
    model.install()
    try:
        log = model.start_log()
        fd = os.open(root / "log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.write(fd, b"one\n")
        os.write(fd, b"two\n")
        os.fdatasync(fd)
        os.close(fd)
        fd = os.open(root / "old", os.O_RDWR)
        os.pwrite(fd, b"AB", 3)
        os.ftruncate(fd, 8)
        os.close(fd)
        os.truncate(root / "old", 6)
        os.rename(root / "log", root / "moved")
        os.unlink(root / "moved")
        dfd = os.open(root, os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
    finally:
        model.uninstall()
    kinds = [type(op).__name__ for op in log.ops]
    assert kinds == ["Creat", "Write", "Write", "Sync", "Write", "Trunc", "Trunc", "Rename", "Unlink", "DirSync"]
    assert log.ops[2] == Write(log.names.get("log", 1), 4, b"two\n")
    check_log(log, {"old": (root / "old").read_bytes()})
    assert replay(log) == {"old": b"012AB5"}


def test_the_strace_parser_reads_calls_marks_and_names() -> None:
    root, marks = "/r", "/m"

    def s(text: str) -> str:
        return '"' + "".join(f"\\x{b:02x}" for b in text.encode()) + '"'

    trace = [
        f"openat(-100, {s('/r/db')}, 0x80042, 0644) = 3",
        f"pwrite64(3, {s('HEAD')}, 4, 0) = 4",
        f"openat(-100, {s('/m/begin')}, 0x80000) = -1 ENOENT (No such file or directory)",
        f"openat(-100, {s('/m/handed-5')}, 0x80000) = -1 ENOENT (No such file or directory)",
        f"openat(-100, {s('/r/db-wal')}, 0x80042, 0644) = 4",
        f"openat(-100, {s('/r/db-shm')}, 0x80042, 0644) = 5",
        f"pwrite64(5, {s('x')}, 1, 100) = 1",
        f"pwrite64(4, {s('frame')}, 5, 32) = 5",
        "fdatasync(4)                            = 0",
        f"openat(-100, {s('/r')}, 0x80000) = 6",
        "fdatasync(6)                            = 0",
        f"openat(-100, {s('/m/ack')}, 0x80000) = -1 ENOENT (No such file or directory)",
        "lseek(3, 2, 0)                          = 2",
        f"write(3, {s('xy')}, 2) = 2",
        f"unlink({s('/r/db-wal')}) = 0",
        f"openat(-100, {s('/m/end')}, 0x80000) = -1 ENOENT (No such file or directory)",
        f"pwrite64(3, {s('late')}, 4, 0) = 4",
    ]
    log = parse_trace(trace, root, marks, {"db": b"HEAD"})
    db, wal = log.names["db"], 1
    assert log.ops == [Creat("db-wal", wal), Write(wal, 32, b"frame"), Sync(wal, 5), DirSync(), Write(db, 2, b"xy"),
                       Unlink("db-wal")]
    assert log.acked_before == [0, 0, 0, 0, 1, 1] and log.acked == 1
    assert replay(log) == {"db": b"HExy"}


def _unit(base: Path, strategy: str, operation: str, **overrides: object) -> ExploreUnit:
    """One unit of the job, small: 8 entries before (12 for a compaction: two turns, so the one
    it keeps leaves something to summarize), 2 appended, few torn bytes and subsets."""
    fields = {"entries": 12 if operation.startswith("compaction") else 8, "appends": 2, "torn_max": 6, "max_subsets": 6, "modes": ["skip", "point_in_time"], **overrides}
    settings = CrashExploreSettings(operations=[operation], **fields)  # type: ignore[arg-type]
    units, _, _ = _units([load_strategy(strategy)], settings, WorkloadConfig(seed=0), Path(os.path.realpath(base)), None)
    return units[0]


def _totals(result: UnitResult) -> Counter:
    total: Counter = Counter()
    for row in result.rows:
        total.update({k: v for k, v in row.items() if isinstance(v, int)})
    return total


@pytest.mark.parametrize("operation", ["append", "compaction_append", "compaction_rewrite", "compaction_amid_appends"])
def test_jsonl_always_keeps_its_promise_in_every_crash_state(operation: str, tmp_path: Path) -> None:
    result = explore_unit(_unit(tmp_path, "jsonl_always", operation))
    total = _totals(result)
    assert total["states"] > 20 and total["violations"] == 0
    assert total["states_lossy"] == 0  # every acknowledged entry survives every power loss
    kinds = {row["kind"] for row in result.rows}
    assert {"prefix", "torn", "torn_zero", "zero", "dropped"} <= kinds
    if operation in ("compaction_rewrite", "compaction_amid_appends"):  # temp file, fsync, rename, folder fsync: the rename can be undone
        assert "undone" in kinds and result.info["op_kinds"]["rename"] == 1


def test_full_json_in_place_loses_the_whole_session_on_a_torn_rewrite(tmp_path: Path) -> None:
    unit = _unit(tmp_path, "full_json_in_place", "append")
    result = explore_unit(unit)
    torn = [row for row in result.rows if row["kind"] == "torn"]
    assert sum(r["states_unloadable"] for r in torn) == sum(r["states"] for r in torn) > 0
    assert _totals(result)["violations"] == 0  # its promise is none: expected, not a violation
    # Held to a durable store's promise, the same states are violations: the checker sees the failure.
    recording = record_in_fork(OperationJob(unit=unit, root=str(tmp_path / "writer")), 60)
    assert recording.log is not None
    exp = Expectation.build("append", "per_append", recording.old, recording.new, recording.intended, 1)
    torn_specs = [s for s in enumerate_states(recording.log, Limits(4, 4, "t")) if s.kind == "torn"]
    verdicts = set()
    for spec in torn_specs:
        write_image(tmp_path / "state", dict(materialize(recording.log, spec)))
        result_state = recover_state(unit.strategy.store, unit.session_id, str(tmp_path / "state"), "strict", 10)
        verdicts |= set(judge_state(exp, result_state, acked=recording.log.acked_at(spec.point), synced=0,
                                    mode="strict").violations)
        for path in (tmp_path / "state").iterdir():
            path.unlink()
    assert verdicts == {"not_loadable"}


@pytest.mark.skipif(NO_STRACE is not None, reason=f"strace unavailable: {NO_STRACE}")
def test_sqlite_durable_settings_keep_their_promise_and_delete_full_loses_a_commit_to_an_undone_unlink(
        tmp_path: Path) -> None:
    wal = explore_unit(_unit(tmp_path, "sqlite_wal_full", "append", max_states=80))
    assert _totals(wal)["states"] == 80 and _totals(wal)["violations"] == 0
    delete = explore_unit(_unit(tmp_path, "sqlite_delete_full", "compaction_append", torn_max=2, max_subsets=2,
                                max_states=0))
    # SQLite commits a DELETE-mode transaction by unlinking its journal without syncing the
    # folder (synchronous=EXTRA does): a power loss can bring the journal back, and it rolls the
    # acknowledged commit back. So DELETE + FULL promises only what survives a process crash, and
    # the loss is reported, not counted as a broken promise.
    lost = [e for e in delete.examples if e["kind"] == "undone" and "unlink sessions.sqlite3-journal" in e["detail"]]
    assert lost and not any(e["violation"] for e in delete.examples)
    extra = explore_unit(_unit(tmp_path, "sqlite_delete_extra", "compaction_append", torn_max=2, max_subsets=2,
                               max_states=0))
    assert _totals(extra)["states"] > 0 and _totals(extra)["violations"] == 0


def test_the_job_writes_its_tables_and_the_section_renders_from_them_alone(tmp_path: Path) -> None:
    settings = CrashExploreSettings(operations=["append", "compaction_rewrite"], entries=8, appends=1, torn_max=3,
                                    max_subsets=4, max_states=30, modes=["skip"], workers=1, strace=False)
    done: list[int] = []
    run_crash_explore([load_strategy(n) for n in ("jsonl_always", "full_json_in_place", "sqlite_wal_full")], settings,
                      WorkloadConfig(seed=0),
                      tmp_path / "run", progress=done.append)
    assert sum(done) == 6
    for name in ("crash_states", "crash_state_examples"):
        assert (tmp_path / "run" / f"{name}.parquet").exists() and (tmp_path / "run" / f"{name}.csv").exists()
    tables, notes = read_tables(tmp_path / "run")
    df = tables["crash_states"]
    assert df.schema == pl.Schema(STATES_SCHEMA)
    assert set(df["strategy"]) == {"jsonl_always", "full_json_in_place"}
    assert notes["skipped"] == [{"strategy": "sqlite_wal_full", "reason": "crash_explore.strace is false"}]
    assert (df["states"] <= df["enumerated"]).all() and df["commit"].null_count() == 0
    section = crash_explore_section(tmp_path / "run")
    assert section is not None and "## Crash states explored" in section and "full_json_in_place" in section
    assert "Expected failures of the baselines" in section and "Not explored" in section
    assert (tmp_path / "run" / "figures" / "crash_states.png").exists()
    metrics = collect_metrics(tmp_path / "run")
    assert metrics["crash_explore.jsonl_always.violations"].value == 0
    assert crash_explore_section(tmp_path) is None  # a run without the tables has no section


def test_sqlite_recover_reports_an_index_that_disagrees_with_its_table(tmp_path: Path) -> None:
    """Found by the explorer (synchronous=OFF, a power loss mid-checkpoint): the compaction index left
    without the row its table has. PRAGMA quick_check does not compare indexes with tables, so
    recover() called the database loadable and read_live served the context from before the
    compaction; integrity_check reports the damage."""
    import sqlite3

    from aptmem.entries import Compaction
    from aptmem.store import select_live
    from strategies.sqlite import SqliteStore

    entries = generate(WorkloadConfig(seed=1, max_entries=3)).entries
    compaction = Compaction(summary="s", first_kept=entries[-1].id, ts=1, id="c1")
    for name, history in (("before", entries), ("after", [*entries, compaction])):
        store = SqliteStore(tmp_path / name, journal_mode="DELETE", synchronous="FULL")
        for entry in history:
            store.append(SID, entry)
        store.close()
    pages = []
    for name in ("before", "after"):
        with sqlite3.connect(tmp_path / name / "sessions.sqlite3") as conn:
            pages.append(conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries_compactions'").fetchone()[0])
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.close()
    assert pages[0] == pages[1]
    offset = (pages[0] - 1) * size
    with open(tmp_path / "before" / "sessions.sqlite3", "rb") as src:
        src.seek(offset)
        stale = src.read(size)
    with open(tmp_path / "after" / "sessions.sqlite3", "r+b") as dst:  # the index page as it was before
        dst.seek(offset)
        dst.write(stale)
    store = SqliteStore(tmp_path / "after", journal_mode="DELETE", synchronous="FULL")
    try:
        history = list(store.iter_entries(SID))
        assert [e.id for e in store.read_live(SID)] != [e.id for e in select_live(history)]  # the harm
        report = store.recover(SID)
        assert not report.loadable and any("missing from index entries_compactions" in r for r in report.damage_reasons)
    finally:
        store.close()
