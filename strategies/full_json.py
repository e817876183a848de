"""Baseline strategy: the whole session as one JSON array, rewritten on every append.

This is how many agent frameworks and chat apps persist a conversation: keep the list of
messages in memory, and on every change serialize the whole list and save the file. It is a
faithful baseline, not a strawman: the list is loaded once and kept, and each append costs one
msgspec encode of the list (unknown entries spliced in as raw bytes in the same pass, see
:mod:`strategies.json_array`) into a reused buffer, plus the write. What grows with the session
is exactly what this design pays for: the encode and the write of the whole history.

Variants:

* ``in_place``: ``open(O_WRONLY|O_TRUNC)`` and write, as ``open(path, "w")`` does. Any crash
  between the truncate and the end of the write leaves a torn or empty array: the history is
  lost, not just the last entry (durability ``none``).
* ``atomic``: temp file, fsync, rename, fsync of the folder (:func:`aptmem.fsutil.atomic_write`).
  An acknowledged append survives a power loss (durability ``per_append``).

``replace`` is atomic in both variants, because the storage interface promises it.

Files: ``<root>/<id>.json`` (mode 0600, never followed through a symlink). Not safe for several
processes writing one session: each keeps its own in-memory copy and the last rewrite wins, so
``multi_process_safe`` is False (no lock is taken).
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from aptmem.entries import Compaction, Entry
from aptmem.errors import ClosedStoreError, CorruptLogError, SessionExists, SessionNotFound, StorageError
from aptmem.fsutil import atomic_write, create_new, ensure_root, fsync_dir, open_read, open_truncate, write_all
from aptmem.ids import is_session_id, session_path
from aptmem.store import Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write, select_live
from strategies.json_array import decode_array, encode_array_into
from strategies.rewrite_split import kept_positions, split_for_rewrite

__all__ = ["FullJsonStore", "VARIANTS", "SUFFIX"]

VARIANTS = ("in_place", "atomic")
SUFFIX = ".json"
_RECOVERY_MODES = ("strict",)
_EMPTY_ARRAY = b"[]"


class FullJsonStore:
    """Sessions as whole JSON arrays under ``root``, rewritten per append (see the module doc).

    Entries returned by reads are the store's own in-memory objects (that is the design being
    measured): treat them, like the entries you append, as read-only.
    """

    name = "full_json"

    def __init__(self, root: str | os.PathLike[str], *, variant: str = "atomic") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown full_json variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        self.root = ensure_root(root)
        self.variant = variant
        self.capabilities = Capabilities(
            durability="per_append" if variant == "atomic" else "none",
            native_batch=True,  # append_many is one rewrite
            fast_resume=False,  # the live context needs the whole array parsed
            recovery_modes=_RECOVERY_MODES,
            multi_process_safe=False,
        )
        self._sessions: dict[str, list[Entry]] = {}
        # One encode buffer reused by every rewrite, so a steady session does not reallocate
        # (and regrow) an output as large as its whole history on every append.
        self._buffer = bytearray()
        # Guards the cached lists and the shared buffer: a store may be used from several threads.
        self._lock = threading.RLock()  # re-entrant: a compaction appends its marker through append
        self._closed = False

    # -- paths and loading ---------------------------------------------------------------------

    def path(self, session_id: str) -> Path:
        """Return the file of a session (the id is validated first)."""
        return session_path(self.root, session_id, SUFFIX)

    def _existing(self, session_id: str) -> Path:
        path = self.path(session_id)
        if not os.path.lexists(path):
            raise SessionNotFound(session_id, str(self.root))
        return path

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedStoreError("the store is closed")

    def _load(self, session_id: str, *, missing_ok: bool = False) -> list[Entry]:
        """Return the session's cached entries, reading the file once if needed (lock held)."""
        cached = self._sessions.get(session_id)
        if cached is not None:
            return cached
        path = self.path(session_id)
        if missing_ok and not os.path.lexists(path):
            entries: list[Entry] = []
        else:
            entries = _read_file(self._existing(session_id))
        self._sessions[session_id] = entries
        return entries

    # -- sessions ------------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create a session holding an empty array (0600), refusing one that exists."""
        path = self.path(session_id)
        with self._lock:
            self._check_open()
            try:
                fd = create_new(path)
            except FileExistsError:
                raise SessionExists(session_id, str(self.root)) from None
            try:
                write_all(fd, _EMPTY_ARRAY)
                if self.variant == "atomic":
                    os.fsync(fd)
            finally:
                os.close(fd)
            if self.variant == "atomic":
                fsync_dir(self.root)
            self._sessions[session_id] = []

    def exists(self, session_id: str) -> bool:
        """Tell whether the session's file exists."""
        return os.path.lexists(self.path(session_id))

    def sessions(self) -> list[str]:
        """List the ids of the sessions under the root, sorted."""
        # Sidecars such as ``<id>.meta.json`` end in .json too; their stem is not an id.
        return sorted(
            name[: -len(SUFFIX)]
            for name in os.listdir(self.root)
            if name.endswith(SUFFIX) and is_session_id(name[: -len(SUFFIX)])
        )

    # -- writing -------------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry: re-encode the whole array once and rewrite the file."""
        self.append_many(session_id, (entry,))

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries with one encode and one rewrite of the whole array."""
        if not entries:
            self.path(session_id)  # still refuse an invalid id
            return
        path = self.path(session_id)
        with self._lock:
            self._check_open()
            history = self._load(session_id, missing_ok=True)
            kept = len(history)
            history.extend(entries)
            try:
                encode_array_into(history, self._buffer)
                self._write(path)
            except BaseException:
                # Not acknowledged: the in-memory history goes back to what was acknowledged.
                # (After a failed in-place write the file may be torn; the next successful
                # rewrite, from this history, makes it whole again.)
                del history[kept:]
                self._drop_buffer()
                raise

    def _write(self, path: Path, *, atomic: bool = False) -> None:
        """Write the encoded array in the buffer to ``path`` as the variant (or ``atomic``) says."""
        try:
            if atomic or self.variant == "atomic":
                # A tuple, not the bytearray itself: atomic_write would copy a bare buffer.
                atomic_write(path, (self._buffer,))
                return
            fd = open_truncate(path)
            try:
                write_all(fd, self._buffer)
            finally:
                os.close(fd)
        except StorageError:
            raise
        except OSError as exc:
            raise StorageError(exc.errno, f"{path}: writing the session failed: {exc.strerror}") from exc

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history atomically (temp file, fsync, rename, fsync) in both variants."""
        path = self.path(session_id)
        new = list(entries)
        with self._lock:
            self._check_open()
            try:
                encode_array_into(new, self._buffer)
                self._write(path, atomic=True)
            except BaseException:
                self._drop_buffer()
                raise
            self._sessions[session_id] = new

    def _drop_buffer(self) -> None:
        """Start a fresh encode buffer after a failed write.

        A traceback the caller keeps may still hold a view of the old buffer, and a bytearray
        with a live view cannot be resized by the next encode.
        """
        self._buffer = bytearray()

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Plan from the live context and write the compaction, under the store's lock.

        The lock orders this process's threads only: the strategy is not safe for several
        processes (``multi_process_safe`` False), for compactions as for appends.
        """
        self._existing(session_id)
        with self._lock:
            self._check_open()
            history = self._load(session_id)
            live = select_live(history)
            write = plan(live)
            if write is None:
                return None
            write, summarized = checked_write(live, write)
            before = os.lstat(self.path(session_id)).st_size
            if write.persist == "append":
                self.append(session_id, write.marker)  # through append, so whoever watches appends sees it
                after = os.lstat(self.path(session_id)).st_size
                return CompactionWritten(persist="append", kept=write.kept, summarized=summarized, bytes_before=before,
                                         bytes_after=after)
            split = split_for_rewrite(enumerate(history), kept_positions(history, live, write.kept))
            removed, carried, removed_bytes = split.removed, len(split.carried), split.removed_bytes
            new = [*(history[i] for i in split.carried), write.marker, *(history[i] for i in split.kept)]
            try:
                encode_array_into(new, self._buffer)
                self._write(self.path(session_id), atomic=True)
            except BaseException:
                self._drop_buffer()
                raise
            self._sessions[session_id] = new
            after = os.lstat(self.path(session_id)).st_size
        return CompactionWritten(persist=write.persist, kept=write.kept, summarized=summarized, removed_entries=removed,
                                 removed_bytes=removed_bytes, carried=carried, bytes_before=before, bytes_after=after)

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction in the (cached) history."""
        self.path(session_id)
        with self._lock:
            self._check_open()
            history = self._load(session_id)
        return next((e for e in reversed(history) if isinstance(e, Compaction)), None)

    # -- reading -------------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Iterate the session's entries oldest first (loading the whole array once)."""
        self.path(session_id)
        with self._lock:
            self._check_open()
            return iter(self._load(session_id))

    def read_live(self, session_id: str) -> list[Entry]:
        """Return the live context, selected from the whole (cached) history."""
        self.path(session_id)
        with self._lock:
            self._check_open()
            return select_live(self._load(session_id))

    def stats(self, session_id: str) -> SessionStats:
        """Count entries and compactions in the loaded array; bytes on disk is the file's size."""
        path = self.path(session_id)
        with self._lock:
            self._check_open()
            history = self._load(session_id)
            compactions = sum(1 for entry in history if isinstance(entry, Compaction))
            size = os.lstat(path).st_size
        return SessionStats(session_id=session_id, entries=len(history), compactions=compactions, bytes_on_disk=size, path=str(path))

    # -- recovery and closing ------------------------------------------------------------------

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Check that the file parses; report honestly, change nothing.

        Only ``strict`` is offered: a torn JSON array has no line structure to cut back to, and
        guessing a salvage would invent a history. A damaged file is reported ``loadable``
        False and left exactly as it was.
        """
        mode = mode or "strict"
        if mode not in _RECOVERY_MODES:
            raise ValueError(f"full_json offers recovery modes {', '.join(_RECOVERY_MODES)}, not {mode!r}")
        path = self.path(session_id)
        with self._lock:
            self._check_open()
            path = self._existing(session_id)
            # A check after a crash reads the disk, not what this process remembers.
            self._sessions.pop(session_id, None)
            try:
                entries = _read_file(path)
            except CorruptLogError as exc:
                return RecoveryReport(
                    path=str(path),
                    mode=mode,
                    damaged_lines=[exc.line],
                    damage_reasons=[f"line {exc.line}: {exc.reason}"],
                    loadable=False,
                    error=str(exc),
                    refused_line=exc.line,
                    refused_offset=exc.offset,
                    actions=["nothing changed: a damaged JSON array cannot be salvaged without guessing"],
                )
            self._sessions[session_id] = entries
        return RecoveryReport(path=str(path), mode=mode, entries=len(entries), good_lines=len(entries))

    def close(self) -> None:
        """Drop the in-memory histories; every acknowledged append is already written."""
        with self._lock:
            self._sessions.clear()
            self._buffer = bytearray()
            self._closed = True

    def __enter__(self) -> "FullJsonStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_file(path: Path) -> list[Entry]:
    """Read and decode a whole session file (never through a symlink)."""
    with io.open(open_read(path), "rb") as stream:
        data = stream.read()
    return decode_array(str(path), data)
