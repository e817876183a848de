"""Fast resume: reading backwards finds the live context and agrees with a full forward read."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aptmem.tailscan as tailscan
from aptmem.entries import Assistant, Compaction, CompactionMarker, User, encode_line
from aptmem.errors import CorruptLogError
from aptmem.logreader import iter_lines
from aptmem.recovery import LogScan
from aptmem.store import select_live
from aptmem.tailscan import iter_lines_reversed, read_live_tail


def user(i: int, size: int = 10) -> User:
    return User(content=f"u{i} " + "z" * size, ts=i, id=f"e{i}")


def test_no_compaction_means_the_whole_history(tmp_path: Path) -> None:
    entries = [user(i) for i in range(20)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(encode_line(e) for e in entries))
    assert read_live_tail(path) == entries


def test_appended_compaction_keeps_the_named_entries_before_it(tmp_path: Path) -> None:
    entries = [user(i) for i in range(30)]
    marker = Compaction(summary="first 25 summarized", first_kept="e25", ts=100)
    after = [Assistant(content="next", ts=101, id="a1"), user(31)]
    history = [*entries, marker, *after]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(encode_line(e) for e in history))
    live = read_live_tail(path)
    assert live == [marker, *entries[25:], *after]
    assert live == select_live(history)


def test_rewritten_layout_and_the_latest_of_several_compactions(tmp_path: Path) -> None:
    history = [
        Compaction(summary="old", ts=0),
        user(1),
        user(2),
        CompactionMarker(summary="newer, legacy name", first_kept="e2", ts=3),
        user(4),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(encode_line(e) for e in history))
    assert read_live_tail(path) == [history[3], history[2], history[4]] == select_live(history)


def test_first_kept_that_names_nothing_keeps_only_what_follows(tmp_path: Path) -> None:
    history = [user(1), Compaction(summary="s", first_kept="missing", ts=2), user(3)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(encode_line(e) for e in history))
    assert read_live_tail(path) == [history[1], history[2]] == select_live(history)


def test_resume_does_not_read_the_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Damage far before the marker is never seen, even in strict mode: only the tail is read."""
    path = tmp_path / "s.jsonl"
    prefix = b"".join(encode_line(user(i, 200)) for i in range(5000))  # ~1.2 MB
    # An appended marker names a kept entry just before it (the append layout), so only the tail is read.
    tail = [Compaction(summary="s", first_kept="e4999", ts=1), user(6000), user(6001)]
    path.write_bytes(b"not json at all\n" + prefix + b"".join(encode_line(e) for e in tail[:1]) + b"".join(encode_line(e) for e in tail[1:]))
    reads: list[int] = []
    real_open = tailscan.open_log

    class Counting(io.BufferedReader):
        def read(self, n: int | None = -1) -> bytes:  # type: ignore[override]
            data = super().read(n)
            reads.append(len(data))
            return data

    def counting_open(p: Path) -> io.BufferedReader:
        return Counting(real_open(p).detach())

    monkeypatch.setattr(tailscan, "open_log", counting_open)
    live = read_live_tail(path, mode="strict")
    assert [getattr(e, "id", None) for e in live[1:]] == ["e4999", "e6000", "e6001"]
    assert sum(reads) < 200_000, f"read {sum(reads)} bytes of a {path.stat().st_size} byte file"


@pytest.mark.parametrize(
    ("mode", "expect"),
    [("skip", ["e1", "e2", "e3"]), ("point_in_time", ["e1", "e2"]), ("truncate_tail", None), ("strict", None)],
)
def test_damage_inside_the_live_window_follows_the_mode(tmp_path: Path, mode: str, expect: list[str] | None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(encode_line(user(1)) + encode_line(user(2)) + b"garbage\n" + encode_line(user(3)))
    if expect is None:
        with pytest.raises(CorruptLogError) as info:
            read_live_tail(path, mode=mode)
        assert info.value.line == 3
    else:
        assert [e.id for e in read_live_tail(path, mode=mode)] == expect


@pytest.mark.parametrize("mode", ["truncate_tail", "skip", "point_in_time"])
def test_a_torn_tail_is_passed_over(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(encode_line(user(1)) + encode_line(user(2)) + b"\x00" * 300)
    assert [e.id for e in read_live_tail(path, mode=mode)] == ["e1", "e2"]


# -- property: backwards equals forwards, whatever the block size --------------------------------

piece = st.one_of(
    st.builds(lambda i, n: encode_line(user(i, n)), st.integers(0, 99), st.integers(0, 120)),
    st.sampled_from([b"\n", b"\r\n", b"  \n", b"garbage\n", b"\x00\x00\x00\n", b'{"type":"x","ts":1}\n', b"[1]\n"]),
    st.builds(lambda i: encode_line(user(i)).replace(b"\n", b"\r\n"), st.integers(0, 9)),
    # A lost write come back as NULs with no line end, the next intact line glued onto it.
    st.builds(lambda n, i: b"\x00" * n + encode_line(user(i)), st.integers(1, 40), st.integers(0, 9)),
    st.builds(lambda i: b"junk\x00\x00" + encode_line(user(i)), st.integers(0, 9)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(piece, max_size=25),
    st.sampled_from([b"", b'{"type":"us', b"\x00" * 17, b"tail"]),
    st.booleans(),
    st.integers(1, 64),
    st.sampled_from([40, 100, 10_000]),
)
def test_reverse_lines_equal_forward_lines(tmp_path: Path, pieces: list[bytes], tail: bytes, bom: bool, block: int, cap: int) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(pieces) + tail
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as stream:
        forward = [(l.offset, l.length, l.kind, l.terminated, l.entry, l.zero_filled) for l in iter_lines(stream, cap)]
    old = tailscan._BLOCK
    tailscan._BLOCK = block
    try:
        backward = [(l.offset, l.length, l.kind, l.terminated, l.entry, l.zero_filled) for l in iter_lines_reversed(path, cap)]
    finally:
        tailscan._BLOCK = old
    assert backward[::-1] == forward


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32))
def test_live_tail_equals_select_live_of_a_full_read(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    history: list = []
    for i in range(rng.randint(0, 60)):
        if history and rng.random() < 0.1:
            earlier = [e.id for e in history if e.id] + ["nowhere"]
            history.append(Compaction(summary=f"c{i}", first_kept=rng.choice(earlier + [None]), ts=i, id=f"c{i}"))
        else:
            history.append(user(i, rng.randint(0, 300)))
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"".join(encode_line(e) for e in history))
    full = list(LogScan(path, "strict"))
    assert full == history
    assert read_live_tail(path) == select_live(full), f"seed={seed}"
