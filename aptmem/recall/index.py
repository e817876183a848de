"""The recall index: records of every session under a root, derived from the logs, kept up to date.

When it catches up (nothing is added to the append path, so appending costs exactly what it did):

* :meth:`RecallIndex.refresh` (run by ``aptmem index`` and before every ``recall``): for each
  session, a change token of its log and of its sidecar (for the JSONL store: inode, size and
  mtime of the file, one ``stat`` each) is compared with the one seen at the last catch-up; only
  a session whose token moved, or that has no token, is read. A store without tokens has every
  session re-read (correct, slower).
* :meth:`RecallIndex.catch_up` of one session, for a program that wants the index fresh right
  after it compacted or ended a session; :meth:`RecallIndex.verify` re-reads every session
  whatever its token says; :meth:`RecallIndex.rebuild` drops everything and indexes afresh.

Each session catches up atomically (see :mod:`aptmem.recall.catchup`): alone in a transaction
for :meth:`RecallIndex.catch_up`, under its own savepoint for a sweep, whose transactions commit
between sessions about every :data:`COMMIT_SECONDS`. A killed index resumes where its last
committed session left off, with nothing missing or duplicated.
Sessions whose log is gone are dropped. A session that cannot be read (a log its recovery mode
refuses) is skipped and reported, its old records kept, and tried again next time.

Adding an engine the index does not yet maintain, switching fact extraction, or a new version of
the text analysis (:data:`~aptmem.recall.analyze.ANALYSIS_VERSION`) re-indexes everything (the records' search text is not stored, only their evidence).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from aptmem.errors import AptmemError, RecallError
from aptmem.recall.analyze import ANALYSIS_VERSION
from aptmem.recall.catchup import SessionUpdate, catch_up_session, drop_session
from aptmem.recall.engines import DEFAULT_ENGINE, Engine, Filter, get_engine
from aptmem.recall.records import Hit
from aptmem.recall.schema import INDEX_NAME, connect, read_setting, write_setting
from aptmem.store import SessionStore
from aptmem.working_memory import WorkingMemory

__all__ = ["IndexReport", "IndexStats", "RecallIndex", "file_token", "level_filter"]

#: A change token of a session's log: a string that differs whenever the log changed, or None
#: when the store cannot tell cheaply (the session is then re-read on every refresh).
ChangeToken = Callable[[str], str | None]
T = TypeVar("T")


def file_token(path: str | os.PathLike[str]) -> str | None:
    """inode, size and mtime of a file as one string (None if it is missing)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def no_token(session_id: str) -> str | None:
    """The change token of a store that offers none: always unknown."""
    return None


class IndexReport(msgspec.Struct, kw_only=True):
    """What a refresh, verify or rebuild did."""

    sessions: int = 0
    updated: list[SessionUpdate] = []
    dropped: list[str] = []
    errors: list[str] = []

    @property
    def added(self) -> int:
        """Records added."""
        return sum(u.added for u in self.updated)


class IndexStats(msgspec.Struct, kw_only=True):
    """The index's size: sessions, records by level and kind, bytes on disk, engines."""

    path: str
    sessions: int
    records: dict[str, int]
    bytes: int
    engines: list[str]
    facts: bool


def level_filter(level: str = "all", l3: str = "chunks") -> Filter:
    """The :class:`Filter` of a level (``l2``, ``l3``, ``all``) and an L3 variant (``chunks``, ``facts``, ``both``)."""
    levels = {"l2": ("l2",), "l3": ("l3",), "all": ("l2", "l3")}.get(level)
    l3_kinds = {"chunks": ("chunk",), "facts": ("fact",), "both": ("chunk", "fact")}.get(l3)
    if levels is None:
        raise ValueError(f"unknown level {level!r}; choose l2, l3 or all")
    if l3_kinds is None:
        raise ValueError(f"unknown L3 variant {l3!r}; choose chunks, facts or both")
    return Filter(levels=levels, kinds=("session", "summary", *l3_kinds))


#: A sweep commits its work once a transaction has been open this long (between two sessions).
#: One commit per session cost 0.57 s of a 20k-record build (180 sessions): every commit writes
#: the pages the session touched, and FTS5 starts a new segment it later merges. Committing by
#: time keeps that to a few commits a build, bounds how long another process waits for the
#: write lock, and bounds the work a killed build loses.
COMMIT_SECONDS = 0.5


class _Transaction:
    """Sessions caught up in shared write transactions, each session under its own savepoint.

    A session's records and position change together or not at all (a failed session rolls back
    to its savepoint, the others stay); the transaction commits between sessions once it has
    been open ``commit_seconds`` (0: after every session), and on leaving. A process killed at any moment leaves the
    index as of its last commit, which is always between two sessions.
    """

    def __init__(self, db: sqlite3.Connection, commit_seconds: float = COMMIT_SECONDS) -> None:
        self.db = db
        self.commit_seconds = commit_seconds
        self.opened: float | None = None

    def __enter__(self) -> "_Transaction":
        return self

    def session(self, work: Callable[[], T]) -> T:
        """Run one session's work under a savepoint of the open transaction (opening one if needed)."""
        if self.opened is None:
            self.db.execute("BEGIN IMMEDIATE")
            self.opened = time.monotonic()
        self.db.execute("SAVEPOINT session")
        try:
            result = work()
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back the whole transaction itself
                self.db.execute("ROLLBACK TO session")
                self.db.execute("RELEASE session")
            else:
                self.opened = None
            raise
        self.db.execute("RELEASE session")
        if time.monotonic() - self.opened >= self.commit_seconds:
            self._commit()
        return result

    def _commit(self) -> None:
        if self.opened is not None:
            self.db.execute("COMMIT")
            self.opened = None

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self._commit()
        elif self.opened is not None:  # the sessions since the last commit are caught up next time
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self.opened = None


class RecallIndex:
    """The recall index of the sessions in ``store`` (sidecars under ``root``).

    ``engines``: the engines to maintain (beside those the index already maintains); ``facts``:
    extract facts (None keeps the index's setting, default off); ``path``: the index file
    (default ``<root>/recall-index.sqlite``); ``change_token``: see :data:`ChangeToken`;
    ``commit_seconds``: how long a sweep's transaction stays open before it commits (between two
    sessions; 0 commits after every session).
    """

    def __init__(self, store: SessionStore, root: str | os.PathLike[str], *, engines: Sequence[str] = (DEFAULT_ENGINE,),
                 facts: bool | None = None, path: str | os.PathLike[str] | None = None,
                 change_token: ChangeToken = no_token, commit_seconds: float = COMMIT_SECONDS) -> None:
        self.store = store
        self.commit_seconds = commit_seconds
        self.root = str(root)
        self.path = Path(path) if path is not None else Path(root) / INDEX_NAME
        self.change_token = change_token
        self._components: dict[str, Engine] = {}
        self._composites: dict[str, Engine] = {}
        self.db = connect(self.path)
        try:
            self._configure(engines, facts)
        except BaseException:
            self.db.close()
            raise

    # -- configuration -----------------------------------------------------------------------

    def _component(self, name: str) -> Engine:
        engine = self._components.get(name)
        if engine is None:
            raise RecallError(f"{self.path}: the index does not maintain engine {name!r}; "
                              f"run 'aptmem index --engine {name}' (maintained: {', '.join(self._components)})")
        return engine

    def _configure(self, engines: Sequence[str], facts: bool | None) -> None:
        stored = read_setting(self.db, "engines")
        stored_names = [n for n in (stored or "").split(",") if n]
        wanted: dict[str, None] = dict.fromkeys(stored_names)
        for name in engines:
            wanted.update(dict.fromkeys(get_engine(name).components))
        if not wanted:
            wanted[DEFAULT_ENGINE] = None
        for name in wanted:
            engine = get_engine(name)
            engine.prepare(self.db)
            self._components[name] = engine
        stored_facts = read_setting(self.db, "facts")
        self.facts = (stored_facts == "1") if facts is None else facts
        analysis = read_setting(self.db, "analysis")
        changed = stored is not None and (list(wanted) != stored_names or (stored_facts == "1") != self.facts
                                          or analysis != ANALYSIS_VERSION)
        write_setting(self.db, "engines", ",".join(wanted))
        write_setting(self.db, "analysis", ANALYSIS_VERSION)
        write_setting(self.db, "facts", "1" if self.facts else "0")
        if changed:
            self.rebuild()

    @property
    def engines(self) -> list[str]:
        """The engines the index maintains."""
        return list(self._components)

    # -- catching up -------------------------------------------------------------------------

    def _meta_token(self, session_id: str) -> str | None:
        return file_token(WorkingMemory(self.root, session_id).path) or "none"

    def catch_up(self, session_id: str) -> SessionUpdate:
        """Bring one session up to date now (reading its log), in one transaction."""
        with _Transaction(self.db) as transaction:
            return transaction.session(lambda: self._catch_up_here(session_id))

    def _catch_up_here(self, session_id: str) -> SessionUpdate:
        """Catch one session up inside the open transaction."""
        log_token, meta_token = self.change_token(session_id), self._meta_token(session_id)
        return catch_up_session(self.db, self.store, self.root, session_id, list(self._components.values()),
                                facts=self.facts, log_token=log_token, meta_token=meta_token)

    def _sweep(self, check_tokens: bool) -> IndexReport:
        report = IndexReport()
        live = self.store.sessions()
        report.sessions = len(live)
        known = {row[0]: (row[1], row[2]) for row in self.db.execute("SELECT session_id, log_token, meta_token FROM sessions")}
        with _Transaction(self.db, self.commit_seconds) as transaction:
            for session_id in live:
                if check_tokens and session_id in known:
                    log_token = self.change_token(session_id)
                    if log_token is not None and known[session_id] == (log_token, self._meta_token(session_id)):
                        continue
                try:
                    update = transaction.session(lambda: self._catch_up_here(session_id))
                except AptmemError as exc:  # e.g. a log its recovery mode refuses: keep its old records
                    report.errors.append(f"{session_id}: {exc}")
                    continue
                if update.new_entries or update.added or update.removed or update.notes:
                    report.updated.append(update)
            gone = sorted(set(known) - set(live))
            for session_id in gone:
                transaction.session(lambda: drop_session(self.db, list(self._components.values()), session_id))
            report.dropped = gone
        return report

    def refresh(self) -> IndexReport:
        """Catch up every session whose log or sidecar changed since it was indexed."""
        return self._sweep(check_tokens=True)

    def verify(self) -> IndexReport:
        """Catch up every session, reading each log whatever its change token says."""
        return self._sweep(check_tokens=False)

    def rebuild(self) -> IndexReport:
        """Drop every record and index every session afresh."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            ids = [r[0] for r in self.db.execute("SELECT doc_id FROM docs")]
            for engine in self._components.values():
                engine.remove(self.db, ids)
            self.db.execute("DELETE FROM docs")
            self.db.execute("DELETE FROM sessions")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return self._sweep(check_tokens=False)

    # -- searching ---------------------------------------------------------------------------

    def search(self, question: str, *, k: int = 5, level: str = "all", l3: str = "chunks",
               engine: str | None = None) -> list[Hit]:
        """The ``k`` best records for ``question``, at most one per entry, best first."""
        if k <= 0:
            return []
        name = engine or (DEFAULT_ENGINE if DEFAULT_ENGINE in self._components else next(iter(self._components)))
        searcher = self._searcher(name)
        where = level_filter(level, l3)
        ranked = searcher.search(self.db, question, k * 4, where)
        if not ranked:
            return []
        rows = {r[0]: r for r in self.db.execute(
            f"SELECT doc_id, session_id, level, kind, entry_id, ts, text FROM docs WHERE doc_id IN ({','.join('?' * len(ranked))})",
            [i for i, _ in ranked])}
        hits: list[Hit] = []
        seen: set[tuple[str, str]] = set()
        for doc_id, score in ranked:
            row = rows.get(doc_id)
            if row is None or (row[1], row[4]) in seen:
                continue
            seen.add((row[1], row[4]))
            hits.append(Hit(doc_id=doc_id, session_id=row[1], level=row[2], kind=row[3], entry_id=row[4], ts=row[5],
                            text=row[6], score=score))
            if len(hits) == k:
                break
        return hits

    def _searcher(self, name: str) -> Engine:
        """The engine of ``name``: a maintained one, or a composite built (once) from maintained ones."""
        if name in self._components:
            return self._components[name]
        if name not in self._composites:
            self._composites[name] = get_engine(name, self._component)
        return self._composites[name]

    def stats(self) -> IndexStats:
        """Count sessions and records, measure the file."""
        records = {f"{lv}/{kd}": n for lv, kd, n in self.db.execute("SELECT level, kind, COUNT(*) FROM docs GROUP BY level, kind")}
        sessions = int(self.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
        size = sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return IndexStats(path=str(self.path), sessions=sessions, records=records, bytes=size, engines=self.engines,
                          facts=self.facts)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def __enter__(self) -> "RecallIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
