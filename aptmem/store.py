"""The one storage interface every strategy implements, and the records it returns.

A store holds many sessions under one root. Every method is mandatory; what differs between
strategies is declared in :class:`Capabilities`, never discovered with ``hasattr``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import msgspec

from aptmem.entries import Compaction, Entry

__all__ = [
    "Capabilities",
    "Durability",
    "RecoveryReport",
    "RecoveryMode",
    "RECOVERY_MODES",
    "SessionStats",
    "SessionStore",
    "Storage",
    "select_live",
]

RecoveryMode = Literal["strict", "truncate_tail", "point_in_time", "skip"]
RECOVERY_MODES: tuple[str, ...] = ("strict", "truncate_tail", "point_in_time", "skip")

#: When an acknowledged append survives a power loss:
#: ``per_append`` once ``append`` returns; ``batch`` once the batch it belongs to is synced
#: (at the latest on ``close``); ``process`` only a process crash is survived (the kernel has the
#: bytes, the disk may not); ``none`` not even that is promised (e.g. an in-place rewrite can be
#: caught half written by any crash).
Durability = Literal["per_append", "batch", "process", "none"]

#: Where a store keeps its sessions: ``files`` under its root (``SessionStats.bytes_on_disk`` is their
#: size, ``path`` one of them), or ``server``: in a database server's own files, the root holding only
#: what reaches them (``bytes_on_disk`` is the size the server reports for the store's tables).
Storage = Literal["files", "server"]


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a store promises, declared up front so harness and callers can group fairly."""

    durability: Durability
    #: recovery modes ``recover`` accepts (others raise ``ValueError``).
    recovery_modes: tuple[str, ...]
    #: appends from several processes to one session are serialized by the store.
    multi_process_safe: bool
    #: where the sessions live (see :data:`Storage`).
    storage: Storage = "files"


class SessionStats(msgspec.Struct, kw_only=True):
    """Size figures of one session."""

    session_id: str
    entries: int
    compactions: int
    bytes_on_disk: int
    path: str


class RecoveryReport(msgspec.Struct, kw_only=True):
    """What recovery found in a session file and what it did about it.

    ``entries`` counts the good entries the mode keeps; ``good_lines`` every good line in the
    file, whatever the mode.

    ``damaged_lines`` are 1-based line numbers of damage that is not the torn tail; the torn
    tail is reported as ``torn_tail_bytes`` (and ``torn_tail_line``). ``discarded_bytes``
    counts every byte the mode does not keep (damaged lines, torn tail, and under
    ``point_in_time`` the good lines after the first damage). Nothing discarded by a repair is
    destroyed: it is moved to ``quarantine_path``.
    """

    path: str
    mode: str
    entries: int = 0
    good_lines: int = 0
    damaged_lines: list[int] = []
    damage_reasons: list[str] = []
    torn_tail_bytes: int = 0
    torn_tail_line: int | None = None
    good_lines_discarded: int = 0
    discarded_bytes: int = 0
    missing_final_newline: bool = False
    loadable: bool = True
    repaired: bool = False
    quarantined: int = 0
    quarantine_path: str | None = None
    actions: list[str] = []
    error: str | None = None
    refused_line: int | None = None
    refused_offset: int | None = None

    @property
    def clean(self) -> bool:
        """True when the file has no damage at all (a missing final newline is not damage)."""
        return not self.damaged_lines and self.torn_tail_bytes == 0


@runtime_checkable
class SessionStore(Protocol):
    """A root of sessions, each an ordered history of entries.

    Appending to a session that does not exist creates it. Reads of a session that does not
    exist raise :class:`~aptmem.errors.SessionNotFound`.
    """

    name: str
    capabilities: Capabilities
    #: the folder the store keeps its sessions in (sidecars of its sessions live there too)
    root: Path

    def create(self, session_id: str) -> None:
        """Create an empty session; raise :class:`~aptmem.errors.SessionExists` if it exists."""
        ...

    def exists(self, session_id: str) -> bool:
        """Tell whether the session exists."""
        ...

    def sessions(self) -> list[str]:
        """List the ids of every session in the store, sorted."""
        ...

    def append(self, session_id: str, entry: Entry) -> None:
        """Append one entry; it is acknowledged when this returns (see ``capabilities.durability``)."""
        ...

    def append_many(self, session_id: str, entries: Sequence[Entry]) -> None:
        """Append several entries, in order, as one batch."""
        ...

    def iter_entries(self, session_id: str) -> Iterator[Entry]:
        """Stream every entry of the session, oldest first."""
        ...

    def read_live(self, session_id: str) -> list[Entry]:
        """Return the live context: the latest compaction, the entries it kept, all after it."""
        ...

    def replace(self, session_id: str, entries: Iterable[Entry]) -> None:
        """Replace the whole history atomically (the ``rewrite`` way to persist a compaction)."""
        ...

    def recover(self, session_id: str, mode: RecoveryMode | None = None) -> RecoveryReport:
        """Check the session after a crash and repair it as ``mode`` allows; report what was done.

        Damage the mode refuses is reported (``loadable`` False, ``refused_line``), not raised,
        and nothing is changed. A mode the store does not offer raises ``ValueError``.
        """
        ...

    def stats(self, session_id: str) -> SessionStats:
        """Count entries, compactions and bytes on disk."""
        ...

    def close(self) -> None:
        """Make everything acknowledged durable (as promised) and release files and locks."""
        ...


def select_live(entries: Sequence[Entry]) -> list[Entry]:
    """Return the live context of a history given oldest first.

    The live context is the latest compaction, then the entry named by its ``first_kept`` and
    every entry after that (skipping any older compaction among them: the latest summary took it in), then
    everything after the compaction. If ``first_kept`` is missing or names no entry, only the
    entries after the compaction are live. Without a compaction the whole history is live.
    """
    last = None
    for index in range(len(entries) - 1, -1, -1):
        if isinstance(entries[index], Compaction):
            last = index
            break
    if last is None:
        return list(entries)
    marker = entries[last]
    assert isinstance(marker, Compaction)
    start = last + 1
    if marker.first_kept is not None:
        for index in range(last - 1, -1, -1):
            if entries[index].id == marker.first_kept:
                start = index
                break
    # An older compaction among the kept entries is superseded: the latest summary took it in.
    kept = [e for e in entries[start:last] if not isinstance(e, Compaction)] if start < last else []
    return [marker, *kept, *entries[last + 1 :]]
