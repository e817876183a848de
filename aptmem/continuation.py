"""Creating sessions, and continuing an old session in a new one.

A continued session starts with the old one's working memory (text, working dict, model, title)
and a ``parent`` link to it. By default the old history is not read at all: only the old
sidecar is. Two options carry history over:

* ``with_summary``: the old session's latest compaction summary becomes the new session's first
  entry. It is found with ``store.latest_summary``, which for the JSONL log reads backwards from
  the end only as far as the latest compaction, so the cost is the old live context, not the
  history; a damaged line newer than it that looks like a compaction is an error, not a reason
  to carry an older summary (or none) in silence.
* ``with_history``: every old entry is streamed into the new session, in chunks (memory stays
  bounded by one chunk, whatever the history's size).

The old session is never changed. The new sidecar is written last, so a continuation that fails
half way leaves a new log without a sidecar (the error says which), never a sidecar that claims
a history it does not have.

A session's log and its sidecar share one folder: ``root`` is the store's own folder (the default),
and naming another one is an error (:class:`~aptmem.errors.RootMismatchError`), not a session
split over two folders.
"""

from __future__ import annotations

import os
from itertools import islice

from aptmem.entries import Compaction, Entry, now_ms
from aptmem.errors import RootMismatchError, SessionExists, SessionNotFound
from aptmem.ids import new_session_id, validate_session_id
from aptmem.store import SessionStore
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["HISTORY_CHUNK", "continue_session", "create_session", "carried_summary", "sidecar_root"]

#: Entries per ``append_many`` when copying a whole history.
HISTORY_CHUNK = 512


def sidecar_root(store: SessionStore, root: str | os.PathLike[str] | None = None) -> os.PathLike[str] | str:
    """The folder of a store's sidecars: its own; raise :class:`RootMismatchError` if ``root`` names another."""
    if root is not None and os.path.realpath(root) != os.path.realpath(store.root):
        raise RootMismatchError(str(store.root), os.fspath(root))
    return store.root


def create_session(
    store: SessionStore,
    root: str | os.PathLike[str] | None = None,
    *,
    title: str = "",
    model: str | None = None,
    session_id: str | None = None,
) -> str:
    """Create a session: its empty log in ``store`` and its sidecar beside it; return its id.

    ``root`` may name the store's folder again (it must: :class:`RootMismatchError` otherwise).
    Raises :class:`SessionExists` if either already exists (nothing is created then). The log
    is created first: if writing the sidecar fails (a full disk), the error says so and a retry
    with the same ``session_id`` finishes the job, since an empty log without a sidecar is
    exactly what a failed creation leaves.
    """
    root = sidecar_root(store, root)
    session_id = validate_session_id(session_id) if session_id is not None else new_session_id()
    memory = WorkingMemory(root, session_id)
    if not (_half_created(store, memory)):
        _refuse_existing(store, memory)
        store.create(session_id)
    try:
        memory.create(title=title, model=model)
    except BaseException as exc:
        exc.add_note(f"session {session_id}: the log was created but not its sidecar; "
                     "create_session with this session_id again finishes it")
        raise
    return session_id


def _half_created(store: SessionStore, memory: WorkingMemory) -> bool:
    """Whether a session has an empty log and no sidecar: a creation that failed half way."""
    sid = memory.session_id
    return not memory.exists() and store.exists(sid) and store.stats(sid).entries == 0


def continue_session(
    store: SessionStore,
    root: str | os.PathLike[str] | None,
    old_id: str,
    *,
    new_id: str | None = None,
    with_summary: bool = False,
    with_history: bool = False,
    title: str | None = None,
    recalled: str | None = None,
) -> str:
    """Create a new session that continues ``old_id``; return the new id.

    The new sidecar inherits the old one's memory text, working dict and model, takes ``title``
    (default: the old title) and names ``old_id`` as its ``parent``. An old session with a log
    but no sidecar continues with empty working memory. The old history is read only if
    ``with_summary`` (its live tail) or ``with_history`` (all of it) asks for it; the two are
    exclusive, since the whole history already holds the summary. ``with_summary`` on a session
    that was never compacted carries nothing over. ``recalled`` (what :func:`aptmem.recall.recall`
    found) seeds the new session: it joins the carried summary in the new session's first entry.

    ``root`` is the store's folder (None: the same); another folder raises :class:`RootMismatchError`.
    Raises :class:`SessionNotFound` (naming the folder searched) if the store has no session
    ``old_id`` (a sidecar alone is not a session), :class:`SessionExists` if ``new_id`` is taken,
    ``ValueError`` if both options are given.
    """
    root = sidecar_root(store, root)
    if with_summary and with_history:
        raise ValueError("with_summary and with_history are exclusive: the whole history already holds the summary")
    old_id = validate_session_id(old_id)
    new_id = validate_session_id(new_id) if new_id is not None else new_session_id()
    if new_id == old_id:
        raise SessionExists(new_id, "continue needs a new session id")
    if not store.exists(old_id):
        raise SessionNotFound(old_id, f"{store.root} (store {store.name!r})")
    old = _old_meta(root, old_id)
    # Everything read from the old session is read before anything new exists, so a failure
    # here (damage in the old tail, say) creates nothing.
    summary = carried_summary(store, old_id) if with_summary else None
    if recalled:
        summary = _with_recalled(summary, recalled)

    memory = WorkingMemory(root, new_id)
    _refuse_existing(store, memory)
    store.create(new_id)
    try:
        if summary is not None:
            store.append(new_id, summary)
        if with_history:
            _copy_history(store, old_id, new_id)
    except BaseException as exc:
        exc.add_note(f"session {new_id} was created but holds only part of what continuing {old_id} should copy; it has no sidecar")
        raise
    memory.create(
        title=old.title if title is None else title,
        model=old.model,
        parent=old_id,
        memory=old.memory,
        working=old.working,
    )
    return new_id


def carried_summary(store: SessionStore, old_id: str) -> Compaction | None:
    """Return the old session's latest compaction summary as a first entry for a new session.

    The entry is a fresh :class:`Compaction` (nothing before it is live) whose note names the
    source session, or None if the old session was never compacted. Raises
    :class:`~aptmem.errors.CorruptLogError` if damage newer than the latest good compaction may
    be a newer one (see :meth:`~aptmem.store.SessionStore.latest_summary`).
    """
    latest = store.latest_summary(old_id)
    if latest is None:
        return None
    return Compaction(
        ts=now_ms(),
        summary=latest.summary,
        first_kept=None,
        kept_before=0,
        notes=[f"summary carried over from session {old_id}"],
    )


def _with_recalled(summary: Compaction | None, recalled: str) -> Compaction:
    """The first entry of a new session seeded with recall: the carried summary (if any), then it."""
    if summary is None:
        return Compaction(ts=now_ms(), summary=recalled, first_kept=None, notes=["seeded with recall"])
    return Compaction(ts=summary.ts, summary=f"{summary.summary}\n\n{recalled}", first_kept=None,
                      notes=[*summary.notes, "seeded with recall"])


def _old_meta(root: str | os.PathLike[str], old_id: str) -> SessionMeta:
    """The old session's sidecar, or empty working memory if it has none."""
    old = WorkingMemory(root, old_id)
    try:
        return old.load()
    except SessionNotFound:
        return SessionMeta(session_id=old_id, created=0, updated=0)


def _refuse_existing(store: SessionStore, memory: WorkingMemory) -> None:
    """Raise :class:`SessionExists` if the new session has a log or a sidecar already."""
    if store.exists(memory.session_id) or memory.exists():
        raise SessionExists(memory.session_id, str(memory.root))


def _copy_history(store: SessionStore, old_id: str, new_id: str) -> None:
    """Stream every old entry into the new session, ``HISTORY_CHUNK`` entries per append."""
    entries = store.iter_entries(old_id)
    while True:
        chunk: list[Entry] = list(islice(entries, HISTORY_CHUNK))
        if not chunk:
            return
        store.append_many(new_id, chunk)
