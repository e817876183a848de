"""Working memory: the ``<root>/<session_id>.meta.json`` sidecar of a session.

The sidecar holds what the agent keeps up to date itself, beside the history: a title, the
model, the free-text working memory and a ``working`` dict of JSON values (set / get / delete /
keys), plus the id of the session this one continues.

How it stays safe:

* Every mutation is one read-modify-write under an inter-process lock (``<id>.meta.lock``, mode
  0600), so two processes updating it at once never lose each other's change.
* Every write is atomic (temp file, fsync, rename, fsync of the folder): a crash at any moment
  leaves the old sidecar or the new one, never a mix. That is also why reads take no lock: a
  reader opens either the old or the new file, both whole.
* The id is validated before any path is built; the sidecar is opened with ``O_NOFOLLOW`` and a
  symlink where it should be is refused; files are mode 0600.
* A value that is not plain JSON is refused before anything is written, so ``get`` always
  returns what ``set`` was given.
* Fields this version does not know (written by a newer aptmem) are kept on every rewrite.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from aptmem.entries import now_ms
from aptmem.errors import CorruptMetaError, InvalidWorkingValue, SessionExists, SessionNotFound, StorageError, UnsafePathError
from aptmem.fsutil import atomic_write, ensure_root, open_read, sweep_temp_files
from aptmem.ids import session_path
from aptmem.jsonvalue import MAX_DEPTH, check_json_value
from aptmem.locking import SessionLock
from aptmem.quarantine import QuarantineBatch, fingerprint

__all__ = [
    "META_LOCK_SUFFIX",
    "META_SUFFIX",
    "MAX_DEPTH",
    "MAX_META_BYTES",
    "RESERVED_PREFIX",
    "SessionMeta",
    "SidecarRepair",
    "WorkingMemory",
    "check_json_value",
]

META_SUFFIX = ".meta.json"
#: Working-dict keys under this prefix belong to a memory strategy (:mod:`aptmem.memory`): the
#: context leaves them to the strategy that owns them, ``continue`` carries them like the rest.
RESERVED_PREFIX = "aptmem."
META_LOCK_SUFFIX = ".meta.lock"
#: A sidecar is small by nature; the cap bounds what a reader loads from a planted huge file,
#: and writes obey it too, so we never write a sidecar we would refuse to read.
MAX_META_BYTES = 64 * 1024 * 1024


class SessionMeta(msgspec.Struct, kw_only=True):
    """The content of a session's sidecar. New fields only ever come with defaults."""

    version: int = 1
    session_id: str
    title: str = ""
    #: milliseconds since the epoch (:func:`aptmem.entries.now_ms`)
    created: int
    updated: int
    model: str | None = None
    #: the free-text working memory
    memory: str = ""
    #: the working dict: string keys, JSON values
    working: dict[str, Any] = {}
    #: the id of the session this one continues
    parent: str | None = None


_FIELDS = frozenset(f.encode_name for f in msgspec.structs.fields(SessionMeta))
# One reused encoder and decoder. The decoder is untyped so fields a newer version wrote can be
# kept; the typed check is msgspec.convert on the decoded object.
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class WorkingMemory:
    """The working memory of one session, stored in ``<root>/<session_id>.meta.json``.

    Nothing is cached: every read loads the sidecar afresh, because another process may have
    changed it. Values returned are fresh copies; changing them changes nothing on disk.
    Mutations need the sidecar to exist (:meth:`create` it first), else :class:`SessionNotFound`.
    """

    def __init__(self, root: str | os.PathLike[str], session_id: str, *, lock_timeout: float = 10.0) -> None:
        # session_path validates the id before any path exists, so nothing below sees a bad one.
        self.path: Path = session_path(root, session_id, META_SUFFIX)
        self.lock_path: Path = session_path(root, session_id, META_LOCK_SUFFIX)
        self.root = Path(root)
        self.session_id = session_id
        self.lock_timeout = lock_timeout
        # The file lock orders processes; this one orders threads sharing this object (the file
        # lock is re-entrant across threads of one process, so it alone would let them overlap).
        self._thread_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"WorkingMemory({str(self.root)!r}, {self.session_id!r})"

    # -- reading -----------------------------------------------------------------------------

    def exists(self) -> bool:
        """Tell whether the sidecar exists (a symlink counts, and is refused when read)."""
        return os.path.lexists(self.path)

    def load(self) -> SessionMeta:
        """Read the sidecar.

        Raises :class:`SessionNotFound` if it is missing, :class:`UnsafePathError` if it is a
        symlink, :class:`CorruptMetaError` (naming the file and the reason) if it is damaged.
        """
        return self._read()[0]

    def get(self, key: str, default: Any = None) -> Any:
        """Return the working value under ``key``, or ``default`` if there is none."""
        return self.load().working.get(key, default)

    def keys(self) -> list[str]:
        """Return the keys of the working dict, in the order they were first set."""
        return list(self.load().working)

    @property
    def text(self) -> str:
        """The free-text working memory."""
        return self.load().memory

    # -- writing -----------------------------------------------------------------------------

    def create(
        self,
        title: str = "",
        model: str | None = None,
        parent: str | None = None,
        memory: str = "",
        working: dict[str, Any] | None = None,
    ) -> SessionMeta:
        """Create the sidecar; raise :class:`SessionExists` if there already is one."""
        stamp = now_ms()
        meta = SessionMeta(
            session_id=self.session_id,
            title=title,
            created=stamp,
            updated=stamp,
            model=model,
            memory=memory,
            working=dict(working or {}),
            parent=parent,
        )
        data = _encode(meta, {})  # refuse bad values before touching the file system
        ensure_root(self.root)
        with self._locked():
            if os.path.islink(self.path):
                raise UnsafePathError(self.path, "is a symlink; refusing to replace it")
            if self.exists():
                raise SessionExists(self.session_id, str(self.path))
            _write_sidecar(self.path, data)
        return meta

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (plain JSON) under ``key`` in the working dict."""
        _check_key(key)
        check_json_value(value, f"working[{key!r}]")

        def apply(meta: SessionMeta) -> None:
            meta.working[key] = value

        self._mutate(apply)

    def delete(self, key: str) -> bool:
        """Remove ``key``; return True if it was there, False if not (then nothing is written).

        Deleting an absent key is not an error, so two processes clearing the same key both
        succeed: the end state is what both asked for.
        """
        _check_key(key)
        removed = False

        def apply(meta: SessionMeta) -> bool:
            nonlocal removed
            removed = meta.working.pop(key, _MISSING) is not _MISSING
            return removed

        self._mutate(apply)
        return removed

    def set_text(self, text: str) -> None:
        """Replace the free-text working memory."""
        _check_str(text, "memory")

        def apply(meta: SessionMeta) -> None:
            meta.memory = text

        self._mutate(apply)

    def set_title(self, title: str) -> None:
        """Replace the session's title."""
        _check_str(title, "title")

        def apply(meta: SessionMeta) -> None:
            meta.title = title

        self._mutate(apply)

    def set_model(self, model: str | None) -> None:
        """Record the model the session uses (None: unknown)."""
        if model is not None:
            _check_str(model, "model")

        def apply(meta: SessionMeta) -> None:
            meta.model = model

        self._mutate(apply)

    def update(self, fn: Callable[[SessionMeta], None]) -> SessionMeta:
        """Apply ``fn(meta)`` (which changes ``meta`` in place) under the lock and write the result.

        If ``fn`` raises, or leaves a value that is not valid, nothing is written. Changing
        ``session_id`` or ``created`` is refused. Returns the metadata as written.
        """

        def apply(meta: SessionMeta) -> None:
            fn(meta)

        return self._mutate(apply)

    def sweep(self) -> int:
        """Remove temp files a killed writer of this sidecar left behind; return how many.

        A writer killed between creating its temp file and the rename leaves the temp file
        (the sidecar itself is intact). Under the lock no live writer of this sidecar is
        between those steps, so every such temp file is garbage.
        """
        if not self.root.is_dir():
            return 0
        with self._locked():
            return sweep_temp_files(self.path)

    def repair(self) -> SidecarRepair:
        """Replace a damaged sidecar by a sound one, keeping every field of it that still reads.

        The damaged file's bytes are moved to ``<id>.meta.json.quarantine`` first (durably, as a
        log's repair does), then the new sidecar is written atomically: what could be read of
        the old one (each field that has the right type, fields a newer version wrote) and, for
        what could not, the defaults (``created`` and ``updated``: now). A sidecar that reads is
        left alone (``damaged`` False); one that is missing raises :class:`SessionNotFound`.
        """
        with self._locked():
            try:
                self._read()
                return SidecarRepair(path=str(self.path), damaged=False)
            except CorruptMetaError as exc:
                reason = exc.reason
            fd = open_read(self.path)
            try:
                size = os.fstat(fd).st_size
                data = os.pread(fd, min(size, MAX_META_BYTES), 0)
                batch = QuarantineBatch(self.path, fd, "sidecar", fingerprint(fd, "sidecar"))
                batch.add(1, 0, size, f"damaged working-memory sidecar: {reason}")
                batch.commit(size)
            finally:
                os.close(fd)
            meta, extras, salvaged = _salvage(data, self.session_id)
            _write_sidecar(self.path, _encode(meta, extras))
        return SidecarRepair(path=str(self.path), damaged=True, reason=reason, moved_to=str(batch.path), salvaged=salvaged)

    # -- internals ---------------------------------------------------------------------------

    def _locked(self) -> _Both:
        """The thread lock and the inter-process lock, taken in that order."""
        return _Both(self._thread_lock, SessionLock(self.lock_path, self.lock_timeout))

    def _mutate(self, apply: Callable[[SessionMeta], bool | None]) -> SessionMeta:
        """Read, apply, check and atomically write the sidecar, all under the lock.

        ``apply`` returning False means it changed nothing, so nothing is written.
        """
        with self._locked():
            meta, extras = self._read()
            created = meta.created
            if apply(meta) is False:
                return meta
            if meta.session_id != self.session_id:
                raise InvalidWorkingValue("session_id", "cannot be changed")
            if meta.created != created:
                raise InvalidWorkingValue("created", "cannot be changed")
            meta.updated = now_ms()
            _write_sidecar(self.path, _encode(meta, extras))
            return meta

    def _read(self) -> tuple[SessionMeta, dict[str, Any]]:
        """Load the sidecar; return it and the fields this version does not know."""
        try:
            fd = open_read(self.path)
        except FileNotFoundError:
            raise SessionNotFound(self.session_id, f"{self.root} (no {self.path.name})") from None
        with io.open(fd, "rb") as stream:
            data = stream.read(MAX_META_BYTES + 1)
        path = str(self.path)
        if len(data) > MAX_META_BYTES:
            raise CorruptMetaError(path, f"larger than the cap of {MAX_META_BYTES} bytes")
        if not data.strip():
            raise CorruptMetaError(path, "empty file")
        try:
            doc = _decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptMetaError(path, f"not valid JSON ({exc})") from None
        except RecursionError:  # msgspec's own limit on nesting: a planted or damaged file
            raise CorruptMetaError(path, "JSON nested too deeply") from None
        if not isinstance(doc, dict):
            raise CorruptMetaError(path, f"not a JSON object (a JSON {type(doc).__name__})")
        try:
            meta = msgspec.convert(doc, SessionMeta)
        except msgspec.ValidationError as exc:
            raise CorruptMetaError(path, f"invalid field: {exc}") from None
        if meta.session_id != self.session_id:
            # A sidecar copied or renamed from another session: using it would mix sessions.
            raise CorruptMetaError(path, f"belongs to session {meta.session_id}, not {self.session_id}")
        extras = {key: value for key, value in doc.items() if key not in _FIELDS}
        return meta, extras


class SidecarRepair(msgspec.Struct, kw_only=True):
    """What :meth:`WorkingMemory.repair` found and did."""

    path: str
    damaged: bool
    reason: str | None = None
    #: where the damaged bytes went (the sidecar's quarantine)
    moved_to: str | None = None
    #: the fields kept from the damaged sidecar
    salvaged: list[str] = []


def _salvage(data: bytes, session_id: str) -> tuple[SessionMeta, dict[str, Any], list[str]]:
    """A sound sidecar from a damaged one's bytes: every field that still reads with its type,
    and the fields this version does not know; returns it, those fields and the names kept."""
    stamp = now_ms()
    meta = SessionMeta(session_id=session_id, created=stamp, updated=stamp)
    try:
        doc = _decoder.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return meta, {}, []
    if not isinstance(doc, dict) or doc.get("session_id", session_id) != session_id:
        return meta, {}, []  # not JSON of an object, or another session's: nothing of it is ours
    base = msgspec.to_builtins(meta)
    salvaged = []
    extras = {key: value for key, value in doc.items() if key not in _FIELDS}
    for key, value in doc.items():
        if key not in _FIELDS or key == "session_id":
            continue
        try:
            msgspec.convert({**base, key: value}, SessionMeta)
            if key == "working":
                check_json_value(value, "working")
        except (msgspec.ValidationError, InvalidWorkingValue):
            continue
        base[key] = value
        salvaged.append(key)
    return msgspec.convert(base, SessionMeta), extras, [*salvaged, *extras]


class _Both:
    """Enter a thread lock and then a :class:`SessionLock`; leave them in reverse order."""

    def __init__(self, thread_lock: threading.Lock, file_lock: SessionLock) -> None:
        self._thread_lock = thread_lock
        self._file_lock = file_lock

    def __enter__(self) -> None:
        self._thread_lock.acquire()
        try:
            self._file_lock.acquire()
        except BaseException:
            self._thread_lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            # The file lock lives for one read-modify-write: closing its descriptor here (which
            # also unlocks) keeps a long-lived WorkingMemory from holding one per mutation.
            self._file_lock.close()
        finally:
            self._thread_lock.release()


_MISSING = object()


def _write_sidecar(path: Path, data: bytes) -> None:
    """Replace the sidecar atomically; a failure (full disk, read-only folder, fsync error) leaves it unchanged."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise StorageError(exc.errno, f"{path}: writing the sidecar failed, it is unchanged: {exc.strerror}") from exc


def _check_key(key: object) -> None:
    """Working-dict keys are strings (JSON object keys)."""
    if not isinstance(key, str):
        raise InvalidWorkingValue("key", f"{key!r} is a {type(key).__name__}; keys are strings")


def _check_str(value: object, where: str) -> None:
    """Refuse a non-string where the sidecar holds a string."""
    if not isinstance(value, str):
        raise InvalidWorkingValue(where, f"must be a string, not {type(value).__name__}")


def _encode(meta: SessionMeta, extras: dict[str, Any]) -> bytes:
    """Check ``meta`` (types, JSON values, size) and encode it as the sidecar's bytes."""
    check_json_value(meta.working, "working")
    try:
        doc = msgspec.to_builtins(meta)
        msgspec.convert(doc, SessionMeta)  # the types a reader will insist on (update() may break them)
    except (TypeError, ValueError) as exc:  # msgspec.ValidationError is a ValueError
        raise InvalidWorkingValue("metadata", str(exc)) from None
    for key, value in extras.items():
        doc.setdefault(key, value)
    try:
        # Indented: a human or an agent may well read the sidecar with cat.
        data = msgspec.json.format(_encoder.encode(doc), indent=2) + b"\n"
    except (TypeError, ValueError, OverflowError) as exc:  # e.g. a lone surrogate in a string
        raise InvalidWorkingValue("metadata", f"cannot be encoded as JSON: {exc}") from None
    if len(data) > MAX_META_BYTES:
        raise InvalidWorkingValue("metadata", f"encodes to {len(data)} bytes, over the cap of {MAX_META_BYTES}")
    return data
