"""What a power loss would keep, learned from a writer's own file-system calls.

Installed in a writer process only (never in the library, never in the harness process), an
:class:`FsModel` replaces ``os.open``, ``os.write``, ``os.fsync``, ``os.fdatasync``,
``os.replace``, ``os.rename``, ``os.unlink``, ``os.ftruncate`` and ``os.close`` on the ``os``
module, which aptmem and the strategies call through, and keeps a model of the disk under one
folder by the POSIX rules a power loss plays by:

* a file's data is durable up to its last ``fsync``/``fdatasync`` (what was written after it is
  the *unsynced tail*; a file never synced has no durable data at all);
* a name in the folder (a file just created, or the target of a rename) is durable only once
  the folder itself was fsynced; until then a power loss reverts it (the file is absent, or the
  old file is back under the name). ext4 and XFS usually commit a new name with the file's own
  fsync, but nothing promises it, and a promise is what is being judged.

Inodes get ids of our own (the kernel reuses inode numbers, and an old file replaced by a
rename may still be what the disk holds under the name). When a file whose durable content is
"the first n bytes" is about to be overwritten, truncated, replaced or unlinked, those n bytes
are copied first, so :meth:`FsModel.snapshot` can always say what the disk holds.

Only Python-level I/O is visible: SQLite's C code makes its calls below this layer, so SQLite
is modelled from its documented rules instead (see :mod:`experiments.measurements.crash.power_loss`), or traced with
strace (:mod:`experiments.measurements.crash_explore.strace`).

**Operation logs.** After :meth:`FsModel.start_log` the model also records every call that
changes the folder as a logical operation (:mod:`experiments.core.crashsim.oplog`: create, write with
its offset and bytes, truncate, sync, folder sync, rename, unlink), starting from the files there
at that moment: the crash-state explorer (:mod:`experiments.measurements.crash_explore.states`) replays any subset
of them the POSIX rules allow.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from experiments.core.crashsim.oplog import Creat, DirSync, Op, OpLog, Rename, Sync, Trunc, Unlink, Write

__all__ = ["TRACED", "FileImage", "FsModel"]

#: The ``os`` functions replaced while the model is installed.
TRACED = ("open", "close", "write", "pwrite", "fsync", "fdatasync", "replace", "rename", "unlink", "ftruncate",
          "truncate")


@dataclass
class _Inode:
    """One file as the model knows it."""

    #: None: never synced (no durable data); int: the durable data is the first n bytes of the
    #: current content; bytes: the durable data, copied before the file was overwritten.
    synced: None | int | bytes = None
    #: entries the writer had written when this file was last synced (for the batch promise).
    synced_entries: int = 0


@dataclass
class _Handle:
    """An open descriptor under the folder: its inode (None for the folder itself)."""

    inode: int | None
    append: bool


@dataclass
class FileImage:
    """One name in the folder at a moment: its current bytes and what a power loss would keep.

    ``current`` is None when the name does not exist now; ``durable`` is None when the disk
    would not have the name at all after a power loss.
    """

    current: bytes | None
    durable: bytes | None
    #: entries written when the file now under this name was last synced (0: never): what the
    #: store itself made durable, whether or not the name made it to the disk too.
    synced_entries: int = 0


def _read(path: str) -> bytes:
    # io.open, not os.open: the model's own reads must not be traced.
    with io.open(path, "rb") as fh:
        return fh.read()


class FsModel:
    """The durable state of the files under ``root``, kept up to date by the traced calls.

    ``on_change(call)`` is called after every call that changes what is on disk (a write, a
    sync, a rename, an unlink, a truncate, an open that creates or truncates): each is a moment
    a power loss could strike. ``written`` is set by the writer (entries handed to the store so
    far) and recorded at each sync.
    """

    def __init__(self, root: str | os.PathLike[str], on_change: Callable[[str], None] | None = None) -> None:
        self.root = os.path.realpath(os.fspath(root))
        self.on_change = on_change
        self.written = 0
        self.names: dict[str, int] = {}  # current name -> inode id
        self.bound: dict[str, int] = {}  # durable name -> inode id (as of the last folder fsync)
        self.inodes: dict[int, _Inode] = {}
        self._fds: dict[int, _Handle] = {}
        self._real: dict[str, Callable[..., Any]] = {}
        #: the operation log, once :meth:`start_log` was called (None: nothing is recorded)
        self.log: OpLog | None = None
        self._ignored: tuple[str, ...] = ()

    # -- installing ------------------------------------------------------------------------------

    def install(self) -> None:
        """Replace the traced ``os`` functions with the model's wrappers."""
        if self._real:
            return
        self._real = {name: getattr(os, name) for name in TRACED}
        wrappers = {"open": self._open, "close": self._close, "write": self._write, "pwrite": self._pwrite,
                    "fsync": self._fsync, "fdatasync": self._fdatasync, "replace": self._replace,
                    "rename": self._rename, "unlink": self._unlink, "ftruncate": self._ftruncate,
                    "truncate": self._truncate}
        for name, wrapper in wrappers.items():
            setattr(os, name, wrapper)

    def uninstall(self) -> None:
        """Put the real ``os`` functions back."""
        for name, real in self._real.items():
            setattr(os, name, real)
        self._real = {}

    # -- the operation log -----------------------------------------------------------------------

    def start_log(self, ignore: tuple[str, ...] = ()) -> OpLog:
        """Start recording operations; the files under the root now are the log's initial state.

        Names ending in one of ``ignore`` (lock files, say) are left out of the log altogether.
        Call it with the model installed and no descriptor under the root open: a descriptor
        opened before the model was installed is invisible to it.
        """
        self._ignored = ignore
        names: dict[str, int] = {}
        contents: dict[int, bytes] = {}
        for name in sorted(os.listdir(self.root)):
            path = os.path.join(self.root, name)
            if name.endswith(ignore) or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            if name not in self.names:
                self.names[name] = self.bound[name] = self._new_inode(os.lstat(path).st_size)
            names[name] = self.names[name]
            contents[self.names[name]] = _read(path)
        self.log = OpLog(names=names, contents=contents)
        return self.log

    def ack(self) -> None:
        """The writer acknowledged something (an append returned): count it in the log."""
        if self.log is not None:
            self.log.acked += 1

    def _record(self, op: Op, *names: str | None) -> None:
        """Append ``op`` to the log (if recording), unless it concerns an ignored name."""
        if self.log is None or (self._ignored and any(n is not None and n.endswith(self._ignored) for n in names)):
            return
        self.log.ops.append(op)
        self.log.acked_before.append(self.log.acked)

    def _ino_name(self, ino: int | None) -> str | None:
        return None if ino is None else self._holder(ino)

    # -- bookkeeping -----------------------------------------------------------------------------

    def _name(self, path: Any) -> str | None:
        """The file name if ``path`` is directly under the root, else None."""
        full = os.path.abspath(os.fspath(path))
        head, tail = os.path.split(full)
        return tail if os.path.realpath(head) == self.root else None

    def _is_root(self, path: Any) -> bool:
        return os.path.realpath(os.path.abspath(os.fspath(path))) == self.root

    def _new_inode(self, synced: None | int = None) -> int:
        ino = len(self.inodes)
        self.inodes[ino] = _Inode(synced=synced)
        return ino

    def _holder(self, ino: int) -> str | None:
        """A current name of the inode (None once it has none)."""
        for name, value in self.names.items():
            if value == ino:
                return name
        return None

    def _capture(self, ino: int) -> None:
        """Copy the inode's durable bytes before its current content changes underneath them."""
        state = self.inodes[ino]
        if isinstance(state.synced, int):
            holder = self._holder(ino)
            data = _read(os.path.join(self.root, holder)) if holder is not None else b""
            state.synced = data[: state.synced]

    def _changed(self, call: str) -> None:
        if self.on_change is not None:
            self.on_change(call)

    # -- the wrappers ----------------------------------------------------------------------------

    def _open(self, path: Any, flags: int, mode: int = 0o777, *args: Any, **kwargs: Any) -> int:
        real = self._real["open"]
        if self._is_root(path):
            fd = real(path, flags, mode, *args, **kwargs)
            self._fds[fd] = _Handle(None, False)
            return fd
        name = self._name(path)
        if name is None:
            return real(path, flags, mode, *args, **kwargs)
        existed = os.path.lexists(os.path.join(self.root, name))
        if existed and name not in self.names:
            # A file the model has not seen created: it was there before, so take it as durable.
            self.names[name] = self.bound[name] = self._new_inode(os.lstat(os.path.join(self.root, name)).st_size)
        size = os.lstat(os.path.join(self.root, name)).st_size if existed else 0
        if existed and flags & os.O_TRUNC:
            self._capture(self.names[name])
        fd = real(path, flags, mode, *args, **kwargs)
        if not existed:
            self.names[name] = self._new_inode()
            self._record(Creat(name, self.names[name]), name)
        elif flags & os.O_TRUNC and size:
            self._record(Trunc(self.names[name], 0), name)
        self._fds[fd] = _Handle(self.names[name], bool(flags & os.O_APPEND))
        if not existed or flags & os.O_TRUNC:
            self._changed("open")
        return fd

    def _close(self, fd: int) -> None:
        self._fds.pop(fd, None)
        self._real["close"](fd)

    def _write(self, fd: int, data: Any) -> int:
        handle = self._fds.get(fd)
        if handle is None or handle.inode is None:
            return self._real["write"](fd, data)
        state = self.inodes[handle.inode]
        # Where the bytes land: the end of the file for an O_APPEND descriptor, else its position.
        offset = os.fstat(fd).st_size if handle.append else os.lseek(fd, 0, os.SEEK_CUR)
        if isinstance(state.synced, int) and not handle.append and offset < state.synced:
            self._capture(handle.inode)  # an overwrite of synced bytes (a rewrite in place)
        written = self._real["write"](fd, data)
        if written:
            self._record(Write(handle.inode, offset, bytes(memoryview(data)[:written])), self._ino_name(handle.inode))
        self._changed("write")
        return written

    def _pwrite(self, fd: int, data: Any, offset: int) -> int:
        handle = self._fds.get(fd)
        if handle is None or handle.inode is None:
            return self._real["pwrite"](fd, data, offset)
        state = self.inodes[handle.inode]
        if isinstance(state.synced, int) and offset < state.synced:
            self._capture(handle.inode)
        written = self._real["pwrite"](fd, data, offset)
        if written:
            self._record(Write(handle.inode, offset, bytes(memoryview(data)[:written])), self._ino_name(handle.inode))
        self._changed("pwrite")
        return written

    def _sync(self, call: str, fd: int) -> None:
        self._real[call](fd)
        handle = self._fds.get(fd)
        if handle is None:
            return
        if handle.inode is None:
            self.bound = dict(self.names)  # the folder is synced: every current name is durable
            self._record(DirSync())
        else:
            state = self.inodes[handle.inode]
            state.synced = os.fstat(fd).st_size
            state.synced_entries = self.written
            self._record(Sync(handle.inode, self.written), self._ino_name(handle.inode))
        self._changed(call)

    def _fsync(self, fd: int) -> None:
        self._sync("fsync", fd)

    def _fdatasync(self, fd: int) -> None:
        self._sync("fdatasync", fd)

    def _move(self, call: str, src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        source, target = self._name(src), self._name(dst)
        if target is not None and target in self.names:
            self._capture(self.names[target])  # the old file loses its name; the disk may keep it
        self._real[call](src, dst, *args, **kwargs)
        if self.log is not None and (source is None) != (target is None):
            raise NotImplementedError(f"{call} across the folder's edge ({src} -> {dst}) is not modelled")
        if source is not None and target is not None:
            self._record(Rename(source, target), source, target)
        ino = self.names.pop(source, None) if source is not None else None
        if target is not None:
            if ino is None:
                self.names.pop(target, None)  # moved in from elsewhere: unknown to the model
            else:
                self.names[target] = ino
        self._changed(call)

    def _replace(self, src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        self._move("replace", src, dst, *args, **kwargs)

    def _rename(self, src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        self._move("rename", src, dst, *args, **kwargs)

    def _unlink(self, path: Any, *args: Any, **kwargs: Any) -> None:
        name = self._name(path)
        if name is not None and name in self.names:
            self._capture(self.names[name])
        self._real["unlink"](path, *args, **kwargs)
        if name is not None:
            self._record(Unlink(name), name)
            self.names.pop(name, None)
            self._changed("unlink")

    def _ftruncate(self, fd: int, length: int) -> None:
        handle = self._fds.get(fd)
        size = -1
        if handle is not None and handle.inode is not None:
            state = self.inodes[handle.inode]
            if isinstance(state.synced, int) and length < state.synced:
                self._capture(handle.inode)
            size = os.fstat(fd).st_size
        self._real["ftruncate"](fd, length)
        if handle is not None:
            if handle.inode is not None and size != length:  # a cut to the size it has changes nothing
                self._record(Trunc(handle.inode, length), self._ino_name(handle.inode))
            self._changed("ftruncate")

    def _truncate(self, path: Any, length: int) -> None:
        if isinstance(path, int):  # os.truncate accepts a descriptor too
            return self._ftruncate(path, length)
        name = self._name(path)
        if name is None or name not in self.names:
            return self._real["truncate"](path, length)
        ino = self.names[name]
        state = self.inodes[ino]
        if isinstance(state.synced, int) and length < state.synced:
            self._capture(ino)
        size = os.lstat(os.path.join(self.root, name)).st_size
        self._real["truncate"](path, length)
        if size != length:
            self._record(Trunc(ino, length), name)
        self._changed("truncate")

    # -- the disk after a power loss -------------------------------------------------------------

    def snapshot(self) -> dict[str, FileImage]:
        """Every name under the root, now and as a power loss would leave it (unsynced tails kept
        in ``current``; :mod:`experiments.measurements.crash.power_loss` decides how much of them survives)."""
        files: dict[str, FileImage] = {}
        for name in sorted(set(self.names) | set(self.bound)):
            current = _read(os.path.join(self.root, name)) if name in self.names else None
            durable: bytes | None = None
            synced_entries = self.inodes[self.names.get(name, self.bound.get(name, -1))].synced_entries \
                if name in self.names or name in self.bound else 0
            if name in self.bound:
                ino = self.bound[name]
                state = self.inodes[ino]
                if state.synced is None:
                    durable = b""  # the name is durable, none of its data is
                elif isinstance(state.synced, bytes):
                    durable = state.synced
                else:
                    holder = self._holder(ino)
                    data = current if holder == name else _read(os.path.join(self.root, holder)) if holder else b""
                    durable = (data or b"")[: state.synced]
            files[name] = FileImage(current, durable, synced_entries)
        return files
