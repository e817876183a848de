"""SQLite's real file operations, traced with strace and read back as an operation log.

SQLite does its I/O in C, below anything Python can wrap, so the explorer runs the operation
(:mod:`experiments.measurements.crash_explore.child`) in a process under ``strace`` and parses what the kernel
was asked to do: ``openat`` (a new name when ``O_CREAT`` created one, ``O_TRUNC``), ``write`` /
``pwrite64`` with their bytes (``-xx``: every string in hex, ``-s``: never cut) and offsets,
``lseek``, ``fsync``/``fdatasync`` (of a file, or of the folder: SQLite syncs the folder after
creating a journal or a WAL), ``ftruncate``/``truncate``, ``rename*``, ``unlink*``, ``close`` and
``dup*``. Calls strace cannot show us the bytes of (``writev``, ``fallocate``, ...) on a traced
file stop the parse with an error rather than be modelled wrong.

Only files directly under the session root count; SQLite's ``-shm`` file is left out (it is
written through ``mmap``, invisible to strace, and holds no data: the first connection after a
crash rebuilds it from the WAL). The operation's span and its acknowledgements are marked by the
child with ``open`` calls on paths that do not exist (:class:`~experiments.measurements.crash_explore.child.MarkRecorder`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from experiments.core.crashsim.oplog import Creat, DirSync, Op, OpLog, Rename, Sync, Trunc, Unlink, Write

__all__ = ["SYSCALLS", "strace_problem", "trace_command", "parse_trace", "UnmodelledCall"]

#: The system calls traced.
SYSCALLS = ("openat", "open", "creat", "close", "write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync",
            "fdatasync", "sync_file_range", "rename", "renameat", "renameat2", "unlink", "unlinkat", "ftruncate",
            "truncate", "fallocate", "lseek", "dup", "dup2", "dup3")
#: Calls that change a file in ways this parser does not model: an error if they touch a traced file.
_UNMODELLED = ("writev", "pwritev", "pwritev2", "fallocate", "sync_file_range")
_AT_FDCWD = -100
_LINE = re.compile(r"^(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|0x[0-9a-f]+)")
_STRING = re.compile(r'^"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?$')


class UnmodelledCall(RuntimeError):
    """The trace holds a call on a traced file that the model cannot replay faithfully."""


def strace_problem() -> str | None:
    """None if strace can trace a child here; else why not (not installed, or ptrace refused)."""
    if shutil.which("strace") is None:
        return "strace is not installed (apt-get install strace): the C-level calls of a store declaring the strace tracer cannot be traced"
    try:
        done = subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"strace could not run: {exc}"
    if done.returncode != 0:
        return f"strace cannot trace here (ptrace refused?): {done.stderr.decode(errors='replace').strip()[:200]}"
    return None


def trace_command(trace: Path, job: Path, out: Path) -> list[str]:
    """The command that runs the operation of ``job`` under strace, writing the trace to ``trace``."""
    return ["strace", "-qq", "-xx", "-X", "raw", "-s", str(1 << 26), "-e", "signal=none",
            "-e", "trace=" + ",".join(SYSCALLS), "-o", str(trace),
            sys.executable, "-m", "experiments.measurements.crash_explore.child", str(job), str(out)]


def _args(text: str) -> list[str]:
    # Strings are all hex escapes (-xx) and flags raw numbers (-X raw): no commas inside an argument.
    return [part.strip() for part in text.split(", ")] if text else []


def _string(arg: str) -> bytes:
    match = _STRING.match(arg)
    if match is None:
        raise ValueError(f"not a hex string: {arg[:80]}")
    if match.group(2):
        raise UnmodelledCall("strace cut a string short: raise -s")
    return bytes.fromhex(match.group(1).replace("\\x", ""))


def _int(arg: str) -> int:
    return int(arg, 16) if arg.startswith("0x") else int(arg)


@dataclass
class _Fd:
    """An open descriptor: its inode (None: the folder itself), position and O_APPEND."""

    ino: int | None
    offset: int = 0
    append: bool = False


class _Parser:
    """Walks a trace, keeping names, inodes and descriptors, recording between the marks."""

    def __init__(self, root: str, marks: str, initial: dict[str, bytes], ignore: tuple[str, ...]) -> None:
        self.root, self.marks, self.initial, self.ignore = root, marks, initial, ignore
        self.names: dict[str, int] = {}
        self.sizes: dict[int, int] = {}
        self.fds: dict[int, _Fd] = {}
        self.next_ino = 0
        self.log: OpLog | None = None
        self.written = 0
        self.done = False

    def _inode(self) -> int:
        self.next_ino += 1
        return self.next_ino - 1

    def _name(self, path: str, dirfd: int = _AT_FDCWD) -> str | None:
        """The name under the root that ``path`` (relative to ``dirfd`` or the cwd) denotes, else None."""
        if not os.path.isabs(path):
            handle = self.fds.get(dirfd)
            if dirfd != _AT_FDCWD and handle is not None and handle.ino is None:
                path = os.path.join(self.root, path)
            else:
                path = os.path.abspath(path)
        head, tail = os.path.split(os.path.normpath(path))
        if head != self.root or tail.endswith(self.ignore):
            return None
        return tail

    def _record(self, op: Op) -> None:
        if self.log is not None and not self.done:
            self.log.ops.append(op)
            self.log.acked_before.append(self.log.acked)

    def _mark(self, event: str) -> None:
        if event == "begin":
            names = {}
            for name in sorted(self.initial):
                names[name] = self.names[name] if name in self.names else self._inode()
                self.sizes[names[name]] = len(self.initial[name])
            self.names = dict(names)
            self.log = OpLog(names=names, contents={names[n]: data for n, data in self.initial.items()})
        elif event.startswith("handed-"):
            self.written = int(event.removeprefix("handed-"))
        elif event == "ack" and self.log is not None and not self.done:
            self.log.acked += 1
        elif event == "end":
            self.done = True

    def _open(self, path: str, flags: int, ret: int, dirfd: int = _AT_FDCWD) -> None:
        if ret < 0:
            if path.startswith(self.marks + os.sep):  # the child's marks are absolute paths
                self._mark(path[len(self.marks) + 1 :])
            return
        if os.path.normpath(path) == self.root:
            self.fds[ret] = _Fd(None)
            return
        name = self._name(path, dirfd)
        if name is None:
            return
        if name not in self.names:
            # Created here (the root starts empty, so an unknown name was not there before).
            self.names[name] = ino = self._inode()
            self.sizes[ino] = 0
            self._record(Creat(name, ino))
        ino = self.names[name]
        if flags & os.O_TRUNC and self.sizes.get(ino, 0):
            self.sizes[ino] = 0
            self._record(Trunc(ino, 0))
        self.fds[ret] = _Fd(ino, 0, bool(flags & os.O_APPEND))

    def _write(self, fd: int, data: bytes, ret: int, offset: int | None) -> None:
        handle = self.fds.get(fd)
        if handle is None or handle.ino is None or ret <= 0:
            return
        if offset is None:
            offset = self.sizes.get(handle.ino, 0) if handle.append else handle.offset
            handle.offset = offset + ret
        self.sizes[handle.ino] = max(self.sizes.get(handle.ino, 0), offset + ret)
        self._record(Write(handle.ino, offset, data[:ret]))

    def _truncate(self, ino: int, size: int) -> None:
        if self.sizes.get(ino, 0) != size:
            self.sizes[ino] = size
            self._record(Trunc(ino, size))

    def _move(self, src: str | None, dst: str | None, raw: tuple[str, str]) -> None:
        if src is None and dst is None:
            return
        if src is None or dst is None:
            raise UnmodelledCall(f"rename across the root's edge: {raw[0]} -> {raw[1]}")
        if src in self.names:
            self.names[dst] = self.names.pop(src)
        self._record(Rename(src, dst))

    def _unlink(self, name: str | None) -> None:
        if name is not None:
            self.names.pop(name, None)
            self._record(Unlink(name))

    def feed(self, line: str) -> None:
        """Take one line of the trace."""
        match = _LINE.match(line)
        if match is None:
            return  # "+++ exited +++" and the like
        call, args, ret = match["call"], _args(match["args"]), _int(match["ret"])
        if call in ("openat", "open", "creat"):
            dirfd = _int(args[0]) if call == "openat" else _AT_FDCWD
            path = _string(args[1] if call == "openat" else args[0]).decode("utf-8", "surrogateescape")
            creat = os.O_CREAT | os.O_WRONLY | os.O_TRUNC
            flags = creat if call == "creat" else _int(args[2 if call == "openat" else 1])
            self._open(path, flags, ret, dirfd)
        elif ret < 0:
            return
        elif call == "close":
            self.fds.pop(_int(args[0]), None)
        elif call in ("dup", "dup2", "dup3"):
            if _int(args[0]) in self.fds:
                self.fds[ret] = self.fds[_int(args[0])]
        elif call == "lseek":
            if (handle := self.fds.get(_int(args[0]))) is not None:
                handle.offset = ret
        elif call == "write":
            self._write(_int(args[0]), _string(args[1]), ret, None)
        elif call == "pwrite64":
            self._write(_int(args[0]), _string(args[1]), ret, _int(args[3]))
        elif call in ("fsync", "fdatasync"):
            handle = self.fds.get(_int(args[0]))
            if handle is not None:
                self._record(DirSync() if handle.ino is None else Sync(handle.ino, self.written))
        elif call == "ftruncate":
            handle = self.fds.get(_int(args[0]))
            if handle is not None and handle.ino is not None:
                self._truncate(handle.ino, _int(args[1]))
        elif call == "truncate":
            name = self._name(_string(args[0]).decode("utf-8", "surrogateescape"))
            if name is not None and name in self.names:
                self._truncate(self.names[name], _int(args[1]))
        elif call in ("rename", "renameat", "renameat2"):
            if call == "rename":
                raw = (_string(args[0]).decode(), _string(args[1]).decode())
                self._move(self._name(raw[0]), self._name(raw[1]), raw)
            else:
                raw = (_string(args[1]).decode(), _string(args[3]).decode())
                self._move(self._name(raw[0], _int(args[0])), self._name(raw[1], _int(args[2])), raw)
        elif call in ("unlink", "unlinkat"):
            path = _string(args[0] if call == "unlink" else args[1]).decode("utf-8", "surrogateescape")
            self._unlink(self._name(path, _int(args[0]) if call == "unlinkat" else _AT_FDCWD))
        elif call in _UNMODELLED:
            handle = self.fds.get(_int(args[0]))
            if handle is not None and handle.ino is not None and self.log is not None and not self.done:
                raise UnmodelledCall(f"{call} on a traced file: not modelled")


def parse_trace(lines: Iterable[str], root: str, marks: str, initial: dict[str, bytes],
                ignore: tuple[str, ...] = ("-shm",)) -> OpLog:
    """The operation log between the ``begin`` and ``end`` marks of a trace of one child.

    ``initial`` holds the files under ``root`` at the ``begin`` mark (read by the child just before).
    """
    parser = _Parser(os.path.normpath(root), os.path.normpath(marks), initial, ignore)
    for line in lines:
        parser.feed(line)
    if parser.log is None or not parser.done:
        raise RuntimeError("the trace has no begin/end marks: the traced operation did not run to its end")
    return parser.log
