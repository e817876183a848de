"""Reading and recovering damaged JSONL logs: exact counts for every mode, nothing stored lost."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from aptmem.entries import User, encode_line
from aptmem.errors import CorruptLogError, NotASessionError
from aptmem.recovery import LogScan, quarantine_path, repair_log

MODES = ("strict", "truncate_tail", "point_in_time", "skip")


def good(i: int) -> bytes:
    """The i-th good line of a test log."""
    return encode_line(User(content=f"message {i} 帮我看看 😀", ts=1_717_000_000_000 + i, id=f"e{i}"))


def write(path: Path, *parts: bytes) -> Path:
    path.write_bytes(b"".join(parts))
    return path


def scan(path: Path, mode: str) -> tuple[list, object]:
    s = LogScan(path, mode, raise_errors=False)
    entries = list(s)
    return entries, s.report


def reconstruct(original_size: int, kept: bytes, qpath: Path, holes_in_place: bool) -> bytes:
    """Rebuild the original bytes from the repaired log and the quarantine pieces."""
    data = qpath.read_bytes()
    pieces: list[tuple[int, bytes]] = []
    position = 0
    while position < len(data):
        end = data.index(b"\n", position)
        header = data[position:end]
        assert header.startswith(b"#aptmem-quarantine "), header[:40]
        meta = msgspec.json.decode(header[len(b"#aptmem-quarantine ") :])
        body = data[end + 1 : end + 1 + meta["length"]]
        assert len(body) == meta["length"]
        pieces.append((meta["offset"], body))
        position = end + 1 + meta["length"] + 1  # the piece is followed by one "\n"
    out = bytearray()
    source = 0
    for offset, body in sorted(pieces):
        take = offset - len(out)
        out += kept[source : source + take]
        source += take
        out += body
    out += kept[source:]
    assert len(out) == original_size
    return bytes(out)


# -- tolerated, not damage ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_crlf_bom_and_blank_lines_are_not_damage(tmp_path: Path, mode: str) -> None:
    lines = [good(i) for i in range(6)]
    path = write(
        tmp_path / "s.jsonl",
        b"\xef\xbb\xbf" + lines[0].replace(b"\n", b"\r\n"),
        b"\n",
        lines[1],
        b"   \t\n",
        lines[2].replace(b"\n", b"\r\n"),
        b"\r\n",
        *lines[3:],
        b"\n\n",
    )
    entries, report = scan(path, mode)
    assert [e.id for e in entries] == [f"e{i}" for i in range(6)]
    assert report.clean and report.loadable and report.damaged_lines == [] and report.torn_tail_bytes == 0


# -- torn tails -----------------------------------------------------------------------------------

TAILS = {
    "torn_line": b'{"type":"user","content":"half a li',
    "zero_filled": b"\x00" * 4096,
    "zero_filled_lines": b"\x00" * 100 + b"\n" + b"\x00" * 50,
    "zero_then_torn": b"\x00" * 10 + b'{"type":"user"',
    "torn_after_blank": b"\n" + b'{"type":"us',
}


@pytest.mark.parametrize("tail_name", sorted(TAILS))
@pytest.mark.parametrize("mode", MODES)
def test_torn_tail_counts_in_every_mode(tmp_path: Path, mode: str, tail_name: str) -> None:
    tail = TAILS[tail_name]
    body = b"".join(good(i) for i in range(8))
    path = write(tmp_path / "s.jsonl", body, tail)
    entries, report = scan(path, mode)
    # The blank line before a torn fragment is kept; the torn bytes start after it.
    expected_torn = len(tail) - (1 if tail_name == "torn_after_blank" else 0)
    assert report.torn_tail_bytes == expected_torn
    assert report.damaged_lines == []
    assert report.torn_tail_line == (10 if tail_name == "torn_after_blank" else 9)
    if mode == "strict":
        assert not report.loadable and report.entries == 0
        return
    assert report.loadable and report.entries == 8 and len(entries) == 8
    assert report.discarded_bytes == expected_torn


@pytest.mark.parametrize("mode", ["truncate_tail", "point_in_time", "skip"])
def test_repairing_a_torn_tail_cuts_it_into_quarantine(tmp_path: Path, mode: str) -> None:
    body = b"".join(good(i) for i in range(5))
    tail = b'{"type":"assistant","conte'
    path = write(tmp_path / "s.jsonl", body, tail)
    report = repair_log(path, mode)
    assert report.repaired and report.quarantined == 1 and report.torn_tail_bytes == len(tail)
    assert path.read_bytes() == body
    assert reconstruct(len(body) + len(tail), path.read_bytes(), quarantine_path(path), True) == body + tail
    # Repaired once, the log is clean for every mode, strict included.
    assert LogScan(path, "strict").run().clean


def test_strict_refuses_a_torn_tail_and_changes_nothing(tmp_path: Path) -> None:
    data = good(0) + good(1) + b'{"type":"us'
    path = write(tmp_path / "s.jsonl", data)
    report = repair_log(path, "strict")
    assert not report.loadable and not report.repaired
    assert report.refused_line == 3
    assert path.read_bytes() == data and not quarantine_path(path).exists()
    with pytest.raises(CorruptLogError) as info:
        list(LogScan(path, "strict"))
    assert info.value.line == 3 and info.value.path == str(path)
    assert re.search(r"s\.jsonl:3: torn write", str(info.value))


# -- damage in the middle ---------------------------------------------------------------------------

MIDDLE = {
    "garbage": b"this is not json\n",
    "interleaved_writers": good(100)[:-1] + good(101),  # two appends glued into one line
    "torn_then_continued": b'{"type":"user","cont' + good(102),
    "not_an_object": b"[1, 2, 3]\n",
    "no_type": b'{"content":"x","ts":1}\n',
    "zeros_in_middle": b"\x00" * 64 + b"\n",
    "bad_utf8": b'{"type":"user","content":"\xff\xfe","ts":1}\n',
}


@pytest.mark.parametrize("damage_name", sorted(MIDDLE))
@pytest.mark.parametrize("mode", MODES)
def test_middle_damage_counts_in_every_mode(tmp_path: Path, mode: str, damage_name: str) -> None:
    before = b"".join(good(i) for i in range(4))
    after = b"".join(good(i) for i in range(4, 10))
    path = write(tmp_path / "s.jsonl", before, MIDDLE[damage_name], after)
    entries, report = scan(path, mode)
    assert report.damaged_lines == [5]
    assert report.torn_tail_bytes == 0
    if mode in ("strict", "truncate_tail"):
        assert not report.loadable and report.entries == 0 and report.refused_line == 5
        with pytest.raises(CorruptLogError) as info:
            list(LogScan(path, mode))
        assert info.value.line == 5
        return
    if mode == "point_in_time":
        assert [e.id for e in entries] == ["e0", "e1", "e2", "e3"]
        assert report.good_lines_discarded == 6
        assert report.discarded_bytes == len(MIDDLE[damage_name]) + len(after)
    else:
        assert [e.id for e in entries] == [f"e{i}" for i in range(10)]
        assert report.discarded_bytes == len(MIDDLE[damage_name])


def test_skip_repair_keeps_every_good_line_and_quarantines_the_rest(tmp_path: Path) -> None:
    lines = [good(i) for i in range(12)]
    original = b"".join(
        [lines[0], lines[1], b"garbage one\n", lines[2], lines[3], lines[4], b"\x00\x00\x00\n",
         *lines[5:9], b'{"type":"tool_call"\n', *lines[9:], b'{"type":"assistant","con']
    )
    path = write(tmp_path / "s.jsonl", original)
    report = repair_log(path, "skip")
    assert report.damaged_lines == [3, 7, 12]
    assert report.torn_tail_line == 16 and report.torn_tail_bytes == len(b'{"type":"assistant","con')
    assert report.entries == 12 and report.quarantined == 4 and report.repaired
    assert path.read_bytes() == b"".join(lines)
    assert [e.id for e in LogScan(path, "strict")] == [f"e{i}" for i in range(12)]
    assert reconstruct(len(original), path.read_bytes(), quarantine_path(path), False) == original
    assert oct(quarantine_path(path).stat().st_mode & 0o777) == "0o600"
    assert any("removed 3 damaged lines (3, 7, 12)" in a for a in report.actions)


def test_point_in_time_repair_cuts_everything_after_the_first_damage(tmp_path: Path) -> None:
    lines = [good(i) for i in range(6)]
    original = b"".join([*lines[:2], b"oops\n", *lines[2:]])
    path = write(tmp_path / "s.jsonl", original)
    report = repair_log(path, "point_in_time")
    assert report.entries == 2 and report.good_lines_discarded == 4 and report.quarantined == 1
    assert path.read_bytes() == b"".join(lines[:2])
    assert reconstruct(len(original), path.read_bytes(), quarantine_path(path), True) == original


def test_repair_is_idempotent(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", good(0), b"bad\n", good(1), b"{")
    first = repair_log(path, "skip")
    second = repair_log(path, "skip")
    assert first.repaired and not second.repaired and second.clean and second.entries == 2


# -- unterminated good line, long lines, not a session ---------------------------------------------


def test_a_whole_last_entry_without_newline_is_good(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", good(0), good(1)[:-1])
    entries, report = scan(path, "strict")
    assert len(entries) == 2 and report.clean and report.missing_final_newline
    report = repair_log(path, "skip")
    assert report.actions == ["added the missing line end after the last entry"]
    assert path.read_bytes() == good(0) + good(1)


@pytest.mark.parametrize("terminated", [True, False])
def test_a_line_over_the_cap_is_damage_and_never_held(tmp_path: Path, terminated: bool) -> None:
    huge = b'{"type":"user","content":"' + b"x" * 5000 + b'","ts":1}' + (b"\n" if terminated else b"")
    path = write(tmp_path / "s.jsonl", good(0), huge, good(1) if terminated else b"")
    s = LogScan(path, "skip", cap=1000, raise_errors=False)
    entries = list(s)
    assert len(entries) == (2 if terminated else 1)
    if terminated:
        assert s.report.damaged_lines == [2]
        assert "longer than the cap of 1000 bytes" in s.report.damage_reasons[0]
    else:
        assert s.report.torn_tail_bytes == len(huge)


def test_lines_of_16_mib_are_admitted_by_default(tmp_path: Path) -> None:
    big = encode_line(User(content="y" * (16 * 1024 * 1024), ts=1))
    path = write(tmp_path / "s.jsonl", good(0), big, good(1))
    entries, report = scan(path, "strict")
    assert report.clean and len(entries) == 3 and len(entries[1].content) == 16 * 1024 * 1024


def test_missing_file_and_folder_are_not_sessions(tmp_path: Path) -> None:
    with pytest.raises(NotASessionError, match="no such file"):
        LogScan(tmp_path / "nope.jsonl").run()
    with pytest.raises(NotASessionError, match="is a folder"):
        LogScan(tmp_path).run()


def test_an_intact_line_glued_onto_a_zero_filled_lost_write_is_kept(tmp_path: Path) -> None:
    """Power loss: write 2 came back as NULs (no line end), write 3 reached the disk intact."""
    original = good(0) + b"\x00" * 57 + good(2) + good(3)
    path = write(tmp_path / "s.jsonl", original)
    entries, report = scan(path, "skip")
    assert [e.id for e in entries] == ["e0", "e2", "e3"]
    assert report.damaged_lines == [2] and report.discarded_bytes == 57
    repaired = repair_log(path, "skip")
    assert repaired.quarantined == 1 and path.read_bytes() == good(0) + good(2) + good(3)
    assert reconstruct(len(original), path.read_bytes(), quarantine_path(path), False) == original


# -- issue 11: bounded memory, durable quarantine names, repairs that were interrupted -----------------


def test_memory_is_bounded_whatever_the_number_of_damaged_lines(tmp_path: Path) -> None:
    """Finding 5: 100,000 damaged lines (``x\n``): a scan keeps counts and the first examples (it
    kept ~420 bytes a line before: ~42 MB here, 1.29 GB for 6 MB of them); a repair moves them as
    one piece. Peak RSS of a fresh process, over what it had after its imports."""
    import subprocess
    import sys

    path = write(tmp_path / "x.jsonl", b"x\n" * 100_000, good(1))
    script = (
        "import resource\n"
        "from aptmem.recovery import LogScan, repair_log\n"
        "def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "base = rss()\n"
        f"report = LogScan({str(path)!r}, 'skip', raise_errors=False).run()\n"
        "scan = rss() - base\n"
        f"repaired = repair_log({str(path)!r}, 'skip')\n"
        "print(scan, rss() - base, getattr(report, 'damaged_count', -1), len(report.damaged_lines), repaired.quarantined)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    scan_growth, repair_growth, count, named, pieces = map(int, done.stdout.split())
    assert scan_growth < 12 * 2**20 and repair_growth < 12 * 2**20, (scan_growth, repair_growth)
    from aptmem.store import DAMAGE_EXAMPLES

    assert (count, named, pieces) == (100_000, DAMAGE_EXAMPLES, 1)
    assert path.read_bytes() == good(1)


def _fsync_order(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record fsyncs (of which file, or the folder) and truncations, in order."""
    import os

    calls: list[str] = []
    real_fsync, real_ftruncate, real_replace = os.fsync, os.ftruncate, os.replace

    def name(fd: int) -> str:
        target = os.readlink(f"/proc/self/fd/{fd}")
        return "folder" if os.path.isdir(target) else os.path.basename(target)

    def fsync(fd: int) -> None:
        calls.append(f"fsync {name(fd)}")
        real_fsync(fd)

    def ftruncate(fd: int, size: int) -> None:
        calls.append(f"ftruncate {name(fd)}")
        real_ftruncate(fd, size)

    def replace(src: str, dst: str) -> None:
        calls.append(f"replace {os.path.basename(dst)}")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    monkeypatch.setattr(os, "replace", replace)
    return calls


@pytest.mark.parametrize(("mode", "damage", "cut"), [("skip", b'{"type":"us', "ftruncate x.jsonl"),
                                                     ("point_in_time", b"garbage\n" + good(9), "ftruncate x.jsonl"),
                                                     ("skip", b"garbage\n" + good(9), "replace x.jsonl")])
def test_the_quarantine_and_its_name_are_durable_before_the_log_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       mode: str, damage: bytes, cut: str) -> None:
    """Finding 6: the folder is fsynced after the quarantine is created and before any cut."""
    path = write(tmp_path / "x.jsonl", good(1), good(2), damage)
    calls = _fsync_order(monkeypatch)
    report = repair_log(path, mode)
    monkeypatch.undo()
    assert report.repaired and cut in calls, calls
    at = calls.index(cut)
    assert "fsync x.jsonl.quarantine" in calls[:at] and "fsync folder" in calls[calls.index("fsync x.jsonl.quarantine"):at], calls


def test_a_repair_interrupted_after_its_quarantine_does_not_quarantine_the_same_pieces_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 9: a repair dies between the durable quarantine and the rewrite; the next one finds
    its batch complete and only finishes the cut (the pieces are there once)."""
    import os

    path = write(tmp_path / "x.jsonl", good(1), b"garbage one\n", good(2), b"garbage two\n", good(3), b'{"type":"us')
    original = path.read_bytes()

    def killed(*_args: object) -> None:
        raise KeyboardInterrupt("killed before the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        repair_log(path, "skip")
    monkeypatch.undo()
    assert path.read_bytes() == original
    first = quarantine_path(path).read_bytes()
    report = repair_log(path, "skip")
    assert report.repaired and path.read_bytes() == good(1) + good(2) + good(3)
    assert quarantine_path(path).read_bytes() == first, "the pieces were quarantined a second time"
    assert first.count(b"garbage one") == 1 and first.count(b'{"type":"us') == 1


def test_a_repair_that_runs_out_of_space_leaves_no_piece_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 9: the partial batch is cut back, so the next repair's header starts a line."""
    import errno
    import os

    from aptmem.errors import StorageError
    from experiments.fuzz_oracles import quarantine_pieces

    path = write(tmp_path / "x.jsonl", good(1), b"garbage " * 1000 + b"\n", good(2), b'{"type":"us')
    original = path.read_bytes()
    real = os.write
    seen = [0]

    def full(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".quarantine"):
            seen[0] += 1
            if seen[0] == 2:  # the header went through, the piece's bytes do not
                written = real(fd, bytes(data)[:100])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), written)
        return real(fd, data)

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError) as failed:
        repair_log(path, "skip")
    monkeypatch.undo()
    assert path.read_bytes() == original
    repair_log(path, "skip")
    pieces = quarantine_pieces(quarantine_path(path))  # parses: every header starts a line
    assert b"".join(piece for _, piece in pieces).count(b"garbage ") == 1000
    assert isinstance(failed.value, StorageError) and "x.jsonl" in str(failed.value)  # the library's error, naming the log
