"""Peer strategy: LangChain's ``FileChatMessageHistory`` (``langchain_community``), one file a session.

This is the file-backed chat history LangChain documents for keeping a conversation between
runs. What the library does, read from its source (``langchain_community/chat_message_histories/
file.py``), and so what this store promises:

* every ``add_message`` reads the whole file, parses every message, appends one, serializes the
  whole list and writes it back with ``Path.write_text``: an in-place rewrite (``open(path, "w")``
  truncates first), no temp file, no fsync, no lock. ``add_messages`` is ``BaseChatMessageHistory``'s
  loop of ``add_message``: one whole rewrite per message. So the cost of an append grows with the
  session, a crash during a rewrite can leave a torn or empty file (durability ``none``), and two
  processes appending at once lose each other's messages (not multi-process safe).
* reading parses the whole file (no fast resume).

Entries map onto LangChain messages as :mod:`strategies.langchain_messages` describes; fields a
message cannot hold ride in its ``additional_kwargs["aptmem"]``. Files are ``<root>/<id>.langchain.json``,
created here first with mode 0600 (the library would ``touch`` them 0644). The library follows
symlinks; this store refuses a session file that is a symlink when it first opens it.

``replace`` must be atomic and the library has no such operation, so it is the one place this store
writes the file itself: the same JSON the library writes (``json.dumps(messages_to_dict(...),
ensure_ascii=True)``, checked byte for byte by the tests), through temp file, fsync and rename.

Recovery: ``strict`` only (the library cannot repair a file; a torn file raises on every read).
The library's deprecation notices (``langchain-community`` is being sunset; ``BaseChatMessageHistory``
is deprecated in favour of LangGraph's persistence) are silenced where this module calls it.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from aptmem.entries import Compaction, Entry
from aptmem.errors import ClosedStoreError, CorruptLogError, InvalidEntry, SessionExists, SessionNotFound, StorageError, UnsafePathError
from aptmem.fsutil import atomic_write, create_new, ensure_root, write_all
from aptmem.ids import is_session_id, session_path
from aptmem.store import Capabilities, CompactionPlanner, CompactionWritten, RecoveryReport, SessionStats, checked_write, select_live
from strategies.langchain_messages import entry_to_message, message_to_entry
from strategies.peer_common import RECOVERY_MODES, check_mode, strict_report
from strategies.rewrite_split import kept_positions, split_for_rewrite

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # langchain_community warns on import that it is being sunset
    from langchain_community.chat_message_histories import FileChatMessageHistory
    from langchain_core.messages import BaseMessage, messages_to_dict

__all__ = ["LangchainFileStore", "SUFFIX"]

SUFFIX = ".langchain.json"
#: What FileChatMessageHistory writes into a new file (``json.dumps([])``).
_EMPTY = b"[]"


class LangchainFileStore:
    """Sessions as LangChain ``FileChatMessageHistory`` files under ``root`` (see the module doc)."""

    name = "langchain_file"

    def __init__(self, root: str | os.PathLike[str], *, ensure_ascii: bool = True) -> None:
        self.root = ensure_root(root)
        self.ensure_ascii = ensure_ascii
        self.capabilities = Capabilities(
            durability="none",  # an in-place rewrite per append, no fsync: a crash mid-write tears the file
            recovery_modes=RECOVERY_MODES,
            multi_process_safe=False,  # read-modify-write with no lock: concurrent appends are lost
        )
        self._histories: dict[str, FileChatMessageHistory] = {}
        # One rewrite at a time from this process's threads; reentrant so that a compaction holding it
        # appends its marker through ``append`` (which whoever watches appends sees).
        self._lock = threading.RLock()
        self._closed = False

    # -- files -----------------------------------------------------------------------------------

    def path(self, session_id: str) -> Path:
        """The file of a session (the id is validated first)."""
        return session_path(self.root, session_id, SUFFIX)

    def _history(self, session_id: str, *, create: bool) -> FileChatMessageHistory:
        """The library's history object of a session, made once; ``create`` makes a missing file.

        Called with the lock held.
        """
        if self._closed:
            raise ClosedStoreError("the store is closed")
        history = self._histories.get(session_id)
        if history is not None:
            return history
        path = self.path(session_id)
        if os.path.islink(path):
            raise UnsafePathError(path, "is a symlink; refusing to follow it")
        if not os.path.lexists(path):
            if not create:
                raise SessionNotFound(session_id, str(self.root))
            self._create_file(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BaseChatMessageHistory is deprecated upstream
            history = FileChatMessageHistory(str(path), encoding="utf-8", ensure_ascii=self.ensure_ascii)
        self._histories[session_id] = history
        return history

    @staticmethod
    def _create_file(path: Path) -> bool:
        """Create the session file 0600 with the empty list the library itself would write;
        False (nothing changed) when it exists."""
        try:
            fd = create_new(path)
        except FileExistsError:
            return False
        try:
            write_all(fd, _EMPTY)
        finally:
            os.close(fd)
        return True

    # -- sessions --------------------------------------------------------------------------------

    def create(self, session_id: str) -> None:
        """Create an empty session, refusing one that exists."""
        path = self.path(session_id)
        with self._lock:
            if self._closed:
                raise ClosedStoreError("the store is closed")
            if not self._create_file(path):
                raise SessionExists(session_id, str(self.root))

    def exists(self, session_id: str) -> bool:
        """Tell whether the session's file exists."""
        return os.path.lexists(self.path(session_id))

    def sessions(self) -> list[str]:
        """List the ids of the sessions under the root, sorted."""
        return sorted(name[: -len(SUFFIX)] for name in os.listdir(self.root)
                      if name.endswith(SUFFIX) and is_session_id(name[: -len(SUFFIX)]))

    # -- writing ---------------------------------------------------------------------------------

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry with the library's ``add_message`` (a rewrite of the whole file)."""
        message = entry_to_message(entry)
        with self._lock:
            self._write(session_id, lambda history: history.add_message(message))

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries with the library's ``add_messages`` (one rewrite per message)."""
        self.path(session_id)
        messages = [entry_to_message(entry) for entry in entries]
        if not messages:
            return
        with self._lock:
            self._write(session_id, lambda history: history.add_messages(messages))

    def _write(self, session_id: str, change: Any) -> None:
        """Run one library write on the session, turning its I/O and parse errors into the library's."""
        history = self._history(session_id, create=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                change(history)
        except OSError as exc:
            raise StorageError(exc.errno, f"{history.file_path}: writing the session failed: {exc.strerror}") from exc
        except (ValueError, KeyError, TypeError) as exc:  # the file it re-reads first is damaged
            raise _damage(history.file_path, exc) from None

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the history atomically, as the JSON the library writes (see the module doc)."""
        path = self.path(session_id)
        messages = [entry_to_message(entry) for entry in entries]
        data = self.encode(messages)
        with self._lock:
            self._replace_locked(path, data)

    def _replace_locked(self, path: Path, data: bytes) -> None:
        """Write the file's new bytes atomically (lock held)."""
        if self._closed:
            raise ClosedStoreError("the store is closed")
        try:
            atomic_write(path, data)
        except OSError as exc:
            if isinstance(exc, StorageError):
                raise
            raise StorageError(exc.errno, f"{path}: replacing the session failed: {exc.strerror}") from exc

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Plan from the live context and write the compaction, under the store's lock.

        The lock orders this process's threads only: the library has no lock, so the strategy is
        not safe for several processes (``multi_process_safe`` False), for compactions as for
        appends. An appended marker goes through the library's ``add_message``; a rewrite is the
        atomic ``replace``.
        """
        path = self.path(session_id)
        with self._lock:
            history = self._read_locked(session_id)
            live = select_live(history)
            write = plan(live)
            if write is None:
                return None
            write, summarized = checked_write(live, write)
            before = os.lstat(path).st_size
            if write.persist == "append":
                self.append(session_id, write.marker)  # through append, so whoever watches appends sees it
                return CompactionWritten(persist="append", kept=write.kept, summarized=summarized, bytes_before=before,
                                         bytes_after=os.lstat(path).st_size)
            split = split_for_rewrite(enumerate(history), kept_positions(history, live, write.kept))
            layout = [*(history[i] for i in split.carried), write.marker, *(history[i] for i in split.kept)]
            self._replace_locked(path, self.encode([entry_to_message(entry) for entry in layout]))
            return CompactionWritten(persist="rewrite", kept=write.kept, summarized=summarized, removed_entries=split.removed,
                                     removed_bytes=split.removed_bytes, carried=len(split.carried), bytes_before=before,
                                     bytes_after=os.lstat(path).st_size)

    def latest_summary(self, session_id: str) -> Compaction | None:
        """The latest compaction of the session (the file is parsed whole)."""
        return next((entry for entry in reversed(self._read(session_id)) if isinstance(entry, Compaction)), None)

    def encode(self, messages: list[BaseMessage]) -> bytes:
        """The file's bytes for ``messages``, exactly as ``FileChatMessageHistory`` writes them."""
        return json.dumps(messages_to_dict(messages), ensure_ascii=self.ensure_ascii).encode("utf-8")

    # -- reading ---------------------------------------------------------------------------------

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Read the session through the library (``messages`` parses the whole file), oldest first."""
        return iter(self._read(session_id))

    def _read(self, session_id: str) -> list[Entry]:
        with self._lock:
            return self._read_locked(session_id)

    def _read_locked(self, session_id: str) -> list[Entry]:
        """The session's entries, read through the library (lock held)."""
        history = self._history(session_id, create=False)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                messages = history.messages
        except OSError as exc:
            raise StorageError(exc.errno, f"{history.file_path}: reading the session failed: {exc.strerror}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise _damage(history.file_path, exc) from None
        entries = []
        for index, message in enumerate(messages):
            try:
                entries.append(message_to_entry(message, f"message {index + 1}"))
            except InvalidEntry as exc:
                raise CorruptLogError(str(history.file_path), 1, 0, str(exc)) from None
        return entries

    def read_live(self, session_id: str) -> list[Entry]:
        """The live context, selected from the whole history (the file is parsed whole)."""
        return select_live(self._read(session_id))

    def stats(self, session_id: str) -> SessionStats:
        """Count entries and compactions; bytes on disk is the file's size."""
        entries = self._read(session_id)
        path = self.path(session_id)
        return SessionStats(session_id=session_id, entries=len(entries),
                            compactions=sum(isinstance(entry, Compaction) for entry in entries),
                            bytes_on_disk=os.lstat(path).st_size, path=str(path))

    # -- recovery and closing ----------------------------------------------------------------------

    def recover(self, session_id: str, mode: str | None = None) -> RecoveryReport:
        """Check that the library can read the whole file; repair nothing (``strict`` only)."""
        mode = check_mode(self.name, mode)
        path = self.path(session_id)
        with self._lock:
            self._history(session_id, create=False)
        return strict_report(str(path), mode, lambda: self._read(session_id), "parsed the whole file with the library")

    def close(self) -> None:
        """Forget the history objects; every acknowledged append is already written (unsynced)."""
        with self._lock:
            self._histories.clear()
            self._closed = True

    def __enter__(self) -> "LangchainFileStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _damage(path: Path, exc: Exception) -> CorruptLogError:
    """The error for a file the library cannot parse, with the line and offset JSON reports."""
    if isinstance(exc, json.JSONDecodeError):
        return CorruptLogError(str(path), exc.lineno, exc.pos, f"not a JSON list of messages: {exc.msg}")
    return CorruptLogError(str(path), 1, 0, f"not a list of LangChain messages: {type(exc).__name__}: {exc}")
