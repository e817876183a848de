"""Tests of the full_json strategy beyond the conformance suite: its file format and its damage."""

from __future__ import annotations

import os
import random
import uuid
from pathlib import Path

import pytest

from aptmem.entries import Compaction, User, decode_line, encode_entry
from aptmem.errors import CorruptLogError, UnsafePathError
from strategies import full_json
from strategies.full_json import FullJsonStore

SID = "6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f"


def history() -> list:
    """A small history with a Chinese message, an unknown type and a compaction."""
    return [
        User(ts=1, id="a", content="帮我看看这个 bug 🙂"),
        decode_line(b'{ "type":"future" , "ts":2,"k":[1, 2] }'),
        Compaction(ts=3, summary="s", first_kept="a"),
        User(ts=4, content="after"),
    ]


@pytest.mark.parametrize("variant", ["atomic", "in_place"])
def test_file_is_one_array_of_the_entries_lines(tmp_path: Path, variant: str) -> None:
    """The file is exactly ``[`` + each entry's log-line bytes joined by ``,`` + ``]``."""
    store = FullJsonStore(tmp_path, variant=variant)
    entries = history()
    for entry in entries:
        store.append(SID, entry)
    expected = b"[" + b",".join(encode_entry(entry) for entry in entries) + b"]"
    assert (tmp_path / f"{SID}.json").read_bytes() == expected
    store.close()


def test_one_encode_per_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each append (and each batch) encodes the array exactly once."""
    calls = []
    real = full_json.encode_array_into
    monkeypatch.setattr(full_json, "encode_array_into", lambda entries, buf: (calls.append(len(entries)), real(entries, buf)))
    store = FullJsonStore(tmp_path)
    store.append(SID, User(ts=1, content="x"))
    store.append(SID, User(ts=2, content="y"))
    store.append_many(SID, [User(ts=3, content="z"), User(ts=4, content="w")])
    assert calls == [1, 2, 4]
    store.close()


def test_variants_rewrite_as_they_say(tmp_path: Path) -> None:
    """in_place rewrites the same file (same inode); atomic renames a new file over it."""
    in_place = FullJsonStore(tmp_path / "a", variant="in_place")
    atomic = FullJsonStore(tmp_path / "b", variant="atomic")
    for store in (in_place, atomic):
        store.append(SID, User(ts=1, content="x"))
    inodes = [os.stat(store.path(SID)).st_ino for store in (in_place, atomic)]
    for store in (in_place, atomic):
        store.append(SID, User(ts=2, content="y"))
    assert os.stat(in_place.path(SID)).st_ino == inodes[0]
    assert os.stat(atomic.path(SID)).st_ino != inodes[1]
    assert in_place.capabilities.durability == "none"
    assert atomic.capabilities.durability == "per_append"
    with pytest.raises(ValueError):
        FullJsonStore(tmp_path, variant="sometimes")


def _damaged_cases() -> list[tuple[str, bytes, int, int, str]]:
    """(name, file bytes, line, offset, words of the reason) for damaged session files."""
    whole = b"[" + b",\n".join(encode_entry(entry) for entry in history()) + b"]"
    seed = 3001
    cut = random.Random(seed).randrange(2, len(whole) - 1)
    return [
        ("empty", b"", 1, 0, "empty file"),
        (f"torn_at_{cut}_seed_{seed}", whole[:cut], whole[:cut].count(b"\n") + 1, cut, "torn JSON array"),
        ("missing_bracket", whole[:-1], 4, len(whole) - 1, "torn JSON array"),
        ("object", b'{"type":"user"}', 1, 0, "not a JSON array"),
        ("bad_element", b'[{"type":"user","content":"x","ts":1},\n  42]', 2, 41, "element 2"),
        ("malformed", b'[{"type":"user","content":"x","ts":1},\n{"type":tru}]', 2, 48, "malformed"),
    ]


@pytest.mark.parametrize("case", _damaged_cases(), ids=lambda case: case[0])
def test_damaged_file_is_reported_and_left_alone(tmp_path: Path, case: tuple[str, bytes, int, int, str]) -> None:
    """A damaged array raises CorruptLogError (path, line, offset, reason); nothing is destroyed."""
    name, data, line, offset, reason = case
    path = tmp_path / f"{SID}.json"
    path.write_bytes(data)
    store = FullJsonStore(tmp_path)
    with pytest.raises(CorruptLogError) as caught:
        store.iter_entries(SID)
    error = caught.value
    assert (error.path, error.line, error.offset) == (str(path), line, offset), name
    assert reason in error.reason, name
    report = store.recover(SID)
    assert not report.loadable and not report.repaired
    assert (report.refused_line, report.refused_offset, report.entries) == (line, offset, 0)
    with pytest.raises(CorruptLogError):
        store.append(SID, User(ts=9, content="would overwrite the damaged file"))
    assert path.read_bytes() == data
    with pytest.raises(ValueError):
        store.recover(SID, "skip")
    store.close()


def test_symlink_at_session_path_is_refused(tmp_path: Path) -> None:
    """A planted symlink is neither followed for reading nor replaced on writing."""
    target = tmp_path / "target"
    target.write_bytes(b"[]")
    root = tmp_path / "root"
    root.mkdir()
    sid = str(uuid.UUID(int=random.Random(3002).getrandbits(128), version=4))
    (root / f"{sid}.json").symlink_to(target)
    for variant in ("atomic", "in_place"):
        store = FullJsonStore(root, variant=variant)
        with pytest.raises(UnsafePathError):
            store.append(sid, User(ts=1, content="x"))
        with pytest.raises(UnsafePathError):
            store.read_live(sid)
        with pytest.raises(UnsafePathError):
            store.replace(sid, [User(ts=1, content="x")])
        store.close()
    assert target.read_bytes() == b"[]"
