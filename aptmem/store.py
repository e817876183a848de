"""The one storage interface every strategy implements, and the records it returns.

A store holds many sessions under one root. Every method is mandatory; what differs between
strategies is declared in :class:`Capabilities`, never discovered with ``hasattr``.

A compaction is one call, :meth:`SessionStore.compact`: the store takes the session's writer
lock (a transaction, for a database), reads the live context, hands it to the caller's planner
and writes what the planner returns, all before it lets go. An append made by anyone while a
compaction runs therefore lands before the read (and is planned with) or after the write (and
is kept as it is): it is never lost, and a compaction that waited for the lock never writes a
snapshot older than the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, User

__all__ = [
    "Capabilities",
    "CompactionPlanner",
    "CompactionWrite",
    "CompactionWritten",
    "DAMAGE_EXAMPLES",
    "Durability",
    "RecoveryReport",
    "RecoveryMode",
    "RECOVERY_MODES",
    "SessionStats",
    "SessionStore",
    "checked_write",
    "Storage",
    "select_live",
    "summarizable",
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
    #: ``append_many`` is one write or one transaction, not a loop of appends.
    native_batch: bool
    #: ``read_live`` reads only the tail of the history, not all of it.
    fast_resume: bool
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


#: Damaged lines a report names (line number and reason); the others are only counted, so a
#: file of millions of damaged lines costs a reader no more memory than a clean one.
DAMAGE_EXAMPLES = 1000


class RecoveryReport(msgspec.Struct, kw_only=True):
    """What recovery found in a session file and what it did about it.

    ``entries`` counts the good entries the mode keeps; ``good_lines`` every good line in the
    file, whatever the mode.

    ``damaged_count`` counts the damaged lines that are not the torn tail; ``damaged_lines``
    and ``damage_reasons`` name the first :data:`DAMAGE_EXAMPLES` of them (1-based line
    numbers). The torn tail is reported as ``torn_tail_bytes`` (and ``torn_tail_line``).
    ``discarded_bytes`` counts every byte the mode does not keep (damaged lines, torn tail, and
    under ``point_in_time`` the good lines after the first damage). Nothing discarded by a
    repair is destroyed: it is moved to ``quarantine_path``.
    """

    path: str
    mode: str
    entries: int = 0
    good_lines: int = 0
    damaged_count: int = 0
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
        return not self.damaged_count and not self.damaged_lines and self.torn_tail_bytes == 0


class CompactionWrite(msgspec.Struct, frozen=True, kw_only=True):
    """What a compaction's planner asks the store to write.

    ``kept`` is how many entries at the end of the live context (as the store handed it to the
    planner) stay verbatim; everything before them in the live context is summarized by
    ``marker``. ``persist`` ``append`` appends the marker (the history stays, and the marker's
    ``kept_before`` is ``kept``); ``rewrite`` makes the session the marker and the kept entries
    (``kept_before`` 0), with the entries no summary stands for (metadata, unknown types)
    carried over before the marker byte for byte.
    """

    marker: Compaction
    kept: int
    persist: Literal["append", "rewrite"]


class CompactionWritten(msgspec.Struct, kw_only=True):
    """What a store did to persist a compaction, for the caller to report.

    ``summarized`` entries left the live context (the summary stands for them). A rewrite also
    says what left the file: ``removed_entries`` (summarized ones and folded older compactions,
    ``removed_bytes`` of lines), ``carried`` entries kept before the marker because no summary
    stands for them, and ``quarantined`` pieces of damage (``quarantined_bytes``) moved to
    ``quarantine_path``: nothing that is not summarized leaves the disk.
    """

    persist: str
    kept: int
    summarized: int
    removed_entries: int = 0
    removed_bytes: int = 0
    carried: int = 0
    quarantined: int = 0
    quarantined_bytes: int = 0
    quarantine_path: str | None = None
    bytes_before: int = 0
    bytes_after: int = 0


#: Called by :meth:`SessionStore.compact` with the live context read under the writer lock;
#: returns what to write, or None to write nothing.
CompactionPlanner = Callable[[list[Entry]], CompactionWrite | None]


def checked_write(live: Sequence[Entry], write: CompactionWrite) -> tuple[CompactionWrite, int]:
    """Check a planner's answer against the live context it was given; return it with the
    marker's ``kept_before`` set for the layout, and how many entries it summarizes.

    Raises ``ValueError`` for a way to persist that does not exist or a ``kept`` the live
    context does not have. Every store calls this before writing, so the positions a marker
    records are the store's, whatever the planner filled in.
    """
    if write.persist not in ("append", "rewrite"):
        raise ValueError(f"unknown way to persist a compaction: {write.persist!r} (append or rewrite)")
    body = len(live) - (1 if live and isinstance(live[0], Compaction) else 0)
    if not 0 <= write.kept <= body:
        raise ValueError(f"a compaction cannot keep {write.kept} entries of a live context of {body}")
    kept_before = write.kept if write.persist == "append" else 0
    if write.marker.kept_before != kept_before:
        write = msgspec.structs.replace(write, marker=msgspec.structs.replace(write.marker, kept_before=kept_before))
    return write, body - write.kept


def summarizable(entry: Entry) -> bool:
    """Whether a summary can stand for ``entry``: conversation, or an older summary.

    Metadata and entries of unknown types are not conversation a summarizer reads, so a
    rewrite carries them over instead of dropping them.
    """
    return isinstance(entry, (User, Assistant, ToolCall, ToolResult, Compaction))


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
        """Replace the whole history atomically with ``entries``."""
        ...

    def compact(self, session_id: str, plan: CompactionPlanner) -> CompactionWritten | None:
        """Compact under the session's writer lock: read the live context, plan, write, let go.

        ``plan`` is called once with the live context as stored (``read_live``), read after
        the lock was taken; what it returns is written before the lock is released, so no
        append by anyone falls between the read and the write. Returns what was written, or
        None when ``plan`` returned None (nothing changes then). An error ``plan`` raises
        changes nothing and is raised. Raises :class:`~aptmem.errors.SessionNotFound` for a
        session that does not exist.
        """
        ...

    def latest_summary(self, session_id: str) -> Compaction | None:
        """Return the session's latest compaction (None if it has none), reading only its tail.

        Raises :class:`~aptmem.errors.CorruptLogError` when damage newer than the compaction
        found may itself be a newer compaction: a caller must not take an older summary for
        the latest one without knowing it.
        """
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

    The live context is the latest compaction, then the entries it keeps, then everything
    after it. A compaction with ``kept_before`` N keeps the N entries nearest before it that
    are not compactions (fewer if the history has fewer). One without (an older writer's)
    keeps the entry named by its ``first_kept`` and every entry after that up to itself, older
    compactions among them left out (the latest summary stands for them); if ``first_kept`` is
    missing or names no entry, only the entries after it are live. Without a compaction the
    whole history is live: a live context holds a compaction only first.
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
    if marker.kept_before is not None:
        kept: list[Entry] = []
        index = last - 1
        while len(kept) < marker.kept_before and index >= 0:
            if not isinstance(entries[index], Compaction):
                kept.append(entries[index])
            index -= 1
        return [marker, *kept[::-1], *entries[last + 1 :]]
    start = last + 1
    if marker.first_kept is not None:
        for index in range(last - 1, -1, -1):
            if entries[index].id == marker.first_kept:
                start = index
                break
    named = [e for e in entries[start:last] if not isinstance(e, Compaction)] if start < last else []
    return [marker, *named, *entries[last + 1 :]]
