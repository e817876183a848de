"""Inter-process locks for sessions: ``flock`` on a lock file whose descriptor stays open.

A session's writer lock (``<id>.lock``) is taken by every append, compaction and repair, for
as long as that one call runs, so a store never holds the lock of a session it is not writing
to at that moment. Taking it must therefore cost about a system call, not an ``open``: the
descriptor of the lock file is opened once and kept (closed by :meth:`SessionLock.close`),
and each acquire and release is one ``flock``. (``filelock``, used here before, opens and
closes the file at every acquire: about 260 µs against 1 µs here, measured side by side by
``benchmarks/append_lock_cost.py``.) The working-memory sidecar has its own lock file,
held for one read-modify-write.

``flock`` locks belong to the open file description: two processes, or two descriptors in one
process, exclude each other; one :class:`SessionLock` is re-entrant (a count), so a store can
hold a session's lock across a burst of appends and take it again in each of them.

A lock file is never followed through a symlink and must be a regular file (``O_NOFOLLOW``,
``O_NONBLOCK`` on open, then ``fstat``), so a planted link or FIFO can neither redirect nor
hang it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time

from aptmem.errors import LockTimeout, StorageError, UnsafePathError

__all__ = ["SessionLock"]

_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
#: Waiting for a lock held elsewhere: poll, doubling the pause from the first to the last. The
#: last is short: holders keep the lock for one append at a time, and a waiter that sleeps long
#: between tries keeps missing the moments it is free while other writers take it.
_FIRST_PAUSE = 0.0005
_LAST_PAUSE = 0.001


class SessionLock:
    """An exclusive, re-entrant lock on a lock file (mode 0600), with a clear timeout error."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = 10.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self._fd = -1
        self._depth = 0

    @property
    def held(self) -> bool:
        """Whether this process holds the lock through this object."""
        return self._depth > 0

    def _descriptor(self) -> int:
        """The lock file's descriptor, opened (and created 0600) on first use."""
        if self._fd >= 0:
            return self._fd
        try:
            fd = os.open(self.path, _FLAGS, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link planted at the lock's name
                raise UnsafePathError(self.path, "is a symlink; refusing to follow it") from None
            raise StorageError(exc.errno, f"{self.path}: cannot take the lock: {exc.strerror}") from exc
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise UnsafePathError(self.path, "is not a regular file")
        self._fd = fd
        return fd

    def acquire(self) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds (forever if negative).

        Returns True when this call took it, False when this object already held it (the count
        went up). Raises :class:`LockTimeout` when another holder keeps it too long,
        :class:`UnsafePathError` when the lock file is a symlink or not a regular file,
        :class:`StorageError` when it cannot be created (a folder that is not writable, a full disk).
        """
        if self._depth:
            self._depth += 1
            return False
        fd = self._fd if self._fd >= 0 else self._descriptor()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the common case: free, one system call
        except BlockingIOError:
            self._wait(fd)
        except OSError as exc:
            raise StorageError(exc.errno, f"{self.path}: cannot take the lock: {exc.strerror}") from exc
        self._depth = 1
        return True

    def _wait(self, fd: int) -> None:
        """Poll until the lock is ours or ``timeout`` passed (then :class:`LockTimeout`)."""
        deadline = None if self.timeout < 0 else time.monotonic() + self.timeout
        pause = _FIRST_PAUSE
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                raise LockTimeout(self.path, self.timeout)
            time.sleep(pause if deadline is None else max(0.0, min(pause, deadline - time.monotonic())))
            pause = min(2 * pause, _LAST_PAUSE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                continue
            except OSError as exc:
                raise StorageError(exc.errno, f"{self.path}: cannot take the lock: {exc.strerror}") from exc

    def release(self) -> None:
        """Give back one level of the lock; the last one unlocks (the descriptor stays open)."""
        if not self._depth:
            raise RuntimeError(f"{self.path}: released a lock that is not held")
        self._depth -= 1
        if not self._depth:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Unlock if held and close the lock file's descriptor (the next acquire reopens it)."""
        if self._fd < 0:
            return
        fd, self._fd, self._depth = self._fd, -1, 0
        os.close(fd)  # closing the last descriptor of the description drops its lock

    def __enter__(self) -> "SessionLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        """Release; leaving the outermost ``with`` also closes the descriptor (a short-lived lock)."""
        self.release()
        if not self._depth:
            self.close()
