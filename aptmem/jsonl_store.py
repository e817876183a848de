"""The reference strategy: one append-only JSONL file per session.

Each append is one ``os.write`` of one whole line on an ``O_APPEND`` descriptor, so a process
crash leaves at most a torn last line, never a damaged middle; then the sync policy runs:

* ``none``: no sync; a process crash loses nothing the kernel accepted, a power loss may.
* ``always``: ``fdatasync`` after every append; acknowledged means durable.
* ``batch`` (the default, :data:`DEFAULT_SYNC`, also ``aptmem append``'s): ``fdatasync`` every ``batch_size`` appends or ``batch_ms`` milliseconds (checked at
  append time) and on ``close``; a power loss loses at most the current batch.

Files: ``<root>/<id>.jsonl`` (the log, mode 0600), ``<id>.jsonl.quarantine`` (bytes removed by
repairs and rewrites), ``<id>.lock`` (the writer lock).

Locking: every append, compaction, replace and repair takes the session's writer lock for the
length of that one call (one ``flock`` on a descriptor kept open), so a store never holds the
lock of a session it is not writing to, and any number of processes (library stores, ``aptmem
append``, ``aptmem compact``) write one session safely. After taking the lock an append checks
that its descriptor still names the session's file (a rewrite or repair by anyone replaces the
file: the old one then has no name) and reopens it if not, so no append lands in a replaced
file. :meth:`JsonlStore.holding` keeps the lock across a burst of appends, for callers that
append many lines at once. The cost of taking the lock per append, against a raw ``os.write``
and against a burst, is measured by ``benchmarks/append_lock_cost.py``.

Descriptors: at most ``max_open`` sessions keep their descriptors (the log and the lock file,
two each) open at once; the least recently used one is synced as its policy promises and closed
when another needs its place.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from aptmem.entries import Compaction, Entry, encode_line, encode_line_into
from aptmem.errors import AptmemError, ClosedStoreError, CorruptLogError, EntryTooLarge, SessionExists, SessionNotFound, StorageError
from aptmem.fsutil import atomic_write, ensure_root, fsync_dir, open_append, open_read, sweep_temp_files
from aptmem.ids import is_session_id, session_path
from aptmem.jsonl_handle import LogHandle, SyncPolicy
from aptmem.jsonl_rewrite import rewrite_compacted
from aptmem.locking import SessionLock
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.recovery import LogScan, check_mode, repair_log
from aptmem.store import RECOVERY_MODES, Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write
from aptmem.tailscan import latest_compaction, live_tail_lines, read_live_tail

__all__ = ["DEFAULT_SYNC", "JsonlStore", "SYNC_POLICIES", "LOG_SUFFIX", "LOCK_SUFFIX", "MAX_OPEN"]

SYNC_POLICIES = ("none", "always", "batch")
#: The sync policy of a store (and of ``aptmem append``) when none is asked for.
DEFAULT_SYNC = "batch"
LOG_SUFFIX = ".jsonl"
LOCK_SUFFIX = ".lock"
#: Sessions whose descriptors a store keeps open at once (two descriptors each).
MAX_OPEN = 64
_DURABILITY = {"none": "process", "always": "per_append", "batch": "batch"}


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
        max_open: int = MAX_OPEN,
    ) -> None:
        if sync not in SYNC_POLICIES:
            raise ValueError(f"unknown sync policy {sync!r}; choose one of {', '.join(SYNC_POLICIES)}")
        if batch_size < 1 or batch_ms < 0:
            raise ValueError("batch_size must be >= 1 and batch_ms >= 0")
        if max_open < 1:
            raise ValueError("max_open must be at least 1")
        self.root = ensure_root(root)
        self.sync = sync
        self.batch_size = batch_size
        self.batch_ns = int(batch_ms * 1_000_000)
        self._policy = SyncPolicy(sync, batch_size, self.batch_ns)
        self.recovery = check_mode(recovery)
        self.line_cap = line_cap
        self.lock = lock
        self.lock_timeout = lock_timeout
        self.max_open = max_open
        self.capabilities = Capabilities(
            durability=_DURABILITY[sync],  # type: ignore[arg-type]
            native_batch=True,
            fast_resume=True,
            recovery_modes=RECOVERY_MODES,
            multi_process_safe=lock,
        )
        self._handles: OrderedDict[str, LogHandle] = OrderedDict()
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

    # -- handles, locks and descriptors ------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedStoreError("the store is closed")

    def _handle(self, session_id: str) -> LogHandle:
        """The session's handle (its lock object, maybe its log descriptor), most recently used."""
        handle = self._handles.get(session_id)
        if handle is not None:
            self._handles.move_to_end(session_id)
            return handle
        self._check_open()
        lock = SessionLock(session_path(self.root, session_id, LOCK_SUFFIX), self.lock_timeout) if self.lock else None
        handle = self._handles[session_id] = LogHandle(self.path(session_id), lock, self._policy)
        self._evict()
        return handle

    def _evict(self) -> None:
        """Close the least recently used sessions beyond ``max_open`` (never one in a burst)."""
        if len(self._handles) <= self.max_open:
            return
        for session_id in list(self._handles):
            if len(self._handles) <= self.max_open:
                break
            handle = self._handles[session_id]
            if not handle.pinned and not (handle.lock is not None and handle.lock.held):
                self._release(session_id)

    @contextlib.contextmanager
    def _locked(self, session_id: str) -> Iterator[LogHandle]:
        """Hold the session's writer lock for one operation (re-entrant inside a burst)."""
        handle = self._handle(session_id)
        handle.pinned += 1
        try:
            if handle.lock is None:
                yield handle
                return
            fresh = handle.lock.acquire()
            try:
                if fresh and handle.replaced():
                    handle.close_fd()  # replaced since our last write: reopen on the next one
                yield handle
            finally:
                handle.lock.release()
        finally:
            handle.pinned -= 1

    @contextlib.contextmanager
    def holding(self, session_id: str) -> Iterator[None]:
        """Keep the session's writer lock for a burst of appends (a ``with`` block).

        Appends inside skip taking the lock each; other writers wait until the block ends, so
        keep it short (``aptmem append`` holds it per burst of waiting input).
        """
        with self._locked(session_id):
            yield

    def _writer(self, session_id: str, handle: LogHandle) -> None:
        """Open the session's log for appending (healing a torn tail first); the lock is held."""
        if handle.failed:
            raise StorageError(errno.EIO, f"{self.path(session_id)}: an earlier write failed ({handle.failed}); reopen the store")
        if handle.fd >= 0:
            return
        path = self.path(session_id)
        new_line = self._heal_tail(path)
        created = not os.path.lexists(path)
        try:
            fd = open_append(path)
        except AptmemError:
            raise
        except OSError as exc:  # e.g. a folder that is not writable: say which file and why
            raise StorageError(exc.errno, f"{path}: cannot open for appending: {exc.strerror}") from exc
        try:
            if new_line:  # end the fragment (or, if it was a line in flight, add a blank line)
                os.write(fd, b"\n")
            if created and self.sync != "none":
                # A log created by its first append: its name must be durable before an append is
                # acknowledged as durable (POSIX: only after an fsync of its folder; as ``create``).
                self._sync_new_name(path)
        except OSError as exc:
            os.close(fd)
            if isinstance(exc, StorageError):
                raise
            raise StorageError(exc.errno, f"{path}: cannot end the last line before appending: {exc.strerror}") from exc
        except BaseException:
            os.close(fd)
            raise
        handle.fd = fd
        handle.unsynced = 0

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
        report = repair_log(path, self.recovery, self.line_cap)  # raises StorageError naming the file
        if not report.loadable:
            raise _refusal(path, report)
        return False

    # -- writing -----------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry as one ``os.write`` of one line, then apply the sync policy."""
        # The hot path: a dict lookup, one encode into a reused buffer, the lock, one write.
        handle = self._handles.get(session_id)
        if handle is None:
            handle = self._handle(session_id)
        else:
            self._handles.move_to_end(session_id)
        line = encode_line_into(entry, self._line)
        if len(line) > self.line_cap:
            raise EntryTooLarge(len(line), self.line_cap)
        self._write(session_id, handle, line, 1)

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append entries as one ``os.write`` of all their lines and one sync."""
        lines = [encode_line(entry) for entry in entries]
        for line in lines:
            if len(line) > self.line_cap:
                raise EntryTooLarge(len(line), self.line_cap)
        if not lines:
            self.path(session_id)  # an empty batch still refuses an invalid id
            return
        self._write(session_id, self._handle(session_id), b"".join(lines), len(lines))

    def _write(self, session_id: str, handle: LogHandle, data: bytes | bytearray, count: int) -> None:
        """Write ``data`` under the writer lock (reopening a replaced file), then sync as the policy says."""
        lock = handle.lock
        if lock is None:
            if handle.fd < 0 or handle.failed:
                self._check_open()
                self._writer(session_id, handle)
            handle.put(data)
        else:
            fresh = lock.acquire()
            try:
                if handle.fd < 0 or handle.failed:
                    self._check_open()
                    self._writer(session_id, handle)
                elif fresh and handle.replaced():
                    # A rewrite or a repair replaced the file since our last append: the
                    # descriptor names a file nobody reads any more.
                    handle.close_fd()
                    self._writer(session_id, handle)
                handle.put(data)
            finally:
                lock.release()
        if self.sync != "none":
            # Outside the lock: a rewrite that replaced the file meanwhile read (and synced)
            # these bytes, and syncing the old file harms nothing.
            handle.after_write(count)

    def _release(self, session_id: str) -> None:
        """Sync (as the policy promises) and close a session's descriptors."""
        handle = self._handles.pop(session_id, None)
        if handle is not None:
            handle.close()

    # -- reading -----------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Stream the good entries oldest first, under the store's recovery mode."""
        return iter(LogScan(self._existing(session_id), self.recovery, self.line_cap))

    def read_live(self, session_id: str) -> list[Entry]:
        """Read the live context backwards from the end, without parsing the whole history."""
        return read_live_tail(self._existing(session_id), self.recovery, self.line_cap)

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction, read backwards from the end (see the interface)."""
        return latest_compaction(self._existing(session_id), self.recovery, self.line_cap)

    def stats(self, session_id: str) -> SessionStats:
        """Count entries and compactions (one streaming pass, damage skipped) and bytes on disk."""
        path = self._existing(session_id)
        entries = compactions = 0
        for entry in LogScan(path, "skip", self.line_cap, raise_errors=False):
            entries += 1
            compactions += isinstance(entry, Compaction)
        return SessionStats(session_id=session_id, entries=entries, compactions=compactions, bytes_on_disk=os.path.getsize(path), path=str(path))

    # -- compacting, rewriting and recovery ------------------------------------------------------

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Read the live context, plan and write the compaction, all under the writer lock.

        ``append`` appends the marker line; ``rewrite`` makes the file the carried lines, the
        marker and the kept lines copied byte for byte, damage moved to the quarantine first
        (:func:`aptmem.jsonl_rewrite.rewrite_compacted`).
        """
        self._check_open()
        path = self._existing(session_id)
        with self._locked(session_id) as handle:
            lines = live_tail_lines(path, self.recovery, self.line_cap)
            live = [line.entry for line in lines]
            write = plan(live)  # type: ignore[arg-type]
            if write is None:
                return None
            write, summarized = checked_write(live, write)  # type: ignore[arg-type]
            before = os.path.getsize(path)
            if write.persist == "append":
                self.append(session_id, write.marker)  # through append, so whoever watches appends sees it
                return CompactionWritten(persist="append", kept=write.kept, summarized=summarized,
                                         bytes_before=before, bytes_after=os.path.getsize(path))
            try:
                written = rewrite_compacted(path, lines, write, self._checked_line(write.marker), self.line_cap)
            except AptmemError:
                raise
            except OSError as exc:
                raise StorageError(exc.errno, f"{path}: rewrite failed, the session is unchanged: {exc.strerror}") from exc
            finally:
                handle.close_fd()  # our descriptor names the old file now
            written.summarized = summarized
            return written

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history atomically: temp file, fsync, rename, fsync of the folder."""
        self._check_open()
        path = self.path(session_id)
        with self._locked(session_id) as handle:
            sweep_temp_files(path)
            try:
                atomic_write(path, (self._checked_line(entry) for entry in entries))
            except OSError as exc:  # atomic_write removed its temp file: the old history is untouched
                if isinstance(exc, StorageError):
                    raise
                raise StorageError(exc.errno, f"{path}: rewrite failed, the session is unchanged: {exc.strerror}") from exc
            finally:
                handle.close_fd()

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
        with self._locked(session_id) as handle:
            try:
                return repair_log(path, mode, self.line_cap)
            finally:
                handle.close_fd()

    def close(self) -> None:
        """Sync what the policy promises, close every descriptor."""
        errors: list[BaseException] = []
        for session_id in list(self._handles):
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

