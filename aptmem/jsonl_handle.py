"""One session a JSONL store writes to: its log descriptor, its writer lock, its sync policy.

The store (:mod:`aptmem.jsonl_store`) decides when to open, lock and close; a handle does what a
descriptor does: write a whole line (cutting a short write back off under the lock), sync as
the policy says, and close, syncing first when the file is still the session's.
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from aptmem.errors import StorageError
from aptmem.locking import SessionLock

__all__ = ["LogHandle", "SyncPolicy"]


@dataclass(frozen=True)
class SyncPolicy:
    """When appended bytes are synced: ``none``, ``always``, or ``batch`` (every ``size``
    appends or ``ns`` nanoseconds, checked at append time, and on close)."""

    sync: str
    size: int
    ns: int


@dataclass
class LogHandle:
    """A session's open state: the lock (its descriptor kept, the lock taken per call) and the log's descriptor."""

    path: Path
    lock: SessionLock | None
    policy: SyncPolicy
    fd: int = -1  # the O_APPEND descriptor of the log; -1 until an append opens it
    unsynced: int = 0
    last_sync_ns: int = field(default_factory=time.perf_counter_ns)
    failed: str | None = None
    sync_failed: bool = False  # fatal for this descriptor: its syncs can no longer be trusted
    pinned: int = 0  # operations and bursts under way: not evicted meanwhile

    def put(self, data: bytes | bytearray) -> None:
        """One ``os.write`` of ``data`` (whole lines); a short write is cut back off under the lock."""
        try:
            written = os.write(self.fd, data)
        except OSError as exc:
            self.failed = exc.strerror or str(exc)
            raise StorageError(exc.errno, f"{self.path}: append failed: {exc.strerror}") from exc
        if written != len(data):
            self._undo_short_write(written)

    def _undo_short_write(self, written: int) -> None:
        """A short write (disk full, file-size limit) left part of a line: cut it back off (only
        safe under the writer lock; without it the fragment stays and recovery treats it as damage)."""
        self.failed = f"short write of {written} bytes"
        if self.lock is not None:
            size = os.fstat(self.fd).st_size
            os.ftruncate(self.fd, size - written)
            self.failed = None
        left = "was removed" if self.failed is None else "was left for recovery (no writer lock held)"
        raise StorageError(errno.ENOSPC, f"{self.path}: append wrote only {written} bytes; the partial line {left}")

    def after_write(self, count: int) -> None:
        """Apply the sync policy after ``count`` entries were written."""
        if self.policy.sync == "always":
            self.sync()
        elif self.policy.sync == "batch":
            self.unsynced += count
            if self.unsynced >= self.policy.size or time.perf_counter_ns() - self.last_sync_ns >= self.policy.ns:
                self.sync()

    def sync(self) -> None:
        """``fdatasync`` the log; a failure is fatal for this descriptor."""
        if self.fd < 0:
            return  # closed meanwhile: the file was replaced, and the replacer synced what it read
        try:
            os.fdatasync(self.fd)
        except OSError as exc:
            # Fatal for this descriptor: after a failed fsync the kernel may have dropped the
            # dirty pages, and a retry could report success for data that is gone.
            self.failed, self.sync_failed = f"fdatasync failed: {exc.strerror}", True
            raise StorageError(exc.errno, f"{self.path}: {self.failed}") from exc
        self.unsynced = 0
        self.last_sync_ns = time.perf_counter_ns()

    def close_fd(self) -> None:
        """Close the log's descriptor (the next append reopens it), syncing first as the policy
        promises if the file it names is still the session's (a replaced one was read, and
        synced, by whoever replaced it)."""
        if self.fd < 0:
            return
        try:
            if self.policy.sync != "none" and self.unsynced and not self.sync_failed and os.fstat(self.fd).st_nlink:
                self.sync()
        finally:
            fd, self.fd = self.fd, -1
            self.unsynced = 0
            os.close(fd)

    def replaced(self) -> bool:
        """Whether the file the descriptor names has no name any more (a rewrite or repair replaced it)."""
        return self.fd >= 0 and os.fstat(self.fd).st_nlink == 0

    def close(self) -> None:
        """Sync as the policy promises, close both descriptors; raise if entries may not be durable."""
        unsynced = self.unsynced
        try:
            if self.policy.sync != "none" and self.unsynced and not self.sync_failed:
                self.sync()
        finally:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
            if self.lock is not None:
                self.lock.close()
        if self.sync_failed and unsynced:  # close promises durability: say it cannot
            raise StorageError(errno.EIO, f"{self.path}: {unsynced} entries since the last good sync may not be durable ({self.failed})")
