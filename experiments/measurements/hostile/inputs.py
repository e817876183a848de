"""Hostile data and hostile I/O: deep JSON, long numbers, stray input, file modes, full disks, fsync errors.

The data cases feed ``aptmem append`` (stdin), a session line, a sidecar and ``aptmem tokens``;
the I/O cases run :mod:`experiments.measurements.hostile.child` scenarios (each in a process of its own, as
a file-size limit and a replaced ``fsync`` are process-wide) and ``aptmem append`` under a
file-size limit. See :mod:`experiments.measurements.hostile.cases` for what a case records.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import msgspec

from aptmem.entries import ToolCall, User
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.measurements.hostile.cases import SID, SID2, Case, Scratch, cli, library
from experiments.measurements.hostile.result import CaseResult

__all__ = ["DEEP", "data_cases", "io_cases"]

DEEP = 100_000
_DEEP_ARGS = '{"type":"tool_call","name":"x","ts":1,"args":{"a":' + "[" * DEEP + "]" * DEEP + "}}"
_BIG = "9" * 10_000  # a 10,000-digit integer


def _tool_line(number: str) -> bytes:
    return b'{"type":"tool_call","name":"calc","ts":7,"args":{"n":%s}}\n' % number.encode()


def _plant_line(s: Scratch, line: bytes) -> None:
    """Put ``line`` between good lines of the seeded log (as another tool might have)."""
    with open(s.log(), "ab") as f:
        f.write(line.rstrip(b"\n") + b"\n" + b'{"type":"user","content":"after","ts":8,"id":"u9"}\n')


def _append(s: Scratch, data: bytes, *extra: str) -> CaseResult:
    return cli(s, "append", "--root", str(s.root), SID, *extra, stdin=data)


def _sidecar_with(s: Scratch, text: str) -> None:
    from aptmem.working_memory import WorkingMemory

    memory = WorkingMemory(s.root, SID2)
    memory.create()
    memory.path.write_text(
        '{"version":1,"session_id":"%s","created":1,"updated":1,"working":{"a":%s}}' % (SID2, text), encoding="utf-8")


def _round_trip_4300(s: Scratch) -> CaseResult:
    number = "9" * 4300
    result = _append(s, _tool_line(number))
    shown = cli(s, "cat", str(s.log())).stdout
    result.intact = result.intact and number in shown
    result.note += "; read back digit for digit" if number in shown else "; NOT read back unchanged"
    return result


def data_cases() -> Iterator[Case]:
    """Deep JSON, long numbers, input that is not an entry, and file modes."""
    from aptmem.jsonl_store import JsonlStore
    from aptmem.working_memory import WorkingMemory

    deep = f"JSON nested {DEEP:,} deep"
    yield Case("deep JSON", deep, "aptmem append (stdin)", "refused", lambda s: _append(s, _DEEP_ARGS.encode() + b"\n"))

    def planted_deep(then: Any) -> Any:
        def run(s: Scratch) -> CaseResult:
            _plant_line(s, _DEEP_ARGS.encode())
            return then(s)
        return run

    yield Case("deep JSON", deep + " in a session line", "aptmem fsck", "reported",
               planted_deep(lambda s: cli(s, "fsck", str(s.log()), reported_on=1)))

    def skip_read(s: Scratch) -> CaseResult:
        with JsonlStore(s.root) as store:
            result = library(s, lambda: list(store.iter_entries(SID)))
            ids = [e.id for e in store.iter_entries(SID)]
        result.intact = result.intact and ids[-1] == "u9"
        result.note = "skip mode keeps the good lines around it" if ids[-1] == "u9" else "a good line was lost"
        return result

    yield Case("deep JSON", deep + " in a session line", "library: iter_entries (skip)", "accepted", planted_deep(skip_read))
    yield Case("deep JSON", deep + " in a session line", "aptmem tokens --entries", "accepted",
               planted_deep(lambda s: cli(s, "tokens", "--entries", "--json", str(s.log()))))

    def sidecar_deep(s: Scratch) -> CaseResult:
        _sidecar_with(s, "[" * DEEP + "]" * DEEP)
        return library(s, lambda: WorkingMemory(s.root, SID2).load())

    yield Case("deep JSON", deep + " in a sidecar", "library: WorkingMemory.load", "refused", sidecar_deep)

    def deep_text(s: Scratch) -> CaseResult:
        path = s.base / "deep.txt"
        path.write_text("[" * DEEP + "]" * DEEP)
        return cli(s, "tokens", "--tier", "precise", "--json", str(path))

    yield Case("deep JSON", deep + " as text to count", "aptmem tokens --tier precise", "accepted", deep_text)

    big = "integer of 10,000 digits"
    yield Case("long number", big, "aptmem append (stdin)", "refused", lambda s: _append(s, _tool_line(_BIG)))
    yield Case("long number", "integer of 4,300 digits (the most msgspec reads)", "aptmem append (stdin)", "accepted",
               _round_trip_4300)
    yield Case("long number", "float 1e400 (beyond a double)", "aptmem append (stdin)", "refused",
               lambda s: _append(s, _tool_line("1e400")))

    def lib_big(s: Scratch) -> CaseResult:
        with JsonlStore(s.root) as store:
            return library(s, lambda: store.append(SID, ToolCall(name="calc", args={"n": 10**10_000}, ts=7)))

    yield Case("long number", big, "library: JsonlStore.append", "refused", lib_big)

    def planted_big(s: Scratch) -> CaseResult:
        _plant_line(s, _tool_line(_BIG))
        return cli(s, "fsck", str(s.log()), reported_on=1)

    yield Case("long number", big + " in a session line", "aptmem fsck", "reported", planted_big)
    yield Case("long number", big, "library: WorkingMemory.set", "refused",
               lambda s: library(s, lambda: WorkingMemory(s.root, SID).set("n", 10**10_000)))

    def sidecar_big(s: Scratch) -> CaseResult:
        _sidecar_with(s, _BIG)
        return library(s, lambda: WorkingMemory(s.root, SID2).load())

    yield Case("long number", big + " in a sidecar", "library: WorkingMemory.load", "refused", sidecar_big)

    stray = "not an entry"
    yield Case(stray, "a line that is not JSON", "aptmem append (stdin)", "refused", lambda s: _append(s, b"hello\n"))
    yield Case(stray, "bytes that are not UTF-8", "aptmem append (stdin)", "refused",
               lambda s: _append(s, b'{"type":"user","content":"\xff\xfe","ts":1}\n'))
    yield Case(stray, "a field the entry type does not declare", "aptmem append (stdin)", "refused",
               lambda s: _append(s, b'{"type":"user","content":"x","ts":1,"secret":"dropped?"}\n'))
    yield Case(stray, "an unknown entry type", "aptmem append (stdin)", "refused",
               lambda s: _append(s, b'{"type":"frobnicate","ts":1}\n'))
    yield Case(stray, "an unknown entry type, --keep-unknown", "aptmem append (stdin)", "accepted",
               lambda s: _append(s, b'{"type":"frobnicate","ts":1}\n', "--keep-unknown"))
    yield Case(stray, "a line over the line cap (5,000 bytes, cap 1,000)", "aptmem append (stdin)", "refused",
               lambda s: _append(s, _tool_line('"' + "x" * 5000 + '"'), "--line-cap", "1000"))
    yield Case(stray, "the third line is bad (the first two are good)", "aptmem append (stdin)", "refused",
               lambda s: _append(s, b'{"type":"user","content":"1","ts":1}\n{"type":"user","content":"2","ts":2}\n'
                                    b'{"type":"user"}\n'))

    def loose_mode(s: Scratch) -> CaseResult:
        os.chmod(s.log(), 0o644)
        result = cli(s, "fsck", str(s.log()), "--json")
        report = json.loads(result.stdout.strip().splitlines()[-1])
        result.outcome = "reported" if report.get("file_mode_ok") is False and report.get("warnings") else "accepted"
        result.error = (report.get("warnings") or [None])[0]
        return result

    yield Case("file mode", "session log is 0644", "aptmem fsck --json", "reported", loose_mode)


def _child(scenario: str) -> Any:
    """A case that runs one :mod:`experiments.measurements.hostile.child` scenario in a fresh process."""
    def run(s: Scratch) -> CaseResult:
        done = subprocess.run([sys.executable, "-m", "experiments.measurements.hostile.child", scenario, str(s.base / "child")],
                              capture_output=True, text=True, env=child_env(), cwd=REPO_ROOT, timeout=300)
        if done.returncode != 0 or not done.stdout.strip():
            tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return CaseResult(outcome="failed", error=tail, clear=False, intact=False, note="the scenario crashed")
        result = msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=CaseResult)
        result.clear = "not an aptmem error" not in result.note
        return result
    return run


def _cli_disk_full(s: Scratch) -> CaseResult:
    """``aptmem append`` under a file-size limit: the line that does not fit is refused, earlier ones stay."""
    limit = s.log().stat().st_size + 200

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    data = (b'{"type":"user","content":"fits","ts":4,"id":"f1"}\n'
            + b'{"type":"user","content":"%s","ts":5,"id":"big"}\n' % (b"x" * 1000)
            + b'{"type":"user","content":"never read","ts":6,"id":"f2"}\n')
    result = cli(s, "append", "--root", str(s.root), SID, stdin=data, process=True, preexec_fn=small_disk)
    text = s.log().read_text()
    kept = '"f1"' in text and '"big"' not in text
    result.intact = result.intact and kept
    result.note += "; the line before it stays, the partial line is gone" if kept else "; the log is not as expected"
    return result


def _as_nobody(s: Scratch) -> CaseResult:
    """As root: a forked child that drops to user ``nobody`` appends in a folder owned by root (0755)."""
    from aptmem.errors import AptmemError
    from aptmem.jsonl_store import JsonlStore

    if os.geteuid() != 0:
        return CaseResult(outcome="skipped", error=None, clear=True, intact=True, note="only run as root")
    with JsonlStore(s.base / "warm-up") as store:  # every lazy import happens now, as root
        store.append(SID2, User(content="x", ts=1))
    s.base.chmod(0o755)  # nobody may reach the folder, not write in it
    s.root.chmod(0o755)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no imports from here on (the interpreter's own files may be unreadable to nobody)
        os.close(read)
        code, message = 0, "accepted"
        try:
            os.setgid(65534)
            os.setuid(65534)
            with JsonlStore(s.root) as store:
                store.append(SID2, User(content="x", ts=1))
        except AptmemError as exc:
            code, message = 1, str(exc)
        except BaseException as exc:  # noqa: BLE001
            code, message = 2, f"{type(exc).__name__}: {exc}"
        os.write(write, message.encode()[:4000])
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    s.root.chmod(0o700)
    return CaseResult(outcome="accepted" if code == 0 else "refused", error=None if code == 0 else message,
            clear=code != 2, intact=s.intact(), note="forked child, setuid(65534)")


def io_cases() -> Iterator[Case]:
    """A full disk and a failing fsync, in append, compaction and sidecar writes; a user who may not write."""
    yield Case("disk full", "a line over the file-size limit (RLIMIT_FSIZE)", "library: JsonlStore.append", "refused",
               _child("append_disk_full"), spawns=True)
    yield Case("disk full", "a line over the file-size limit (RLIMIT_FSIZE)", "aptmem append", "refused", _cli_disk_full,
               spawns=True)
    yield Case("disk full", "compaction rewrite: temp file over the limit", "library: Session.compact", "refused",
               _child("compact_rewrite_disk_full"), spawns=True)
    yield Case("disk full", "compaction append: marker over the limit", "library: Session.compact", "refused",
               _child("compact_append_disk_full"), spawns=True)
    yield Case("disk full", "sidecar temp file over the limit", "library: WorkingMemory.set", "refused",
               _child("sidecar_disk_full"), spawns=True)
    yield Case("fsync error", "fdatasync raises EIO (sync=always)", "library: JsonlStore.append", "refused",
               _child("append_fsync_eio"), spawns=True)
    yield Case("fsync error", "fdatasync raises EIO at close (sync=batch)", "library: JsonlStore.close", "refused",
               _child("batch_close_fsync_eio"), spawns=True)
    yield Case("fsync error", "fsync raises EIO in a rewrite compaction", "library: Session.compact", "refused",
               _child("compact_fsync_eio"), spawns=True)
    yield Case("fsync error", "fsync raises EIO in a sidecar write", "library: WorkingMemory.set", "refused",
               _child("sidecar_fsync_eio"), spawns=True)
    yield Case("long number", "5,000-digit integer after sys.set_int_max_str_digits(0)", "library: WorkingMemory.set",
               "refused", _child("sidecar_big_int_raised_limit"), spawns=True)
    yield Case("long number", "5,000-digit integer after sys.set_int_max_str_digits(0)", "library: JsonlStore.append",
               "refused", _child("entry_big_int_raised_limit"), spawns=True)
    yield Case("folder not writable", "append as user nobody in a folder owned by root", "library: JsonlStore.append",
               "refused", _as_nobody)
