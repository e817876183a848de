"""Bringing one session's records up to date with its log and sidecar, in one SQLite transaction.

The index remembers, per session, how many good entries it indexed and a fingerprint of them
(BLAKE2b over each entry's canonical encoding, in order). Catching up streams the log through the
store: the first ``entries`` entries are hashed and compared with the fingerprint, and

* if they match, only the entries after them are chunked and indexed (the log grew);
* if they differ, or the log now has fewer entries (a rewrite compaction, a repair, a replaced
  file), every record of the session is dropped and the session is indexed afresh.

Either way the records, the engines' tables and the session's position change in the same
transaction: a process killed at any moment leaves the index as it was before that session's
catch-up began, or as it is after it, never in between; the next catch-up resumes from there.
The L2 records (latest summary, sidecar) are replaced whenever the session changed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence

import msgspec

from aptmem.entries import Compaction, Entry, encode_entry
from aptmem.errors import CorruptMetaError, SessionNotFound, UnsafePathError
from aptmem.recall.chunking import entry_docs, session_docs, summary_doc
from aptmem.recall.engines.base import Engine
from aptmem.recall.facts import extract_facts
from aptmem.recall.records import Doc
from aptmem.store import SessionStore
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["SessionState", "SessionUpdate", "catch_up_session", "drop_session", "meta_fingerprint"]

#: Records written per batch while a long history is indexed (memory stays bounded by a batch).
FLUSH_DOCS = 2048


class SessionState(msgspec.Struct, kw_only=True):
    """What the index knows of one session (a row of ``sessions``)."""

    entries: int = 0
    fingerprint: bytes = b""
    log_token: str | None = None
    meta_token: str | None = None
    meta_hash: bytes | None = None
    first_ts: int | None = None
    last_ts: int | None = None


class SessionUpdate(msgspec.Struct, kw_only=True):
    """What one catch-up did: entries and records added, records removed, why it re-indexed."""

    session_id: str
    new_entries: int = 0
    added: int = 0
    removed: int = 0
    reindexed: str | None = None  # the reason, when the whole session was indexed afresh
    notes: list[str] = []


def load_state(db: sqlite3.Connection, session_id: str) -> SessionState | None:
    """The stored state of a session, or None if it was never indexed."""
    row = db.execute("SELECT entries, fingerprint, log_token, meta_token, meta_hash, first_ts, last_ts FROM sessions "
                     "WHERE session_id = ?", (session_id,)).fetchone()
    if row is None:
        return None
    return SessionState(entries=row[0], fingerprint=bytes(row[1]), log_token=row[2], meta_token=row[3],
                        meta_hash=None if row[4] is None else bytes(row[4]), first_ts=row[5], last_ts=row[6])


def _hasher() -> "hashlib._Hash":
    return hashlib.blake2b(digest_size=16)


def meta_fingerprint(meta: SessionMeta | None) -> bytes:
    """A hash of the sidecar's content (empty for no sidecar)."""
    if meta is None:
        return b""
    return hashlib.blake2b(msgspec.json.encode(meta), digest_size=16).digest()


def _remove(db: sqlite3.Connection, engines: Sequence[Engine], session_id: str, where: str = "", args: tuple = ()) -> int:
    """Delete a session's records (those matching ``where``) from the engines and ``docs``."""
    ids = [r[0] for r in db.execute(f"SELECT doc_id FROM docs WHERE session_id = ? {where}", (session_id, *args))]
    if ids:
        for engine in engines:
            engine.remove(db, ids)
        db.executemany("DELETE FROM docs WHERE doc_id = ?", [(i,) for i in ids])
    return len(ids)


def drop_session(db: sqlite3.Connection, engines: Sequence[Engine], session_id: str) -> int:
    """Forget a session entirely (its log is gone); return how many records were removed."""
    removed = _remove(db, engines, session_id)
    db.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
    return removed


class _Writer:
    """Buffers new records, gives them ``doc_id``s and writes them to ``docs`` and the engines."""

    def __init__(self, db: sqlite3.Connection, engines: Sequence[Engine]) -> None:
        self.db = db
        self.engines = engines
        self.pending: list[Doc] = []
        self.written = 0
        row = db.execute("SELECT COALESCE(MAX(doc_id), 0) FROM docs").fetchone()
        self.next_id = int(row[0]) + 1  # safe: we hold the database's write lock (BEGIN IMMEDIATE)

    def add(self, docs: Sequence[Doc]) -> None:
        self.pending.extend(docs)
        if len(self.pending) >= FLUSH_DOCS:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        numbered = [(self.next_id + n, d) for n, d in enumerate(self.pending)]
        self.next_id += len(numbered)
        self.db.executemany("INSERT INTO docs(doc_id, session_id, level, kind, entry_id, position, ts, text) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(i, d.session_id, d.level, d.kind, d.entry_id, d.position, d.ts, d.text) for i, d in numbered])
        for engine in self.engines:
            engine.add(self.db, numbered)
        self.written += len(numbered)
        self.pending = []


def _read_meta(root: str, session_id: str, update: SessionUpdate) -> SessionMeta | None:
    """The session's sidecar, or None (missing, or unreadable: noted, never fatal)."""
    try:
        return WorkingMemory(root, session_id).load()
    except SessionNotFound:
        return None
    except (CorruptMetaError, UnsafePathError) as exc:
        update.notes.append(f"sidecar not indexed: {exc}")
        return None


def _verified_tail(entries: Iterator[Entry], state: SessionState) -> tuple[bool, "hashlib._Hash", str | None]:
    """Hash the first ``state.entries`` entries; (prefix matches, hasher after them, reason if not)."""
    hasher = _hasher()
    seen = 0
    if state.entries == 0:
        return True, hasher, None
    for entry in entries:
        hasher.update(encode_entry(entry))
        hasher.update(b"\n")
        seen += 1
        if seen == state.entries:
            break
    if seen < state.entries:
        return False, hasher, f"the log has {seen} entries, {state.entries} were indexed (rewritten or cut)"
    if hasher.digest() != state.fingerprint:
        return False, hasher, "the indexed entries changed (rewritten)"
    return True, hasher, None


def catch_up_session(db: sqlite3.Connection, store: SessionStore, root: str, session_id: str, engines: Sequence[Engine], *,
                     facts: bool, log_token: str | None, meta_token: str | None) -> SessionUpdate:
    """Index what is new in one session; the caller runs this inside one write transaction.

    ``log_token`` and ``meta_token`` are the change tokens taken *before* reading, so a write that
    lands while we read makes the stored token stale and the next catch-up look again.
    """
    update = SessionUpdate(session_id=session_id)
    state = load_state(db, session_id) or SessionState()
    entries = store.iter_entries(session_id)
    matches, hasher, why = _verified_tail(entries, state)
    position, first_ts, last_ts = state.entries, state.first_ts, state.last_ts
    if not matches:  # the log is no longer what was indexed: index it afresh
        update.removed += _remove(db, engines, session_id)
        update.reindexed = why
        entries = store.iter_entries(session_id)
        hasher, position, first_ts, last_ts = _hasher(), 0, None, None
    writer = _Writer(db, engines)
    latest: tuple[Compaction, int] | None = None
    for entry in entries:
        hasher.update(encode_entry(entry))
        hasher.update(b"\n")
        chunks = entry_docs(session_id, entry, position)
        writer.add(chunks)
        if facts:
            for chunk in chunks:
                writer.add(extract_facts(chunk))
        if isinstance(entry, Compaction):
            latest = (entry, position)
        if entry.ts is not None:
            first_ts = entry.ts if first_ts is None else min(first_ts, entry.ts)
            last_ts = entry.ts if last_ts is None else max(last_ts, entry.ts)
        position += 1
        update.new_entries += 1
    if latest is not None:  # a newer summary: it replaces the L2 summary record
        update.removed += _remove(db, engines, session_id, "AND level = 'l2' AND kind = 'summary'")
        summary = summary_doc(session_id, *latest)
        writer.add([summary] if summary is not None else [])
    meta = _read_meta(root, session_id, update)
    meta_hash = meta_fingerprint(meta)
    if update.new_entries or update.reindexed or meta_hash != state.meta_hash:
        update.removed += _remove(db, engines, session_id, "AND level = 'l2' AND kind = 'session'")
        writer.add(session_docs(meta, session_id, first_ts, last_ts))
    writer.flush()
    update.added = writer.written
    db.execute(
        "INSERT INTO sessions(session_id, entries, fingerprint, log_token, meta_token, meta_hash, first_ts, last_ts) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET entries = excluded.entries, "
        "fingerprint = excluded.fingerprint, log_token = excluded.log_token, meta_token = excluded.meta_token, "
        "meta_hash = excluded.meta_hash, first_ts = excluded.first_ts, last_ts = excluded.last_ts",
        (session_id, position, hasher.digest(), log_token, meta_token, meta_hash, first_ts, last_ts),
    )
    return update
