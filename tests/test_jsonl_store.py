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


# -- issue 11: rewrites keep bytes, bounded descriptors, full disks, stale temp files, hard links -------


def _compact(root: Path, sid: str, persist: str, keep_turns: int = 2, line_cap: int | None = None):  # type: ignore[no-untyped-def]
    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.session import Session
    from aptmem.tokens import get_estimator

    options = {} if line_cap is None else {"line_cap": line_cap}
    with JsonlStore(root, **options) as store:
        session = Session(store, sid, policy=CompactionPolicy(window=4000, keep_turns=keep_turns, persist=persist),
                          estimator=get_estimator("rough"))
        return session.compact()


def test_a_rewrite_copies_kept_lines_as_bytes_and_moves_damage_to_the_quarantine(tmp_path: Path) -> None:
    """Finding 3: kept lines keep fields this version does not know; damaged, torn and over-cap
    lines go to the quarantine; metadata no summary stands for is carried over."""
    sid = new_session_id()
    old = [encode_line(User(content=f"old question {i} " + "w " * 40, ts=i)) for i in range(20)]
    header = b'{"type":"metadata","kind":"session","title":"kept by a newer writer","ts":0}\n'
    parent = b'{"type":"user","content":"the kept question","ts":100,"parent":"p-42"}\n'
    reply = b'{"ts":101,"type":"assistant","content":"the kept reply","future_field":[1,2]}\r\n'
    damaged, over_cap, torn = b"not json at all\n", b'{"type":"user","content":"' + b"x" * 3000 + b'","ts":102}\n', b'{"type":"user","content":"torn wri'
    path = tmp_path / f"{sid}.jsonl"
    path.write_bytes(header + b"".join(old) + parent + damaged + reply + over_cap + torn)
    result = _compact(tmp_path, sid, "rewrite", keep_turns=1, line_cap=2048)
    new = path.read_bytes()
    assert header in new and parent in new and reply in new, "a line that stays is copied byte for byte"
    assert new.index(header) < new.index(b'"type":"compaction"') < new.index(parent)
    quarantined = quarantine_path(path).read_bytes()
    for piece in (damaged, over_cap, torn):
        assert piece in quarantined and piece not in new
    written = result.written
    # 20 old questions summarized; the header carried; 2 pieces: the damaged line, and the over-cap
    # line with the torn tail after it (adjacent damage travels as one piece)
    assert written is not None and (written.removed_entries, written.carried, written.quarantined) == (20, 1, 2)
    assert written.quarantined_bytes == len(damaged) + len(over_cap) + len(torn)
    with JsonlStore(tmp_path, recovery="strict") as store:  # the new file is clean
        assert [type(e).__name__ for e in store.iter_entries(sid)] == ["Metadata", "Compaction", "User", "Assistant"]


def test_a_long_lived_store_keeps_few_descriptors_and_no_idle_lock(tmp_path: Path) -> None:
    """Finding 8: 600 sessions under a 256-descriptor limit; the store's sessions stay open to others."""
    script = textwrap.dedent(
        f"""
        import os, resource, subprocess, sys, uuid
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        from aptmem.jsonl_store import JsonlStore
        from aptmem.entries import User
        store = JsonlStore({str(tmp_path)!r})
        ids = [str(uuid.uuid4()) for _ in range(600)]
        for n, sid in enumerate(ids):
            store.append(sid, User(content=f"entry {{n}}", ts=n))
        print(len(os.listdir("/proc/self/fd")))
        line = b'{{"type":"user","content":"from the command line","ts":1}}\\n'
        done = subprocess.run([sys.executable, "-m", "aptmem", "append", "--root", {str(tmp_path)!r}, ids[-1],
                               "--lock-timeout", "1"], input=line, capture_output=True)
        print(done.returncode, done.stderr.decode().strip())
        store.append(ids[0], User(content="again", ts=9))
        store.close()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    descriptors, cli = done.stdout.splitlines()
    assert int(descriptors) <= 2 * 64 + 16, f"{descriptors} descriptors open"
    assert cli == "0 ", cli
    assert len(list(tmp_path.glob("*.jsonl"))) == 600


def test_healing_a_torn_tail_on_a_full_disk_is_a_storage_error_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 9: the heal's quarantine write fails: the library's error, the log untouched."""
    import errno

    from aptmem.errors import StorageError

    sid = new_session_id()
    path = tmp_path / f"{sid}.jsonl"
    path.write_bytes(encode_line(user(0)) + b'{"type":"user","cont')
    before = path.read_bytes()
    real = os.write

    def full(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".quarantine"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", full)
    store = JsonlStore(tmp_path)
    with pytest.raises(StorageError, match=str(path)):
        store.append(sid, user(1))
    monkeypatch.undo()
    assert path.read_bytes() == before
    store.close()


def test_temp_files_of_killed_rewrites_are_swept_by_the_next_rewrite(tmp_path: Path) -> None:
    """Finding 9: a rewrite killed before its rename left a full-size temp file; the next one under
    the lock removes it (no live writer can be between its temp file and its rename then)."""
    sid = new_session_id()
    with JsonlStore(tmp_path) as store:
        store.append_many(sid, [User(content=f"question {i} " + "w " * 40, ts=i) for i in range(30)])
    stale = tmp_path / f".{sid}.jsonl.k1ll3d.tmp"
    stale.write_bytes((tmp_path / f"{sid}.jsonl").read_bytes())
    other = tmp_path / f".{new_session_id()}.jsonl.k1ll3d.tmp"  # another session's: not ours to sweep
    other.write_bytes(b"x")
    _compact(tmp_path, sid, "rewrite")
    assert not stale.exists() and other.exists()


def test_a_hard_link_at_a_session_path_is_refused(tmp_path: Path) -> None:
    """Finding 9: appending through a second name would change the file behind the other one."""
    sid = new_session_id()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.link(victim, tmp_path / f"{sid}.jsonl")
    with JsonlStore(tmp_path) as store, pytest.raises(UnsafePathError, match="hard links"):
        store.append(sid, user(0))
    assert victim.read_bytes() == b"precious\n"
