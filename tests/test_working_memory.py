"""Tests of the working-memory sidecar: values, persistence, safety, locking and crashes."""

from __future__ import annotations

import datetime
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgspec
import pytest

import aptmem
from aptmem.errors import (
    CorruptMetaError,
    InvalidEntry,
    InvalidSessionId,
    InvalidWorkingValue,
    LockTimeout,
    SessionExists,
    SessionNotFound,
    UnsafePathError,
)
from aptmem.locking import SessionLock
from aptmem.working_memory import SessionMeta, WorkingMemory

SEED = 20240607
SID = "3f2b8c1e-5d4a-4b6f-9e7d-0a1b2c3d4e5f"
OTHER = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
# Child processes import aptmem from this checkout, whatever the current folder.
REPO = str(Path(aptmem.__file__).resolve().parent.parent)


@pytest.fixture
def wm(tmp_path: Path) -> WorkingMemory:
    memory = WorkingMemory(tmp_path, SID)
    memory.create(title="first", model="m-1")
    return memory


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    return env


# -- values -----------------------------------------------------------------------------------


def test_create_writes_every_field(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path, SID)
    assert not memory.exists()
    made = memory.create(title="t", model="gpt", parent=OTHER, memory="notes", working={"a": 1})
    meta = memory.load()
    assert meta == made
    assert (meta.version, meta.session_id, meta.title, meta.model, meta.parent) == (1, SID, "t", "gpt", OTHER)
    assert (meta.memory, meta.working) == ("notes", {"a": 1})
    assert meta.created == meta.updated and meta.created > 1_600_000_000_000
    assert memory.exists()


def test_create_twice_refused(wm: WorkingMemory) -> None:
    before = wm.path.read_bytes()
    with pytest.raises(SessionExists):
        WorkingMemory(wm.root, SID).create(title="second")
    assert wm.path.read_bytes() == before


def test_set_get_delete_keys(wm: WorkingMemory) -> None:
    assert wm.keys() == []
    assert wm.get("missing") is None
    assert wm.get("missing", 7) == 7
    wm.set("plan", ["read", "fix", {"step": 3, "done": False}])
    wm.set("count", 2)
    wm.set("ratio", 0.25)
    wm.set("empty", None)
    wm.set("名前", "バグ 🐛")
    assert wm.keys() == ["plan", "count", "ratio", "empty", "名前"]
    assert wm.get("plan") == ["read", "fix", {"step": 3, "done": False}]
    assert wm.get("empty", "default") is None  # a stored None is a value, not a miss
    assert wm.get("名前") == "バグ 🐛"
    wm.set("count", 3)  # overwriting keeps the key's place
    assert wm.keys() == ["plan", "count", "ratio", "empty", "名前"]
    assert wm.get("count") == 3
    assert wm.delete("count") is True
    assert wm.delete("count") is False
    assert wm.keys() == ["plan", "ratio", "empty", "名前"]


def test_delete_of_absent_key_writes_nothing(wm: WorkingMemory) -> None:
    wm.set("a", 1)
    before = (wm.path.read_bytes(), os.stat(wm.path).st_ino)
    assert wm.delete("nope") is False
    assert (wm.path.read_bytes(), os.stat(wm.path).st_ino) == before


def test_text_title_model(wm: WorkingMemory) -> None:
    assert wm.text == ""
    wm.set_text("goal: fix the parser\n- found: off by one in line 12")
    wm.set_title("parser bug")
    wm.set_model(None)
    meta = wm.load()
    assert wm.text == "goal: fix the parser\n- found: off by one in line 12"
    assert (meta.title, meta.model) == ("parser bug", None)
    wm.set_model("m-2")
    assert wm.load().model == "m-2"


def test_update_applies_under_lock_and_stamps(wm: WorkingMemory) -> None:
    created = wm.load().created

    def change(meta: SessionMeta) -> None:
        meta.working["n"] = meta.working.get("n", 0) + 1
        meta.memory += "x"

    wm.update(change)
    result = wm.update(change)
    meta = wm.load()
    assert result == meta
    assert (meta.working, meta.memory, meta.created) == ({"n": 2}, "xx", created)
    assert meta.updated >= created


def test_update_that_fails_writes_nothing(wm: WorkingMemory) -> None:
    before = wm.path.read_bytes()

    def boom(meta: SessionMeta) -> None:
        meta.title = "changed"
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        wm.update(boom)

    def bad_type(meta: SessionMeta) -> None:
        meta.title = 5  # type: ignore[assignment]

    with pytest.raises(InvalidWorkingValue, match="title"):
        wm.update(bad_type)

    def other_session(meta: SessionMeta) -> None:
        meta.session_id = OTHER

    with pytest.raises(InvalidWorkingValue, match="session_id"):
        wm.update(other_session)
    assert wm.path.read_bytes() == before


def test_values_returned_are_copies(wm: WorkingMemory) -> None:
    wm.set("list", [1, 2])
    got = wm.get("list")
    got.append(3)
    assert wm.get("list") == [1, 2]


def test_persists_across_instances(tmp_path: Path, wm: WorkingMemory) -> None:
    wm.set("k", {"deep": [1, 2.5, "three"]})
    wm.set_text("remember this")
    again = WorkingMemory(tmp_path, SID)
    assert again.get("k") == {"deep": [1, 2.5, "three"]}
    assert again.text == "remember this"
    assert again.load().title == "first"


def test_unknown_fields_are_kept(wm: WorkingMemory) -> None:
    doc = msgspec.json.decode(wm.path.read_bytes())
    doc["from_the_future"] = {"x": [1, 2]}
    wm.path.write_bytes(msgspec.json.encode(doc))
    wm.set("a", 1)
    after = msgspec.json.decode(wm.path.read_bytes())
    assert after["from_the_future"] == {"x": [1, 2]}
    assert after["working"] == {"a": 1}


def test_missing_sidecar(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path, SID)
    with pytest.raises(SessionNotFound):
        memory.load()
    with pytest.raises(SessionNotFound):
        memory.set("a", 1)
    assert not memory.path.exists()


# -- refusing what is not JSON -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "where", "reason"),
    [
        (float("nan"), "working['k']", "not a JSON number"),
        (float("inf"), "working['k']", "not a JSON number"),
        ((1, 2), "working['k']", "tuple is not a JSON value"),
        ({1, 2}, "working['k']", "set is not a JSON value"),
        (b"bytes", "working['k']", "bytes is not a JSON value"),
        (datetime.date(2024, 1, 1), "working['k']", "date is not a JSON value"),
        (object(), "working['k']", "object is not a JSON value"),
        ({1: "a"}, "working['k']", "JSON object keys are strings"),
        ([{"a": (1,)}], "working['k'][0]['a']", "tuple is not a JSON value"),
    ],
    ids=["nan", "inf", "tuple", "set", "bytes", "date", "object", "int-key", "nested"],
)
def test_non_json_value_refused_without_writing(wm: WorkingMemory, value: object, where: str, reason: str) -> None:
    wm.set("keep", 1)
    before = wm.path.read_bytes()
    with pytest.raises(InvalidWorkingValue) as info:
        wm.set("k", value)
    assert info.value.where == where
    assert reason in info.value.reason
    assert isinstance(info.value, InvalidEntry)  # callers catching InvalidEntry catch this too
    assert wm.path.read_bytes() == before


def test_self_containing_value_refused(wm: WorkingMemory) -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(InvalidWorkingValue, match="nested deeper"):
        wm.set("loop", loop)


def test_non_string_key_and_text_refused(wm: WorkingMemory) -> None:
    before = wm.path.read_bytes()
    with pytest.raises(InvalidWorkingValue):
        wm.set(3, "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidWorkingValue):
        wm.set_text(["not", "text"])  # type: ignore[arg-type]
    with pytest.raises(InvalidWorkingValue):
        wm.set("s", "lone surrogate \ud800")
    assert wm.path.read_bytes() == before


# -- file-system safety ------------------------------------------------------------------------


def test_files_are_0600(wm: WorkingMemory) -> None:
    wm.set("a", 1)
    assert stat.S_IMODE(os.stat(wm.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(wm.lock_path).st_mode) == 0o600


def test_symlink_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.json"
    victim.write_bytes(b'{"precious": true}')
    memory = WorkingMemory(tmp_path / "root", SID)
    (tmp_path / "root").mkdir()
    memory.path.symlink_to(victim)
    with pytest.raises(UnsafePathError):
        memory.load()
    with pytest.raises(UnsafePathError):
        memory.set("a", 1)
    with pytest.raises(UnsafePathError):
        memory.create()
    assert victim.read_bytes() == b'{"precious": true}'
    assert memory.path.is_symlink()


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "3F2B8C1E-5D4A-4B6F-9E7D-0A1B2C3D4E5F",
        "3f2b8c1e-5d4a-1b6f-9e7d-0a1b2c3d4e5f",
        "3f2b8c1e-5d4a-4b6f-9e7d-0a1b2c3d4e5f\x00",
        "３f2b8c1e-5d4a-4b6f-9e7d-0a1b2c3d4e5f",
        "",
    ],
    ids=["traversal", "absolute", "upper", "v1", "nul", "fullwidth", "empty"],
)
def test_invalid_id_refused_before_any_file(tmp_path: Path, bad: str) -> None:
    root = tmp_path / "root"
    with pytest.raises(InvalidSessionId):
        WorkingMemory(root, bad)
    assert not root.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file"),
        (b'{"version": 1, "session_id": "', "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"session_id": "' + SID.encode() + b'", "created": 1, "updated": 1, "title": 5}', "invalid field"),
        (b'{"session_id": "' + SID.encode() + b'", "updated": 1}', "invalid field"),
        (b'{"session_id": "' + OTHER.encode() + b'", "created": 1, "updated": 1}', f"belongs to session {OTHER}"),
    ],
    ids=["empty", "torn", "array", "wrong-type", "missing-field", "foreign"],
)
def test_damaged_sidecar_names_file_and_reason(wm: WorkingMemory, content: bytes, reason: str) -> None:
    wm.path.write_bytes(content)
    with pytest.raises(CorruptMetaError) as info:
        wm.load()
    assert info.value.path == str(wm.path)
    assert reason in info.value.reason
    assert str(wm.path) in str(info.value) and reason in str(info.value)
    with pytest.raises(CorruptMetaError):
        wm.set("a", 1)  # a mutation never overwrites what it could not read
    assert wm.path.read_bytes() == content


def test_lock_held_elsewhere_times_out(wm: WorkingMemory) -> None:
    holder = SessionLock(wm.lock_path, timeout=1.0)
    with holder:
        with pytest.raises(LockTimeout):
            WorkingMemory(wm.root, SID, lock_timeout=0.2).set("a", 1)
    WorkingMemory(wm.root, SID, lock_timeout=0.2).set("a", 1)
    assert wm.get("a") == 1


# -- concurrency and crashes -------------------------------------------------------------------


def test_threads_sharing_one_instance_lose_nothing(wm: WorkingMemory) -> None:
    def work(t: int) -> None:
        for i in range(40):
            wm.set(f"t{t}-{i:02d}", i)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wm.keys()) == sorted(f"t{t}-{i:02d}" for t in range(4) for i in range(40))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd")
def test_mutations_do_not_keep_a_descriptor_each(wm: WorkingMemory) -> None:
    # Each mutation takes the sidecar's file lock for one read-modify-write; a lock object left
    # open after it kept one descriptor per set(): a long session ran out at the 1,024 limit.
    wm.set("warm", 0)
    before = len(os.listdir("/proc/self/fd"))
    for i in range(300):
        wm.set(f"k{i}", i)
    wm.set("a", 1)
    wm.delete("a")
    assert len(os.listdir("/proc/self/fd")) - before <= 2
    assert wm.get("k299") == 299


_WRITER = r"""
import sys, time
from aptmem.working_memory import WorkingMemory
root, sid, prefix, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
memory = WorkingMemory(root, sid, lock_timeout=60)
print("ready", flush=True)
sys.stdin.readline()  # start together
start = time.monotonic()
for i in range(n):
    memory.set(f"{prefix}{i:03d}", i)
print(start, time.monotonic(), flush=True)
"""


def test_two_processes_setting_at_once_lose_nothing(wm: WorkingMemory) -> None:
    n = 200
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(wm.root), SID, prefix, str(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env(),
        )
        for prefix in ("a", "b")
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    spans = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        spans.append(tuple(map(float, out.split())))
    (a0, a1), (b0, b1) = spans
    assert a0 < b1 and b0 < a1, f"the writers did not overlap: {spans}"
    keys = wm.keys()
    assert len(keys) == 2 * n
    for prefix in ("a", "b"):
        # Each writer's keys are all there, in the order it set them.
        assert [k for k in keys if k.startswith(prefix)] == [f"{prefix}{i:03d}" for i in range(n)]
    meta = wm.load()
    assert all(meta.working[f"a{i:03d}"] == i and meta.working[f"b{i:03d}"] == i for i in range(n))


_LOOPER = r"""
import sys
from aptmem.working_memory import WorkingMemory
memory = WorkingMemory(sys.argv[1], sys.argv[2], lock_timeout=60)
prefix = sys.argv[3]
i = 0
while True:
    memory.set(f"{prefix}{i:06d}", i)
    if i == 0:
        print("ready", flush=True)
    i += 1
"""


def test_sigkill_during_writes_never_damages_the_sidecar(wm: WorkingMemory) -> None:
    rng = random.Random(SEED)
    # A large memory text makes every write long, so kills land inside writes too.
    text = "".join(rng.choice("abcdefghij klmnopqrstuvwxyz\n") for _ in range(300_000))
    wm.set_text(text)
    for rnd in range(6):
        prefix = f"r{rnd}-"
        proc = subprocess.Popen(
            [sys.executable, "-c", _LOOPER, str(wm.root), SID, prefix],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
        meta = wm.load()  # never damaged
        written = [k for k in meta.working if k.startswith(prefix)]
        context = f"seed={SEED} round={rnd}"
        assert written == [f"{prefix}{i:06d}" for i in range(len(written))], context
        assert len(written) >= 1, context
        assert meta.memory == text, context
        # The dead writer's lock went with it: a new writer is not blocked.
        WorkingMemory(wm.root, SID, lock_timeout=5).set(f"after-{rnd}", rnd)
    assert [wm.get(f"after-{rnd}") for rnd in range(6)] == list(range(6))
    wm.sweep()
    assert sorted(p.name for p in wm.root.iterdir()) == sorted([wm.path.name, wm.lock_path.name])
    assert wm.text == text


_KILL_AT = r"""
import os, signal, sys
import aptmem.fsutil as fsutil
from aptmem.working_memory import WorkingMemory
root, sid, point = sys.argv[1], sys.argv[2], sys.argv[3]
die = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
if point == "mid-temp-write":
    def half(fd, data):
        os.write(fd, bytes(data)[: len(data) // 2])
        die()
    fsutil.write_all = half
elif point == "before-rename":
    os.replace = die
elif point == "before-folder-sync":
    fsutil.fsync_dir = die
WorkingMemory(root, sid).set("new", 1)
"""


@pytest.mark.parametrize(
    ("point", "has_new", "temps"),
    [("mid-temp-write", False, 1), ("before-rename", False, 1), ("before-folder-sync", True, 0)],
)
def test_kill_at_each_step_of_a_write(wm: WorkingMemory, point: str, has_new: bool, temps: int) -> None:
    """Deterministic kills at each step of the atomic write: the old or the new sidecar, whole."""
    wm.set("old", 0)
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_AT, str(wm.root), SID, point],
        capture_output=True, text=True, env=_child_env(), timeout=30,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert wm.keys() == (["old", "new"] if has_new else ["old"])
    assert wm.sweep() == temps
    wm.set("later", 2)
    assert wm.get("later") == 2


# -- issue 11: a repair path for a damaged sidecar; FIFOs ----------------------------------------------


def test_a_damaged_sidecar_is_repaired_keeping_what_still_reads(tmp_path: Path) -> None:
    """Finding 9: the damaged bytes go to the sidecar's quarantine; every field that reads is kept."""
    wm = WorkingMemory(tmp_path, SID)
    wm.create(title="bug hunt")
    damaged = (b'{"version":1,"session_id":"%s","title":"bug hunt","created":5,"updated":6,'
               b'"memory":42,"working":{"plan":["a"]},"from_a_newer_version":true}' % SID.encode())
    wm.path.write_bytes(damaged)
    with pytest.raises(CorruptMetaError):
        wm.load()
    report = wm.repair()
    assert report.damaged and "memory" in (report.reason or "")
    meta = wm.load()
    assert (meta.title, meta.created, meta.working, meta.memory) == ("bug hunt", 5, {"plan": ["a"]}, "")
    assert "from_a_newer_version" in report.salvaged and b'"from_a_newer_version": true' in wm.path.read_bytes()
    assert damaged in Path(report.moved_to or "").read_bytes()
    assert wm.repair().damaged is False  # a sound sidecar is left alone


def test_a_fifo_where_the_sidecar_should_be_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Finding 7: reading it used to block forever in open()."""
    os.mkfifo(tmp_path / f"{SID}.meta.json")
    done = subprocess.run([sys.executable, "-c", f"from aptmem.working_memory import WorkingMemory\n"
                           f"WorkingMemory({str(tmp_path)!r}, {SID!r}).load()"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "is not a regular file" in done.stderr, done.stderr
