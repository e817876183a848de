"""The library's error hierarchy.

Every error aptmem raises on purpose derives from :class:`AptmemError`, so a caller can catch
the library's failures without catching programming errors. Only command lines turn these
into messages and exit codes.
"""

from __future__ import annotations

import os


class AptmemError(Exception):
    """Base class of every error aptmem raises on purpose."""


class InvalidSessionId(AptmemError, ValueError):
    """A session id is not a canonical lowercase UUID version 4."""

    def __init__(self, value: object, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(f"invalid session id {value!r}: {reason}")


class UnsafePathError(AptmemError):
    """A session file is a symlink or otherwise not a regular file we created."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class SessionNotFound(AptmemError, LookupError):
    """The session asked for does not exist in the store."""

    def __init__(self, session_id: str, where: str = "") -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id} not found" + (f" in {where}" if where else ""))


class SessionExists(AptmemError):
    """A session that should be new already exists."""

    def __init__(self, session_id: str, where: str = "") -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id} already exists" + (f" in {where}" if where else ""))


class CorruptLogError(AptmemError):
    """A session file holds damage the chosen recovery mode does not accept.

    ``line`` is 1-based; ``offset`` is the byte offset of the start of that line.
    """

    def __init__(self, path: str, line: int, offset: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason} (byte offset {offset})")


class NotASessionError(AptmemError):
    """The input is not a session at all (a folder, a missing file, an unreadable file)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NotASessionLogError(NotASessionError):
    """A file given as a session log is something else: ``kind`` says what.

    ``kind`` is ``claude-code`` or ``pi`` (an agent's own transcript: ``aptmem import`` turns it
    into a session), ``sidecar`` (a session's ``<id>.meta.json``), ``json-document`` (one JSON
    value spread over several lines, not one entry a line) or ``not-jsonl`` (no line is a JSON
    object). Raised before anything reads on or writes, so the file is never changed.
    """

    def __init__(self, path: str, kind: str, reason: str) -> None:
        self.kind = kind
        super().__init__(path, reason)


class RootMismatchError(AptmemError, ValueError):
    """A session's log and its sidecar would land in two different folders."""

    def __init__(self, store_root: str, root: str) -> None:
        self.store_root = store_root
        self.root = root
        super().__init__(f"the store keeps its sessions in {store_root} but the sidecar folder given is {root}: "
                         "a session's log and its working memory must share one folder")


class EntryTooLarge(AptmemError, ValueError):
    """An entry encodes to a line longer than the log's line cap, so it could not be read back."""

    def __init__(self, size: int, cap: int) -> None:
        self.size = size
        self.cap = cap
        super().__init__(f"entry encodes to {size} bytes, over the line cap of {cap} bytes")


class InvalidEntry(AptmemError, ValueError):
    """A value given to the library is not a valid session entry."""


class StorageError(AptmemError, OSError):
    """A write or sync failed; what was acknowledged before it is intact.

    An fsync failure is fatal for the handle that saw it: the kernel may have dropped the dirty
    pages, so retrying the sync could report success for data that is gone.
    """


class LockTimeout(AptmemError, TimeoutError):
    """Another process held a session's lock for longer than the caller agreed to wait."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        super().__init__(f"{path}: lock still held by another process after {timeout:g}s")


class ClosedStoreError(AptmemError, ValueError):
    """A store was used after :meth:`close`."""


class CorruptMetaError(AptmemError):
    """A session's working-memory sidecar (``<id>.meta.json``) cannot be read: damaged or foreign."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: damaged working-memory sidecar: {reason}")


class InvalidWorkingValue(InvalidEntry):
    """A value given to working memory is not plain JSON (or not of the field's type).

    ``where`` names the place, e.g. ``working['plan'][2]``. Nothing was written.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")


class MemoryStrategyError(AptmemError):
    """A memory strategy cannot do its work as configured (e.g. it keeps state but has no sidecar)."""


class SummarizerError(AptmemError):
    """A summarizer could not produce a summary (an HTTP error, a timeout, a malformed reply)."""


class TokenizerUnavailable(AptmemError, LookupError):
    """A tokenizer cannot be loaded offline; ``how`` says how to make it available.

    Raised instead of letting a tokenizer library try a download (which, offline, hangs or fails
    with that library's own error). ``name`` is the tokenizer as the caller named it.
    """

    def __init__(self, name: str, how: str) -> None:
        self.name = name
        self.how = how
        super().__init__(f"tokenizer {name!r} is not available offline: {how}")


class InvalidTierSpec(AptmemError, ValueError):
    """A tier spec (``rough:bytes``, ``medium``, ``precise:<tokenizer>``, ``anchored[:<tier>]``...) names no tier.

    ``spec`` is the text as given, ``reason`` what is wrong with it, ``allowed`` the spellings that
    were accepted where it was given (:mod:`aptmem.tokens.tiers`).
    """

    def __init__(self, spec: object, reason: str, allowed: str) -> None:
        self.spec = spec
        self.reason = reason
        self.allowed = allowed
        super().__init__(f"invalid tier spec {spec!r}: {reason}; use {allowed}")


class UnknownTranscriptFormat(AptmemError, ValueError):
    """A transcript format that no converter in :data:`aptmem.importers.converter.CONVERTERS` reads."""

    def __init__(self, fmt: object, known: tuple[str, ...]) -> None:
        self.fmt = fmt
        self.known = known
        super().__init__(f"unknown transcript format {fmt!r}; choose one of {', '.join(known)} or auto")


class NotATranscriptError(AptmemError):
    """A file given to an importer is not a transcript of the format asked for (or of any we know).

    Raised before anything is written: the first good line already shows the file is foreign.
    """

    def __init__(self, path: str, fmt: str, reason: str) -> None:
        self.path = path
        self.fmt = fmt
        self.reason = reason
        super().__init__(f"{path}: not a {fmt} transcript: {reason}")


class CorruptTranscriptError(AptmemError):
    """A transcript holds damage and the caller asked for a strict read (``line`` is 1-based)."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class InvalidProfile(AptmemError, ValueError):
    """A provider profile (``aptmem/tokens/profiles/*.json`` or a file given) is missing, damaged or
    not a profile; ``path`` names it and ``reason`` says what is wrong and how to remake it."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class RecallError(AptmemError):
    """Base class of the recall index's errors (:mod:`aptmem.recall`)."""


class UnknownRecallEngine(RecallError, ValueError):
    """A recall engine name that is not in the registry."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown recall engine {name!r}; choose one of {', '.join(known)}")


class RecallEngineUnavailable(RecallError, LookupError):
    """An optional recall engine whose package is not installed; says which extra installs it."""

    def __init__(self, engine: str, package: str, extra: str) -> None:
        self.engine = engine
        self.package = package
        self.extra = extra
        super().__init__(f"recall engine {engine!r} needs the package {package!r}, which is not installed: "
                         f"pip install 'aptmem[{extra}]'")


class CorruptIndexError(RecallError):
    """The recall index file is damaged or not a recall index; ``--rebuild`` makes it anew from the logs."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: not a usable recall index: {reason} (rebuild it with 'aptmem index --rebuild')")


class ServiceUnavailable(AptmemError):
    """A store needs a server (a database) that cannot be found, started or reached here.

    ``service`` names it, ``reason`` says what failed and ``how`` what to do about it; the harness
    turns this into a skip note, never into a silent gap.
    """

    def __init__(self, service: str, reason: str, how: str = "") -> None:
        self.service = service
        self.reason = reason
        self.how = how
        super().__init__(f"{service} is not available: {reason}" + (f" ({how})" if how else ""))
