"""What only the JSONL log promises: one write per append, sync policies, healing, locks, limits."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aptmem.entries import Assistant, User, decode_line, encode_line
from aptmem.errors import CorruptLogError, EntryTooLarge, LockTimeout, UnsafePathError
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.recovery import quarantine_path


def user(i: int) -> User:
    return User(content=f"hello {i}", ts=i, id=f"e{i}")


def test_each_append_is_one_os_write_of_one_whole_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = JsonlStore(tmp_path)
    sid = new_session_id()
    store.create(sid)
    writes: list[bytes] = []
    real_write = os.write

    def spy(fd: int, data: bytes) -> int:
        writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr("aptmem.jsonl_store.os.write", spy)
    entries = [user(i) for i in range(5)]
    for entry in entries:
        store.append(sid, entry)
    monkeypatch.undo()
    assert writes == [encode_line(e) for e in entries]
    store.close()


@pytest.mark.parametrize(("sync", "appends", "expected_syncs"), [("none", 10, 0), ("always", 10, 10), ("batch", 10, 3)])
def test_sync_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: str, appends: int, expected_syncs: int) -> None:
    calls: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr("aptmem.jsonl_store.os.fdatasync", lambda fd: (calls.append(fd), real(fd))[1])
    # batch: every 4 appends (4, 8), then the last 2 on close; batch_ms large so time never triggers.
    store = JsonlStore(tmp_path, sync=sync, batch_size=4, batch_ms=60_000)
    sid = new_session_id()
    for i in range(appends):
        store.append(sid, user(i))
    store.close()
    assert len(calls) == expected_syncs


def test_append_many_is_one_write_and_one_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = JsonlStore(tmp_path, sync="always")
    sid = new_session_id()
    store.create(sid)
    counts = {"write": 0, "sync": 0}
    real_write, real_sync = os.write, os.fdatasync
    monkeypatch.setattr("aptmem.jsonl_store.os.write", lambda fd, d: (counts.__setitem__("write", counts["write"] + 1), real_write(fd, d))[1])
    monkeypatch.setattr("aptmem.jsonl_store.os.fdatasync", lambda fd: (counts.__setitem__("sync", counts["sync"] + 1), real_sync(fd))[1])
    store.append_many(sid, [user(i) for i in range(50)])
    monkeypatch.undo()
    assert counts == {"write": 1, "sync": 1}
    assert [e.id for e in store.iter_entries(sid)] == [f"e{i}" for i in range(50)]
    store.close()


def test_files_are_0600_and_symlinks_refused(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "root")
    sid = new_session_id()
    store.append(sid, user(0))
    assert stat.S_IMODE(os.stat(store.path(sid)).st_mode) == 0o600
    store.close()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    other = new_session_id()
    os.symlink(victim, store.path(other))
    store = JsonlStore(tmp_path / "root")
    with pytest.raises(UnsafePathError, match="symlink"):
        store.append(other, user(1))
    with pytest.raises(UnsafePathError, match="symlink"):
        list(store.iter_entries(other))
    assert victim.read_text() == "precious"
    store.close()


def test_appending_after_a_crash_heals_the_torn_tail_first(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    sid = new_session_id()
    store.append_many(sid, [user(0), user(1)])
    store.close()
    with open(store.path(sid), "ab") as f:
        f.write(b'{"type":"user","content":"cut of')
    store = JsonlStore(tmp_path)
    store.append(sid, user(2))
    store.close()
    assert store.path(sid).read_bytes() == b"".join(encode_line(user(i)) for i in range(3))
    assert b'"cut of' in quarantine_path(store.path(sid)).read_bytes()


def test_appending_after_an_unterminated_whole_entry_adds_the_line_end(tmp_path: Path) -> None:
    sid = new_session_id()
    (tmp_path / f"{sid}.jsonl").write_bytes(encode_line(user(0))[:-1])
    with JsonlStore(tmp_path, recovery="strict") as store:
        store.append(sid, user(1))
        assert [e.id for e in store.iter_entries(sid)] == ["e0", "e1"]


def test_strict_store_refuses_to_append_to_a_torn_log(tmp_path: Path) -> None:
    sid = new_session_id()
    path = tmp_path / f"{sid}.jsonl"
    data = encode_line(user(0)) + b'{"type":'
    path.write_bytes(data)
    store = JsonlStore(tmp_path, recovery="strict")
    with pytest.raises(CorruptLogError) as info:
        store.append(sid, user(1))
    assert info.value.line == 2
    assert path.read_bytes() == data
    store.close()


def test_recover_reports_when_the_mode_refuses_and_changes_nothing(tmp_path: Path) -> None:
    sid = new_session_id()
    path = tmp_path / f"{sid}.jsonl"
    data = encode_line(user(0)) + b"junk\n" + encode_line(user(1))
    path.write_bytes(data)
    store = JsonlStore(tmp_path)
    refused = store.recover(sid, "truncate_tail")
    assert (refused.loadable, refused.repaired, refused.refused_line, refused.entries) == (False, False, 2, 0)
    assert path.read_bytes() == data
    report = store.recover(sid)  # the store's default mode: skip
    assert report.damaged_lines == [2] and report.entries == 2 and report.repaired
    assert [e.id for e in store.iter_entries(sid)] == ["e0", "e1"]
    store.close()


def test_replace_is_atomic_and_appends_continue_after_it(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    sid = new_session_id()
    store.append_many(sid, [user(i) for i in range(10)])
    store.replace(sid, [user(8), user(9)])
    store.append(sid, Assistant(content="after", ts=11, id="a"))
    assert [e.id for e in store.iter_entries(sid)] == ["e8", "e9", "a"]
    assert stat.S_IMODE(os.stat(store.path(sid)).st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    store.close()


def test_an_entry_over_the_line_cap_is_refused_before_writing(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path, line_cap=100)
    sid = new_session_id()
    store.append(sid, user(0))
    with pytest.raises(EntryTooLarge):
        store.append(sid, User(content="x" * 200, ts=1))
    assert [e.id for e in store.iter_entries(sid)] == ["e0"]
    store.close()


def test_a_store_holds_no_lock_between_appends_and_a_burst_keeps_others_out(tmp_path: Path) -> None:
    """Finding 8: the lock is taken per append, so an idle store blocks no one; holding() is a burst."""
    first = JsonlStore(tmp_path, lock_timeout=0.2)
    second = JsonlStore(tmp_path, lock_timeout=0.2)
    sid = new_session_id()
    first.append(sid, user(0))
    second.append(sid, user(1))  # was LockTimeout: the first store kept the lock until close()
    with first.holding(sid):
        first.append(sid, user(2))
        with pytest.raises(LockTimeout):
            second.append(sid, user(3))
        first.append(sid, user(4))
    second.append(sid, user(5))
    first.close()
    second.close()
    assert [e.id for e in JsonlStore(tmp_path).iter_entries(sid)] == ["e0", "e1", "e2", "e4", "e5"]


def test_a_short_write_at_the_file_size_limit_is_cut_back(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the kernel accept only part of a line; the store removes that part."""
    script = textwrap.dedent(
        f"""
        import resource, sys
        from aptmem.jsonl_store import JsonlStore
        from aptmem.entries import User
        from aptmem.errors import StorageError
        store = JsonlStore({str(tmp_path)!r})
        sid = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
        store.append(sid, User(content="small", ts=1, id="ok"))
        size = store.path(sid).stat().st_size
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.RLIM_INFINITY))
        try:
            store.append(sid, User(content="x" * 1000, ts=2, id="big"))
        except StorageError as exc:
            print("refused:", exc)
        store.append(sid, User(content="fits", ts=3, id="ok2"))
        store.close()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "partial line was removed" in done.stdout
    lines = (tmp_path / "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e.jsonl").read_bytes().splitlines()
    assert [decode_line(line).id for line in lines] == ["ok", "ok2"]
