"""Hostile input: clear errors, and nothing stored lost. One regression test per fix, and the whole harness.

The harness (:mod:`experiments.measurements.hostile.job`) tries every case through the library and the commands;
the tests below pin each behaviour that needed a fix, so a regression names itself.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import polars as pl
import pytest

import aptmem.jsonl_store as jsonl_store_module
from aptmem.cli import one_line
from aptmem.entries import ToolCall, User, encode_line
from aptmem.errors import CorruptMetaError, InvalidEntry, InvalidWorkingValue, StorageError, UnsafePathError
from aptmem.fsutil import ensure_root
from aptmem.jsonl_store import JsonlStore
from aptmem.locking import SessionLock
from aptmem.working_memory import WorkingMemory
from experiments.measurements.hostile.cases import main_in_process, unwritable
from experiments.core.strategy import load_strategy
from experiments.measurements.hostile.job import run_hostile
from experiments.measurements.hostile.report import hostile_section
from experiments.gate.metrics import collect_metrics

SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
ROOT = Path(__file__).resolve().parent.parent
DEEP = 100_000


def _eio(*_args: object) -> None:
    raise OSError(errno.EIO, os.strerror(errno.EIO))


# -- the whole harness ------------------------------------------------------------------------------

def test_every_hostile_case_is_refused_clearly_and_loses_nothing(tmp_path: Path) -> None:
    # the three read paths of aptmem's own families, through their own append (the run gives every strategy)
    stores = [load_strategy(name) for name in ("jsonl_none", "sqlite_wal_full", "full_json_atomic")]
    table = run_hostile(tmp_path, strategies=stores)["hostile"]
    assert table.height > 150 and (tmp_path / "hostile.csv").exists()
    bad = table.filter(~pl.col("as_expected") | ~pl.col("clear") | ~pl.col("intact"))
    assert bad.height == 0, bad.select("category", "case", "surface", "outcome", "error", "note").to_dicts()
    categories = set(table["category"])
    assert {"session id", "symlink", "folder not writable", "disk full", "fsync error", "deep JSON", "long number",
            "file mode"} <= categories
    ids = table.filter(pl.col("category") == "session id")
    assert set(ids["outcome"]) == {"refused"}
    assert {"aptmem append", "aptmem continue", "aptmem compact", "library: WorkingMemory"} <= set(ids["surface"])
    text = hostile_section(tmp_path)
    assert text is not None and text.startswith("## Hostile input") and "Every case behaved as expected" in text
    metrics = collect_metrics(tmp_path)
    assert metrics["hostile.stored_data_lost"].value == 0 and metrics["hostile.not_as_expected"].value == 0


# -- symlinks and folders ----------------------------------------------------------------------------

def test_a_planted_lock_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """Fix: the writer lock is never followed through a link (older filelock truncated and chmodded the target)."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    victim.chmod(0o644)
    root = tmp_path / "root"
    root.mkdir()
    (root / f"{SID}.lock").symlink_to(victim)
    with JsonlStore(root) as store, pytest.raises(UnsafePathError, match="symlink"):
        store.append(SID, User(content="x", ts=1))
    with pytest.raises(UnsafePathError):
        SessionLock(root / f"{SID}.lock").acquire()
    assert victim.read_bytes() == b"precious\n" and (victim.stat().st_mode & 0o777) == 0o644


def test_a_root_that_is_a_file_is_refused_clearly(tmp_path: Path) -> None:
    """Fix: ensure_root said FileExistsError; now UnsafePathError, and a folder it cannot make is a StorageError."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafePathError, match="is not a folder"):
        ensure_root(tmp_path / "file")
    with pytest.raises(StorageError, match="cannot create the sessions folder"):
        ensure_root(tmp_path / "file" / "below")


def test_an_unwritable_folder_gives_storage_errors_naming_the_file(tmp_path: Path) -> None:
    """Fix: raw PermissionErrors from the lock, the open and the rewrite are aptmem's StorageError, naming the file."""
    root = tmp_path / "root"
    with JsonlStore(root) as store:
        store.append(SID, User(content="kept", ts=1, id="k"))
    WorkingMemory(root, SID).create(working={"a": 1})
    before = (root / f"{SID}.jsonl").read_bytes()
    with unwritable(root) as how:
        if not how:
            pytest.skip("cannot make a folder unwritable here")
        with JsonlStore(root) as store:
            with pytest.raises(StorageError, match="1c8f5e6d-3c2a-4d4b-8e9f-8a7b6c5d4e3f"):
                store.append("1c8f5e6d-3c2a-4d4b-8e9f-8a7b6c5d4e3f", User(content="x", ts=1))
            with pytest.raises(StorageError, match="rewrite failed, the session is unchanged"):
                store.replace(SID, [User(content="only", ts=2)])
        with pytest.raises(StorageError, match="writing the sidecar failed, it is unchanged"):
            WorkingMemory(root, SID).set("a", 2)
    assert (root / f"{SID}.jsonl").read_bytes() == before and WorkingMemory(root, SID).get("a") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")
def test_a_user_who_may_not_write_the_folder_gets_a_clear_error() -> None:
    """As root, a forked child that drops to ``nobody`` cannot create a session in root's folder (0755)."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="aptmem-nobody-"))  # not under pytest's 0700 folder: nobody can reach it
    root = base / "root"
    with JsonlStore(root) as store:
        store.append(SID, User(content="warm-up: every lazy import happens as root", ts=1))
    base.chmod(0o755)
    root.chmod(0o755)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.setgid(65534)
            os.setuid(65534)
            with JsonlStore(root) as store:
                store.append("1c8f5e6d-3c2a-4d4b-8e9f-8a7b6c5d4e3f", User(content="x", ts=1))
            message = "ACCEPTED"
        except BaseException as exc:  # noqa: BLE001
            message = f"{type(exc).__name__}: {exc}"
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    shutil.rmtree(base)
    assert message.startswith("StorageError") and "cannot take the lock: Permission denied" in message, message


# -- full disks and fsync errors -----------------------------------------------------------------

@pytest.mark.parametrize("scenario", ["append_disk_full", "compact_rewrite_disk_full", "compact_append_disk_full",
                                      "sidecar_disk_full", "append_fsync_eio", "batch_close_fsync_eio",
                                      "compact_fsync_eio", "sidecar_fsync_eio", "sidecar_big_int_raised_limit",
                                      "entry_big_int_raised_limit"])
def test_process_wide_hazards_are_refused_and_lose_nothing(tmp_path: Path, scenario: str) -> None:
    done = subprocess.run([sys.executable, "-m", "experiments.measurements.hostile.child", scenario, str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["outcome"] == "refused" and result["intact"] is True, result
    assert "not an aptmem error" not in result["note"], result


def test_a_failed_fdatasync_is_fatal_for_the_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = JsonlStore(tmp_path, sync="always")
    store.append(SID, User(content="acknowledged", ts=1, id="a"))
    calls: list[int] = []

    def failing(fd: int) -> None:
        calls.append(fd)
        _eio()

    monkeypatch.setattr(os, "fdatasync", failing)
    with pytest.raises(StorageError, match="fdatasync failed"):
        store.append(SID, User(content="unlucky", ts=2, id="b"))
    monkeypatch.undo()  # the device "recovers": the same descriptor must still not be trusted
    with pytest.raises(StorageError, match="reopen the store"):
        store.append(SID, User(content="later", ts=3, id="c"))
    store.close()
    assert len(calls) == 1, "the failed sync is never retried on the same descriptor"
    with JsonlStore(tmp_path, sync="always") as reopened:
        reopened.append(SID, User(content="after reopening", ts=4, id="d"))
        ids = [e.id for e in reopened.iter_entries(SID)]
    assert ids[0] == "a" and ids[-1] == "d" and "c" not in ids


def test_close_reports_a_batch_whose_sync_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fix: after a failed batch sync, close used to return quietly; it now says the batch may not be durable."""
    store = JsonlStore(tmp_path, sync="batch", batch_size=3, batch_ms=1e9)
    store.append(SID, User(content="1", ts=1))
    store.append(SID, User(content="2", ts=2))
    monkeypatch.setattr(os, "fdatasync", _eio)
    with pytest.raises(StorageError, match="fdatasync failed"):
        store.append(SID, User(content="3", ts=3))  # the third append triggers the batch sync
    monkeypatch.undo()
    with pytest.raises(StorageError, match="3 entries since the last good sync may not be durable"):
        store.close()


def test_a_failed_folder_fsync_leaves_no_file_that_would_skip_it_next_time(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Fix: the empty log created before a failed folder fsync is removed, so a retry syncs the folder again."""
    synced: list[str] = []
    real = jsonl_store_module.fsync_dir
    monkeypatch.setattr(jsonl_store_module, "fsync_dir", _eio)
    store = JsonlStore(tmp_path / "root", sync="always")
    with pytest.raises(StorageError, match="fsync of the folder failed"):
        store.append(SID, User(content="x", ts=1))
    assert not (tmp_path / "root" / f"{SID}.jsonl").exists()
    with pytest.raises(StorageError):
        store.create(SID)
    assert not (tmp_path / "root" / f"{SID}.jsonl").exists()
    monkeypatch.setattr(jsonl_store_module, "fsync_dir", lambda path: (synced.append(str(path)), real(path)))
    store.append(SID, User(content="x", ts=1))
    store.close()
    assert synced, "the retry fsynced the folder"


def test_without_the_lock_a_tail_is_never_cut(tmp_path: Path) -> None:
    """Fix: an unlocked store took another writer's half-written line for a torn tail and cut it (lost entries)."""
    log = tmp_path / f"{SID}.jsonl"
    in_flight = encode_line(User(content="being written by another process", ts=1, id="other"))
    log.write_bytes(encode_line(User(content="first", ts=0, id="first")) + in_flight[:20])
    with JsonlStore(tmp_path, lock=False) as store:
        store.append(SID, User(content="mine", ts=2, id="mine"))
    data = log.read_bytes()
    assert in_flight[:20] in data and not (tmp_path / f"{SID}.jsonl.quarantine").exists()
    assert data.endswith(encode_line(User(content="mine", ts=2, id="mine")))
    with JsonlStore(tmp_path) as store:
        assert [e.id for e in store.iter_entries(SID)] == ["first", "mine"]


# -- deep JSON and long numbers ----------------------------------------------------------------------

def test_a_sidecar_nested_100000_deep_is_a_damaged_sidecar_not_a_recursion_error(tmp_path: Path) -> None:
    """Fix: RecursionError escaped WorkingMemory.load."""
    memory = WorkingMemory(tmp_path, SID)
    memory.create()
    memory.path.write_text('{"version":1,"session_id":"%s","created":1,"updated":1,"working":{"a":%s%s}}'
                           % (SID, "[" * DEEP, "]" * DEEP))
    with pytest.raises(CorruptMetaError, match="nested too deeply"):
        memory.load()


def test_working_memory_refuses_integers_its_reader_could_not_read(tmp_path: Path) -> None:
    """Fix: a 10,000-digit integer failed as 'metadata: cannot be encoded'; with a raised limit it was written unreadable."""
    memory = WorkingMemory(tmp_path, SID)
    memory.create(working={"kept": 1})
    memory.set("largest", 10**4300 - 1)
    memory.set("smallest", -(10**4299 - 1))
    assert memory.get("largest") == 10**4300 - 1 and memory.get("smallest") == -(10**4299 - 1)
    for value in (10**4300, -(10**4299), 10**10_000):
        with pytest.raises(InvalidWorkingValue, match=r"working\['n'\].*store it as a string"):
            memory.set("n", value)
    assert memory.get("kept") == 1 and "n" not in memory.keys()


def test_entries_with_integers_no_reader_can_read_are_refused(tmp_path: Path) -> None:
    """Fix: the error advised raising sys.set_int_max_str_digits, which then wrote lines no reader decodes."""
    with pytest.raises(InvalidEntry, match="longer than 4300 digits cannot be read back") as caught:
        encode_line(ToolCall(name="calc", args={"n": 10**10_000}, ts=1))
    assert "set_int_max_str_digits" not in str(caught.value)
    line = encode_line(ToolCall(name="calc", args={"n": 10**4299}, ts=1))
    assert msgspec.json.decode(line)["args"]["n"] == 10**4299


@pytest.mark.parametrize("text", ["[" * DEEP + "]" * DEEP, "1" + "0" * 10_000, "1e400"])
def test_a_hostile_line_in_a_log_is_damage_and_the_good_lines_stay(tmp_path: Path, text: str) -> None:
    log = tmp_path / f"{SID}.jsonl"
    log.write_bytes(encode_line(User(content="before", ts=1, id="b"))
                    + b'{"type":"tool_call","name":"x","ts":2,"args":{"v":%s}}\n' % text.encode()
                    + encode_line(User(content="after", ts=3, id="a")))
    with JsonlStore(tmp_path) as store:
        assert [e.id for e in store.iter_entries(SID)] == ["b", "a"]
    code, out, err = main_in_process("fsck", str(log), "--json")
    report = json.loads(out.strip().splitlines()[-1])
    assert code == 1 and report["damaged_lines"] == [2] and report["good_lines"] == 2 and not err
    code, out, _ = main_in_process("tokens", "--entries", "--json", str(log))
    assert code == 0 and json.loads(out)["damaged_lines"] == 1


# -- what the command line prints ----------------------------------------------------------------------

def test_fsck_reports_a_loose_file_mode_in_its_json(tmp_path: Path) -> None:
    """Fix: the mode warning was printed for people only; --json now has file_mode_ok and warnings."""
    log = tmp_path / f"{SID}.jsonl"
    log.write_bytes(encode_line(User(content="x", ts=1)))
    for mode, ok in ((0o600, True), (0o644, False), (0o660, False)):
        log.chmod(mode)
        code, out, _ = main_in_process("fsck", str(log), "--json")
        report = json.loads(out.strip().splitlines()[-1])
        assert code == 0 and report["file_mode"] == f"{mode:04o}" and report["file_mode_ok"] is ok
        assert bool(report["warnings"]) is not ok
        human = main_in_process("fsck", str(log))[1]
        assert ("warning: file mode is" in human) is not ok


def test_an_error_naming_a_hostile_path_stays_one_line(tmp_path: Path) -> None:
    """Fix: a path with a newline in it split the error over two lines."""
    assert one_line("a\nb\x00c\u2028d é 中") == "a\\nb\\x00c\\u2028d é 中"
    code, _, err = main_in_process("compact", str(tmp_path / f"{SID}\n.jsonl"), "--window", "1000")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "\\n.jsonl" in err
