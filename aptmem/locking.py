"""Inter-process locks for sessions, on top of ``filelock``.

A session's writer lock is held by the one store that appends to it, for as long as it does
(as a database holds its LOCK file), so appends pay nothing per call. The working-memory
sidecar has its own lock, held only for one read-modify-write.

A lock file is never followed through a symlink: older ``filelock`` releases open it with
``O_TRUNC`` and ``fchmod`` it, so a planted link would truncate (and re-mode) whatever it points
at. The check here holds whatever ``filelock`` version is installed.
"""

from __future__ import annotations

import errno
import os

import filelock

from aptmem.errors import LockTimeout, StorageError, UnsafePathError

__all__ = ["SessionLock"]


class SessionLock:
    """An exclusive, re-entrant lock on a lock file (mode 0600), with a clear timeout error."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = 10.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        # thread_local=False: a store may be used from several threads of one process.
        self._lock = filelock.FileLock(self.path, timeout=timeout, mode=0o600, thread_local=False)

    @property
    def held(self) -> bool:
        """Whether this process holds the lock through this object."""
        return self._lock.is_locked

    def acquire(self) -> None:
        """Take the lock, waiting at most ``timeout`` seconds (forever if negative).

        Raises :class:`LockTimeout` when another process holds it too long,
        :class:`UnsafePathError` when the lock file is a symlink, :class:`StorageError` when the
        lock file cannot be created (a folder that is not writable, a full disk).
        """
        if os.path.islink(self.path):
            raise UnsafePathError(self.path, "is a symlink; refusing to follow it")
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise LockTimeout(self.path, self.timeout) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link planted between the check and the open
                raise UnsafePathError(self.path, "is a symlink; refusing to follow it") from None
            raise StorageError(exc.errno, f"{self.path}: cannot take the lock: {exc.strerror}") from exc

    def release(self) -> None:
        """Give back one level of the lock."""
        self._lock.release()

    def __enter__(self) -> "SessionLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
