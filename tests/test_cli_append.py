"""``aptmem append``: entries on stdin, checked line by line, appended under the writer lock."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aptmem.cli.append import InputLineError, parse_line
from aptmem.entries import User, UnknownEntry
from aptmem.jsonl_store import JsonlStore

ROOT = Path(__file__).resolve().parent.parent
SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
GOOD = b'{"type":"user","content":"hi","ts":1}\n{"type":"assistant","content":"hello","ts":2}\n'


def append(root: Path, *args: str, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aptmem append --root ROOT SID ARGS`` for real."""
    return subprocess.run([sys.executable, "-m", "aptmem", "append", "--root", str(root), SID, *args], input=stdin,
                          capture_output=True, cwd=ROOT, timeout=timeout)  # type: ignore[call-overload]


def stored(root: Path) -> list[object]:
    with JsonlStore(root) as store:
        return list(store.iter_entries(SID))


def test_appends_stdin_creating_the_session(tmp_path: Path) -> None:
    done = append(tmp_path, "--json", stdin=b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n", 1) + b"\n\n")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert (out["appended"], out["created"], out["error"], out["lock"], out["sync"]) == (2, True, None, True, "batch")
    assert [e.content for e in stored(tmp_path)] == ["hi", "hello"]  # type: ignore[attr-defined]
    assert (tmp_path / f"{SID}.jsonl").stat().st_mode & 0o777 == 0o600
    again = append(tmp_path, "--json", "--sync", "always", stdin=GOOD)
    assert json.loads(again.stdout)["created"] is False and len(stored(tmp_path)) == 4


def test_a_bad_line_stops_the_command_and_the_lines_before_it_stay(tmp_path: Path) -> None:
    bad = GOOD + b'{"type":"user","content":"no ts"}\n' + b'{"type":"user","content":"never","ts":4}\n'
    done = append(tmp_path, "--json", stdin=bad)
    assert done.returncode == 2
    err = done.stderr.decode().strip()
    assert err.count("\n") == 0 and err.startswith("aptmem: <stdin>:3: invalid 'user' entry")
    assert "missing required field `ts`" in err and "2 entries were appended before it" in err
    assert json.loads(done.stdout)["appended"] == 2
    assert [e.content for e in stored(tmp_path)] == ["hi", "hello"]  # type: ignore[attr-defined]


def test_all_or_nothing_appends_nothing_when_a_line_is_bad(tmp_path: Path) -> None:
    done = append(tmp_path, "--all-or-nothing", stdin=GOOD + b"garbage\n")
    assert done.returncode == 2 and b"<stdin>:3: not valid JSON" in done.stderr and b"nothing was appended" in done.stderr
    assert not (tmp_path / f"{SID}.jsonl").exists()
    assert append(tmp_path, "--all-or-nothing", stdin=GOOD).returncode == 0 and len(stored(tmp_path)) == 2


@pytest.mark.parametrize(("line", "reason"), [
    (b'{"type":"user","content":"x","ts":1,"secret":1}', "field 'secret' is not a field of a 'user' entry"),
    (b'{"type":"frob","ts":1}', "unknown entry type 'frob'"),
    (b'[1, 2]', "not a JSON object"),
    (b'{"type":"tool_call","name":"x","ts":1,"args":{"n":1e400}}', "floats within"),
])
def test_lines_that_are_not_entries_are_refused_with_the_reason(line: bytes, reason: str) -> None:
    with pytest.raises(InputLineError, match="<stdin>:4: ") as caught:
        parse_line(line, 4)
    assert reason in str(caught.value)


def test_unknown_types_are_kept_verbatim_when_asked(tmp_path: Path) -> None:
    raw = b'{"type":"frob",  "ts":1,"x":[1,2]}'
    assert isinstance(parse_line(raw, 1, keep_unknown=True), UnknownEntry)
    assert append(tmp_path, "--keep-unknown", stdin=raw + b"\n").returncode == 0
    assert (tmp_path / f"{SID}.jsonl").read_bytes() == raw + b"\n"


def test_a_line_over_the_cap_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    done = append(tmp_path, "--line-cap", "1000", stdin=GOOD + b'{"type":"user","content":"' + b"x" * 200_000)
    assert done.returncode == 2 and b"<stdin>:3: line longer than the cap of 1000 bytes" in done.stderr
    assert len(stored(tmp_path)) == 2


def test_a_bad_id_is_refused_before_stdin_is_read(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "aptmem", "append", "--root", str(tmp_path), "../x"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    _, err = proc.communicate(timeout=30)  # stdin is never written: a reader would wait forever
    assert proc.returncode == 2 and b"invalid session id '../x'" in err
    assert not any(tmp_path.iterdir())


def test_a_lock_held_too_long_is_a_clear_timeout_and_nothing_is_appended(tmp_path: Path) -> None:
    holder = JsonlStore(tmp_path)
    holder.append(SID, User(content="the library holds the lock for a burst", ts=0))
    burst = holder.holding(SID)
    burst.__enter__()
    try:
        started = time.monotonic()
        done = append(tmp_path, "--lock-timeout", "0.5", stdin=GOOD)
        assert time.monotonic() - started < 20
        err = done.stderr.decode()
        assert done.returncode == 2 and "lock still held by another process after 0.5s" in err
        assert "--lock-timeout SECONDS" in err and "nothing was appended" in err
    finally:
        burst.__exit__(None, None, None)
        holder.close()
    assert append(tmp_path, stdin=GOOD).returncode == 0 and len(stored(tmp_path)) == 3


def test_an_idle_long_running_appender_does_not_block_others(tmp_path: Path) -> None:
    """The lock is released before ``append`` waits for more input."""
    first = subprocess.Popen([sys.executable, "-m", "aptmem", "append", "--root", str(tmp_path), SID, "--json"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert first.stdin is not None
    first.stdin.write(b'{"type":"user","content":"turn 1","ts":1}\n')
    first.stdin.flush()
    deadline = time.monotonic() + 30
    while not (tmp_path / f"{SID}.jsonl").exists() or not stored(tmp_path):
        assert time.monotonic() < deadline, "the first line was never appended"
        time.sleep(0.05)
    other = append(tmp_path, "--lock-timeout", "30", stdin=b'{"type":"user","content":"meanwhile","ts":2}\n')
    assert other.returncode == 0, other.stderr
    first.stdin.write(b'{"type":"user","content":"turn 2","ts":3}\n')
    out, err = first.communicate(timeout=30)
    assert first.returncode == 0, err
    assert json.loads(out)["bursts"] >= 2
    assert [e.content for e in stored(tmp_path)] == ["turn 1", "meanwhile", "turn 2"]  # type: ignore[attr-defined]


def test_a_torn_tail_is_healed_or_refused_as_the_mode_says(tmp_path: Path) -> None:
    log = tmp_path / f"{SID}.jsonl"
    log.write_bytes(b'{"type":"user","content":"old","ts":0}\n{"type":"user","cont')
    strict = append(tmp_path, "--mode", "strict", stdin=GOOD)
    assert strict.returncode == 1 and b"recovery mode 'strict'" in strict.stderr
    assert append(tmp_path, stdin=GOOD).returncode == 0
    assert [e.content for e in stored(tmp_path)] == ["old", "hi", "hello"]  # type: ignore[attr-defined]
    assert (tmp_path / f"{SID}.jsonl.quarantine").exists()


def test_without_the_lock_lines_still_land_whole(tmp_path: Path) -> None:
    done = append(tmp_path, "--no-lock", "--sync", "none", "--json", stdin=GOOD)
    assert done.returncode == 0 and json.loads(done.stdout)["lock"] is False
    assert not (tmp_path / f"{SID}.lock").exists() and len(stored(tmp_path)) == 2
