"""The file operations one strategy operation issued, as a log a crash can cut (ALICE's logical ops).

A log starts from the files under one folder (``names`` -> inode id, ``contents`` per inode: the
state before the operation, taken as durable) and lists the operations in the order issued:

* ``creat``: a new name in the folder, bound to a new (empty) inode;
* ``write``: bytes written at an offset of an inode (``os.write``/``pwrite``; an append's offset
  is the file's size at the time);
* ``trunc``: an inode cut (or extended) to a size (``O_TRUNC``, ``ftruncate``, ``truncate``);
* ``sync``: ``fsync``/``fdatasync`` of a file, with how many entries the writer had handed to
  the store by then (for the ``batch`` promise);
* ``dirsync``: ``fsync`` of the folder itself;
* ``rename`` and ``unlink`` of names in the folder.

Inodes have ids of the recorder's own, so a write through a descriptor lands on the right file
whatever name it has since been given. ``acked_before[i]`` is how many acknowledgements the writer
had made before operation ``i`` was issued (``acked`` at the end): a crash between two operations
is judged as if every acknowledgement made before it had been seen, the stricter reading.

Recorded by :class:`experiments.core.crashsim.fs_model.FsModel` (Python-level calls) or parsed from strace
(:mod:`experiments.measurements.crash_explore.strace`, SQLite's C-level calls); replayed by :class:`Disk`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

__all__ = ["Creat", "Write", "Trunc", "Sync", "DirSync", "Rename", "Unlink", "Op", "DATA_OPS", "NAME_OPS",
           "OpLog", "Disk", "describe", "replay"]


class Creat(msgspec.Struct, tag="creat", frozen=True):
    """A new name ``name`` in the folder, bound to the new inode ``ino``."""

    name: str
    ino: int


class Write(msgspec.Struct, tag="write", frozen=True):
    """``data`` written at byte ``offset`` of inode ``ino``."""

    ino: int
    offset: int
    data: bytes


class Trunc(msgspec.Struct, tag="trunc", frozen=True):
    """Inode ``ino`` cut (or extended with NUL bytes) to ``size`` bytes."""

    ino: int
    size: int


class Sync(msgspec.Struct, tag="sync", frozen=True):
    """``fsync``/``fdatasync`` of inode ``ino``; ``written``: entries handed to the store by then."""

    ino: int
    written: int = 0


class DirSync(msgspec.Struct, tag="dirsync", frozen=True):
    """``fsync`` of the folder: every name operation before it is durable."""


class Rename(msgspec.Struct, tag="rename", frozen=True):
    """Name ``src`` moved to ``dst`` (replacing whatever ``dst`` named)."""

    src: str
    dst: str


class Unlink(msgspec.Struct, tag="unlink", frozen=True):
    """Name ``name`` removed from the folder."""

    name: str


Op = Creat | Write | Trunc | Sync | DirSync | Rename | Unlink
#: Operations on a file's data: durable once a later ``sync`` of the same inode was issued.
DATA_OPS = (Write, Trunc)
#: Operations on the folder's names: durable once a later ``dirsync`` was issued.
NAME_OPS = (Creat, Rename, Unlink)


class OpLog(msgspec.Struct, kw_only=True):
    """The initial files and the operations issued after them (see the module docstring)."""

    names: dict[str, int]
    contents: dict[int, bytes]
    ops: list[Op] = []
    acked_before: list[int] = []
    acked: int = 0

    def acked_at(self, point: int) -> int:
        """Acknowledgements made before a crash after ``point`` operations."""
        return self.acked_before[point] if point < len(self.ops) else self.acked

    def synced_written(self, point: int, floor: int = 0) -> int:
        """The most entries any ``sync`` among the first ``point`` operations covered (``floor`` if none)."""
        return max([floor, *(op.written for op in self.ops[:point] if isinstance(op, Sync))])

    def pending(self, point: int) -> tuple[list[int], list[int]]:
        """Indexes of the data and of the name operations among the first ``point`` that no later
        sync (among them) made durable: what a power loss after ``point`` operations may undo."""
        data: list[int] = []
        names: list[int] = []
        synced: set[int] = set()  # inodes synced after the op being looked at
        dir_synced = False
        for index in range(point - 1, -1, -1):
            op = self.ops[index]
            if isinstance(op, Sync):
                synced.add(op.ino)
            elif isinstance(op, DirSync):
                dir_synced = True
            elif isinstance(op, DATA_OPS) and op.ino not in synced:
                data.append(index)
            elif isinstance(op, NAME_OPS) and not dir_synced:
                names.append(index)
        return data[::-1], names[::-1]


@dataclass
class Disk:
    """Files as the disk holds them: names bound to inodes, and each inode's bytes."""

    names: dict[str, int]
    data: dict[int, bytearray] = field(default_factory=dict)

    @classmethod
    def initial(cls, log: OpLog) -> "Disk":
        """The state before the operation."""
        return cls(dict(log.names), {ino: bytearray(data) for ino, data in log.contents.items()})

    def apply(self, op: Op) -> None:
        """Make ``op`` happen on this disk."""
        if isinstance(op, Write):
            buf = self.data.setdefault(op.ino, bytearray())
            end = op.offset + len(op.data)
            if len(buf) < op.offset:
                buf.extend(bytes(op.offset - len(buf)))  # a hole reads as NUL bytes
            buf[op.offset : end] = op.data
        elif isinstance(op, Trunc):
            buf = self.data.setdefault(op.ino, bytearray())
            if op.size < len(buf):
                del buf[op.size :]
            else:
                buf.extend(bytes(op.size - len(buf)))
        elif isinstance(op, Creat):
            self.names[op.name] = op.ino
            self.data.setdefault(op.ino, bytearray())
        elif isinstance(op, Rename):
            if op.src in self.names:  # a rename of a name the disk never got does nothing
                self.names[op.dst] = self.names.pop(op.src)
        elif isinstance(op, Unlink):
            self.names.pop(op.name, None)

    def files(self) -> dict[str, bytes]:
        """Every name and its bytes, sorted by name."""
        return {name: bytes(self.data.get(ino, b"")) for name, ino in sorted(self.names.items())}


def replay(log: OpLog, point: int | None = None) -> dict[str, bytes]:
    """The files after the first ``point`` operations (all by default), every one of them on disk."""
    disk = Disk.initial(log)
    for op in log.ops[: len(log.ops) if point is None else point]:
        disk.apply(op)
    return disk.files()


def describe(log: OpLog, index: int) -> str:
    """A short human description of operation ``index`` (files named as they were then)."""
    names = dict(log.names)
    for op in log.ops[:index]:
        if isinstance(op, Creat):
            names[op.name] = op.ino
        elif isinstance(op, Rename) and op.src in names:
            names[op.dst] = names.pop(op.src)
        elif isinstance(op, Unlink):
            names.pop(op.name, None)
    by_ino = {ino: name for name, ino in names.items()}
    op = log.ops[index]
    label = by_ino.get(getattr(op, "ino", -1), f"inode {getattr(op, 'ino', '?')}")
    if isinstance(op, Write):
        return f"write {len(op.data)} B at {op.offset} of {label}"
    if isinstance(op, Trunc):
        return f"truncate {label} to {op.size} B"
    if isinstance(op, Sync):
        return f"fsync {label}"
    if isinstance(op, DirSync):
        return "fsync the folder"
    if isinstance(op, Creat):
        return f"create {op.name}"
    if isinstance(op, Rename):
        return f"rename {op.src} -> {op.dst}"
    return f"unlink {op.name}"  # Unlink
