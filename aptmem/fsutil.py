"""Small, careful file-system primitives: safe opens, atomic replace, folder sync.

Session files are created with mode 0600 and never followed through symlinks: every open uses
``O_NOFOLLOW`` and checks with ``fstat`` that it got a regular file. The open itself is
non-blocking (``O_NONBLOCK``, cleared once the file is known to be regular), so a FIFO or a
device planted at a session path is refused instead of hanging the caller. A file opened for
writing must have exactly one name: writing through a hard link would change the file behind
another name too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from aptmem.errors import StorageError, UnsafePathError

__all__ = [
    "FILE_MODE",
    "atomic_write",
    "create_new",
    "fsync_dir",
    "open_append",
    "open_read",
    "open_truncate",
    "ensure_root",
    "sweep_temp_files",
    "temp_prefix",
    "write_all",
]

FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def ensure_root(root: str | os.PathLike[str]) -> Path:
    """Create the sessions folder if needed (mode 0700) and return it as a Path."""
    path = Path(root)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:  # a file (or a dangling link) where the folder should be
        pass
    except OSError as exc:
        raise StorageError(exc.errno, f"{path}: cannot create the sessions folder: {exc.strerror}") from exc
    if not path.is_dir():
        raise UnsafePathError(path, "is not a folder")
    return path


def _checked_fd(fd: int, path: str | os.PathLike[str], writable: bool) -> int:
    """Return ``fd`` if it is a regular file (with one name, if ``writable``), else close it and raise."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePathError(path, "is not a regular file")
    if writable and st.st_nlink > 1:
        os.close(fd)
        raise UnsafePathError(path, f"has {st.st_nlink} hard links; refusing to write through a name another file shares")
    if _NONBLOCK:
        # Opened non-blocking so that a FIFO could not hang the open; a regular file ignores the
        # flag, but clear it so the descriptor behaves as any other.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    return fd


def _open(path: str | os.PathLike[str], flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` that refuses symlinks, FIFOs and devices with a clear error instead of ELOOP or a hang."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and _NOFOLLOW):
            raise UnsafePathError(path, "is a symlink; refusing to follow it") from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened for writing without blocking
            raise UnsafePathError(path, "is not a regular file") from None
        raise
    return _checked_fd(fd, path, writable=(flags & os.O_ACCMODE) != os.O_RDONLY)


def open_append(path: str | os.PathLike[str], *, readable: bool = False) -> int:
    """Open (creating with mode 0600) a session file for appending (and reading); return the descriptor."""
    return _open(path, (os.O_RDWR if readable else os.O_WRONLY) | os.O_APPEND | os.O_CREAT)


def open_truncate(path: str | os.PathLike[str]) -> int:
    """Open (creating with mode 0600) a file for writing from the start, cut to zero length.

    This is ``open(path, "w")`` as most libraries save a document: the old content is gone the
    moment the open returns, before the new content is written.
    """
    return _open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)


def create_new(path: str | os.PathLike[str]) -> int:
    """Create a new file (mode 0600) for writing; raise ``FileExistsError`` if anything is there.

    ``O_EXCL`` also refuses a symlink at ``path``, dangling or not.
    """
    return _open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)


def open_read(path: str | os.PathLike[str], writable: bool = False) -> int:
    """Open an existing session file for reading (and writing, for repairs) without following links."""
    return _open(path, os.O_RDWR if writable else os.O_RDONLY)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a folder so that a rename or a new file in it survives a power loss."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write every byte of ``data`` to ``fd``, looping over short writes."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # pragma: no cover - os.write raises rather than returning 0 for regular files
            raise StorageError(errno.EIO, "write made no progress")
        view = view[n:]


def temp_prefix(path: str | os.PathLike[str]) -> str:
    """The name prefix of :func:`atomic_write`'s temp files for ``path`` (they end in ``.tmp``)."""
    return f".{Path(path).name}."


def sweep_temp_files(path: str | os.PathLike[str]) -> int:
    """Remove the temp files that killed :func:`atomic_write` calls for ``path`` left; return how many.

    Only safe while no writer of ``path`` is between creating its temp file and the rename:
    the caller holds the lock every writer of ``path`` takes.
    """
    target = Path(path)
    prefix, removed = temp_prefix(target), 0
    try:
        items = list(os.scandir(target.parent))
    except OSError:
        return 0
    for item in items:
        if item.name.startswith(prefix) and item.name.endswith(".tmp") and item.is_file(follow_symlinks=False):
            try:
                os.unlink(item.path)
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def atomic_write(
    path: str | os.PathLike[str],
    chunks: Iterable[bytes] | bytes,
    *,
    sync: bool = True,
    before_commit: Callable[[], None] | None = None,
) -> None:
    """Replace ``path`` with ``chunks`` atomically: temp file, fsync, rename, fsync of the folder.

    A crash at any moment leaves either the old file or the new one, never a mix. A symlink at
    ``path`` is refused rather than replaced, so a planted link cannot redirect the write.
    ``before_commit`` runs once the temp file is complete and synced, just before the rename
    (e.g. to make a quarantine durable first); if it raises, nothing is renamed.
    """
    target = Path(path)
    if target.is_symlink():
        raise UnsafePathError(target, "is a symlink; refusing to replace it")
    folder = target.parent
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, FILE_MODE)
        if isinstance(chunks, (bytes, bytearray, memoryview)):
            chunks = (bytes(chunks),)
        for chunk in chunks:
            write_all(fd, chunk)
        if sync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        if before_commit is not None:
            before_commit()
        os.replace(tmp, target)
        tmp = ""
        if sync:
            fsync_dir(folder)
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
