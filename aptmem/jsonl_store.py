"""The reference strategy: one append-only JSONL file per session.

Each append is one ``os.write`` of one whole line on an ``O_APPEND`` descriptor, so a process
crash leaves at most a torn last line, never a damaged middle; then the sync policy runs:

* ``none``: no sync; a process crash loses nothing the kernel accepted, a power loss may.
* ``always``: ``fdatasync`` after every append; acknowledged means durable.
* ``batch`` (the default, :data:`DEFAULT_SYNC`, also ``aptmem append``'s): ``fdatasync`` every ``batch_size`` appends or ``batch_ms`` milliseconds (checked at
  append time) and on ``close``; a power loss loses at most the current batch.

Files: ``<root>/<id>.jsonl`` (the log, mode 0600), ``<id>.jsonl.quarantine`` (bytes removed by
repairs), ``<id>.lock`` (the writer lock, held by the store that appends).
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aptmem.entries import Compaction, Entry, encode_line, encode_line_into
from aptmem.errors import ClosedStoreError, CorruptLogError, EntryTooLarge, SessionExists, SessionNotFound, StorageError
from aptmem.fsutil import atomic_write, ensure_root, fsync_dir, open_append, open_read
from aptmem.ids import is_session_id, session_path
from aptmem.locking import SessionLock
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.recovery import LogScan, check_mode, repair_log
from aptmem.store import RECOVERY_MODES, Capabilities, RecoveryReport, SessionStats
from aptmem.tailscan import read_live_tail

__all__ = ["DEFAULT_SYNC", "JsonlStore", "SYNC_POLICIES", "LOG_SUFFIX"]

SYNC_POLICIES = ("none", "always", "batch")
#: The sync policy of a store (and of ``aptmem append``) when none is asked for.
DEFAULT_SYNC = "batch"
LOG_SUFFIX = ".jsonl"
LOCK_SUFFIX = ".lock"
_DURABILITY = {"none": "process", "always": "per_append", "batch": "batch"}


@dataclass
class _Writer:
    """The open state of one session being appended to."""

    fd: int
    lock: SessionLock | None
    unsynced: int = 0
    last_sync_ns: int = field(default_factory=time.perf_counter_ns)
    failed: str | None = None
    sync_failed: bool = False  # fatal for this descriptor: its syncs can no longer be trusted


class JsonlStore:
    """Append-only JSONL sessions under ``root``; see the module docstring for the policies.

    Like a file object, a store is not meant to be appended to from several threads at once
    (the append path takes no thread lock, to stay within a hair of a raw ``os.write``); give
    each thread its own store, or lock around it. Several processes are safe: the per-session
    writer lock serializes them.
    """

    name = "jsonl"

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        sync: str = DEFAULT_SYNC,
        batch_size: int = 64,
        batch_ms: float = 200.0,
        recovery: str = "skip",
        line_cap: int = DEFAULT_LINE_CAP,
        lock: bool = True,
        lock_timeout: float = 10.0,
    ) -> None:
        if sync not in SYNC_POLICIES:
            raise ValueError(f"unknown sync policy {sync!r}; choose one of {', '.join(SYNC_POLICIES)}")
        if batch_size < 1 or batch_ms < 0:
            raise ValueError("batch_size must be >= 1 and batch_ms >= 0")
        self.root = ensure_root(root)
        self.sync = sync
        self.batch_size = batch_size
        self.batch_ns = int(batch_ms * 1_000_000)
        self.recovery = check_mode(recovery)
        self.line_cap = line_cap
        self.lock = lock
        self.lock_timeout = lock_timeout
        self.capabilities = Capabilities(
            durability=_DURABILITY[sync],  # type: ignore[arg-type]
            recovery_modes=RECOVERY_MODES,
            multi_process_safe=lock,
        )
        self._writers: dict[str, _Writer] = {}
        self._line = bytearray()  # the reused encode buffer of the append path
        self._closed = False

    # -- paths -------------------------------------------------------------------------------

    def path(self, session_id: str) -> Path:
        """Return the log file of a session (the id is validated first)."""
        return session_path(self.root, session_id, LOG_SUFFIX)

    def _existing(self, session_id: str) -> Path:
        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionNotFound(session_id, str(self.root))
        return path

    # -- sessions ----------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create an empty session file (0600), refusing one that exists."""
        self._check_open()
        path = self.path(session_id)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise SessionExists(session_id, str(self.root)) from None
        except OSError as exc:
            raise StorageError(exc.errno, f"{path}: cannot create the session: {exc.strerror}") from exc
        os.close(fd)
        self._sync_new_name(path)

    def exists(self, session_id: str) -> bool:
        """Tell whether the session's log exists."""
        return os.path.lexists(self.path(session_id))

    def sessions(self) -> list[str]:
        """List the ids of the sessions under the root, sorted."""
        return sorted(
            name[: -len(LOG_SUFFIX)]
            for name in os.listdir(self.root)
            if name.endswith(LOG_SUFFIX) and is_session_id(name[: -len(LOG_SUFFIX)])
        )

    # -- writing -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedStoreError("the store is closed")

    def _lock_for(self, session_id: str) -> SessionLock | None:
        if not self.lock:
            return None
        return SessionLock(session_path(self.root, session_id, LOCK_SUFFIX), self.lock_timeout)

    def _writer(self, session_id: str) -> _Writer:
        """Return the session's open writer, opening (and if needed repairing) it first."""
        writer = self._writers.get(session_id)
        if writer is not None:
            if writer.failed:
                raise StorageError(errno.EIO, f"{self.path(session_id)}: an earlier write failed ({writer.failed}); reopen the store")
            return writer
        self._check_open()
        path = self.path(session_id)
        lock = self._lock_for(session_id)
        if lock is not None:
            lock.acquire()
        try:
            new_line = self._heal_tail(path)
            created = not os.path.lexists(path)
            try:
                fd = open_append(path)
            except OSError as exc:  # e.g. a folder that is not writable: say which file and why
                raise StorageError(exc.errno, f"{path}: cannot open for appending: {exc.strerror}") from exc
            try:
                if new_line:  # end the fragment (or, if it was a line in flight, add a blank line)
                    os.write(fd, b"\n")
                if created and self.sync != "none":
                    # A log created by its first append: its name must be durable before an append is
                    # acknowledged as durable (POSIX: only after an fsync of its folder; as ``create``).
                    self._sync_new_name(path)
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        writer = self._writers[session_id] = _Writer(fd, lock)
        return writer

    def _sync_new_name(self, path: Path) -> None:
        """fsync the folder after creating ``path``; on failure remove the new empty file (else a retry skips it)."""
        try:
            fsync_dir(self.root)
        except OSError as exc:
            with contextlib.suppress(OSError):
                if os.lstat(path).st_size == 0:
                    os.unlink(path)
            raise StorageError(exc.errno, f"{path}: fsync of the folder failed: {exc.strerror}") from exc

    def _heal_tail(self, path: Path) -> bool:
        """Before appending to an existing log, make sure it ends at a line boundary.

        A log that does not end in ``\\n`` was cut by a crash (or written by another tool):
        appending to it would glue the new line onto the old fragment. The recovery mode
        decides what to do; ``strict`` refuses. Without the writer lock the tail may be another
        writer's line still being written, so nothing is cut: True asks for a line end first.
        """
        try:
            fd = open_read(path)
        except FileNotFoundError:
            return False
        try:
            size = os.fstat(fd).st_size
            last = os.pread(fd, 1, size - 1) if size else b"\n"
        finally:
            os.close(fd)
        if last == b"\n" or not self.lock:
            return last != b"\n"
        report = repair_log(path, self.recovery, self.line_cap)
        if not report.loadable:
            raise _refusal(path, report)
        return False

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry as one ``os.write`` of one line, then apply the sync policy."""
        # The hot path: a dict lookup, one encode into a reused buffer, one write.
        writer = self._writers.get(session_id)
        if writer is None or writer.failed is not None:
            writer = self._writer(session_id)
        line = encode_line_into(entry, self._line)
        size = len(line)
        if size > self.line_cap:
            raise EntryTooLarge(size, self.line_cap)
        try:
            written = os.write(writer.fd, line)
        except OSError as exc:
            raise self._write_failed(session_id, writer, exc) from exc
        if written != size:
            self._undo_short_write(session_id, writer, written)
        if self.sync != "none":
            self._after_write(session_id, writer, 1)

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append entries as one ``os.write`` of all their lines and one sync."""
        lines = [encode_line(entry) for entry in entries]
        for line in lines:
            if len(line) > self.line_cap:
                raise EntryTooLarge(len(line), self.line_cap)
        if not lines:
            self.path(session_id)  # an empty batch still refuses an invalid id
            return
        writer = self._writer(session_id)
        data = b"".join(lines)
        try:
            written = os.write(writer.fd, data)
        except OSError as exc:
            raise self._write_failed(session_id, writer, exc) from exc
        if written != len(data):
            self._undo_short_write(session_id, writer, written)
        self._after_write(session_id, writer, len(lines))

    def _write_failed(self, session_id: str, writer: _Writer, exc: OSError) -> StorageError:
        """Mark the writer failed (nothing was written) and return the error to raise."""
        writer.failed = exc.strerror or str(exc)
        return StorageError(exc.errno, f"{self.path(session_id)}: append failed: {exc.strerror}")

    def _after_write(self, session_id: str, writer: _Writer, count: int) -> None:
        """Apply the sync policy after ``count`` entries were written."""
        if self.sync == "always":
            self._sync(session_id, writer)
        elif self.sync == "batch":
            writer.unsynced += count
            if writer.unsynced >= self.batch_size or time.perf_counter_ns() - writer.last_sync_ns >= self.batch_ns:
                self._sync(session_id, writer)

    def _undo_short_write(self, session_id: str, writer: _Writer, written: int) -> None:
        """A short write (disk full, file-size limit) left part of a line: cut it back off (only
        safe under the writer lock; without it the fragment stays and recovery treats it as damage)."""
        writer.failed = f"short write of {written} bytes"
        if writer.lock is not None:
            size = os.fstat(writer.fd).st_size
            os.ftruncate(writer.fd, size - written)
            writer.failed = None
        left = "was removed" if writer.failed is None else "was left for recovery (no writer lock held)"
        raise StorageError(errno.ENOSPC, f"{self.path(session_id)}: append wrote only {written} bytes; the partial line {left}")

    def _sync(self, session_id: str, writer: _Writer) -> None:
        try:
            os.fdatasync(writer.fd)
        except OSError as exc:
            # Fatal for this descriptor: after a failed fsync the kernel may have dropped the
            # dirty pages, and a retry could report success for data that is gone.
            writer.failed, writer.sync_failed = f"fdatasync failed: {exc.strerror}", True
            raise StorageError(exc.errno, f"{self.path(session_id)}: {writer.failed}") from exc
        writer.unsynced = 0
        writer.last_sync_ns = time.perf_counter_ns()

    def _release(self, session_id: str) -> None:
        """Sync (as the policy promises) and close a session's writer; release its lock."""
        writer = self._writers.pop(session_id, None)
        if writer is None:
            return
        try:
            if self.sync != "none" and writer.unsynced and not writer.sync_failed:
                self._sync(session_id, writer)
        finally:
            os.close(writer.fd)
            if writer.lock is not None:
                writer.lock.release()
        if writer.sync_failed and writer.unsynced:  # close promises durability: say it cannot
            raise StorageError(errno.EIO, f"{self.path(session_id)}: {writer.unsynced} entries since the last good sync may not be durable ({writer.failed})")

    # -- reading -----------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Stream the good entries oldest first, under the store's recovery mode."""
        return iter(LogScan(self._existing(session_id), self.recovery, self.line_cap))

    def read_live(self, session_id: str) -> list[Entry]:
        """Read the live context backwards from the end, without parsing the whole history."""
        return read_live_tail(self._existing(session_id), self.recovery, self.line_cap)

    def stats(self, session_id: str) -> SessionStats:
        """Count entries and compactions (one streaming pass, damage skipped) and bytes on disk."""
        path = self._existing(session_id)
        entries = compactions = 0
        for entry in LogScan(path, "skip", self.line_cap, raise_errors=False):
            entries += 1
            compactions += isinstance(entry, Compaction)
        return SessionStats(session_id=session_id, entries=entries, compactions=compactions, bytes_on_disk=os.path.getsize(path), path=str(path))

    # -- rewriting and recovery ----------------------------------------------------------------

    def _exclusive(self, session_id: str) -> SessionLock | None:
        """Close our writer (its descriptor would point at a replaced file) and take the lock."""
        self._release(session_id)
        lock = self._lock_for(session_id)
        if lock is not None:
            lock.acquire()
        return lock

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history atomically: temp file, fsync, rename, fsync of the folder."""
        self._check_open()
        path = self.path(session_id)
        lock = self._exclusive(session_id)
        try:
            atomic_write(path, (self._checked_line(entry) for entry in entries))
        except OSError as exc:  # atomic_write removed its temp file: the old history is untouched
            if isinstance(exc, StorageError):
                raise
            raise StorageError(exc.errno, f"{path}: rewrite failed, the session is unchanged: {exc.strerror}") from exc
        finally:
            if lock is not None:
                lock.release()

    def _checked_line(self, entry: Entry) -> bytes:
        line = encode_line(entry)
        if len(line) > self.line_cap:
            raise EntryTooLarge(len(line), self.line_cap)
        return line

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Repair the session as ``mode`` (default: the store's) allows and report what was done.

        A mode that refuses the damage changes nothing and reports ``loadable`` False with the
        refused line; reading the session in that mode then raises :class:`CorruptLogError`.
        """
        self._check_open()
        path = self._existing(session_id)
        mode = check_mode(mode or self.recovery)
        lock = self._exclusive(session_id)
        try:
            report = repair_log(path, mode, self.line_cap)
        finally:
            if lock is not None:
                lock.release()
        return report

    def close(self) -> None:
        """Sync what the policy promises, close every descriptor and release every lock."""
        errors: list[BaseException] = []
        for session_id in list(self._writers):
            try:
                self._release(session_id)
            except BaseException as exc:  # keep closing the others, then report the first
                errors.append(exc)
        self._closed = True
        if errors:
            raise errors[0]

    def __enter__(self) -> "JsonlStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refusal(path: Path, report: RecoveryReport) -> CorruptLogError:
    """The error for a log its recovery mode refuses, naming the line and the reason."""
    reason = (report.error or "damaged log").split(": ", 2)[-1]
    return CorruptLogError(str(path), report.refused_line or 0, report.refused_offset or 0, reason)
