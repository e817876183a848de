"""The writer of the crash experiment: a process that appends a workload and is crashed.

Each writer is a process forked from the crash server (:mod:`experiments.measurements.crash.server`), which
has imported everything but never opened a store. It builds the strategy's store under its own
root, creates the session (as ``aptmem new`` does) and appends the workload:

* :func:`session_run`: through :class:`aptmem.session.Session` with a small window, so
  compactions fire (kills during appends and during compactions);
* :func:`trace_run`: plain appends under :class:`~experiments.core.crashsim.fs_model.FsModel`, saving a
  snapshot (current and durable bytes of every file) at one random file-system call of each
  chosen append: the power-loss moments of Python-level strategies;
* :func:`wal_run`: plain appends to SQLite, copying the database and its WAL around each chosen
  commit: the power-loss moments of SQLite in WAL mode.

**The acknowledgement channel.** The session writer reports progress on a pipe to the server, one
fixed-size record per ``os.write`` (26 bytes, far below ``PIPE_BUF``, so each record arrives
whole or not at all): ``I`` + the entry's digest just before ``store.append``, ``A`` right after
it returns (the entry is then acknowledged), ``C``/``c`` around a compaction, ``G`` when the
writer waits at a gate; each with the writer's own ``perf_counter_ns`` (CLOCK_MONOTONIC, the
server's clock too). A record written is in the kernel's pipe buffer, not in the process: a
SIGKILL cannot take it back, and the server reads every record up to the writer's death before
it sees end-of-file. No buffered ``print``: a buffer in the dying process would be lost with it.

**Gates.** A fast writer (a JSONL append without sync takes microseconds) would run far ahead
of any server reacting to its records, so a kill could not be aimed. Before each gated entry
the writer sends ``G`` and blocks reading one byte from the gate pipe; the server releases it
when it is ready to time the kill from that moment. Nothing of the store's work is paused: the
gate sits between two entries, in the writer's own loop.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from aptmem.entries import Entry
from aptmem.store import SessionStore
from experiments.core.crashsim.fs_model import FileImage, FsModel
from experiments.core.crashsim.images import save_images
from experiments.core.crashsim.recovery import digest
from experiments.core.strategy import build_store
from experiments.measurements.crash.power_loss import wal_state
from experiments.measurements.crash.protocol import CrashJob, PowerCut

__all__ = ["RECORD", "READY", "INTENT", "ACK", "COMPACT", "COMPACTED", "GATE", "DONE", "Channel",
           "session_run", "trace_run", "wal_run", "choose_cuts"]

#: bytes of one record on the acknowledgement channel: kind, a zero byte, a 16-byte digest,
#: the writer's perf_counter_ns (8 bytes, big-endian).
RECORD = 26
READY, INTENT, ACK, COMPACT, COMPACTED, GATE, DONE = b"R", b"I", b"A", b"C", b"c", b"G", b"D"


class Channel:
    """The writer's end of the acknowledgement pipe and of the gate (see the module docstring).

    ``gates`` holds the 1-based entries to wait before; ``None`` gates every entry (the
    server's calibration run steps the writer entry by entry).
    """

    def __init__(self, fd: int, gate_fd: int, gates: set[int] | None) -> None:
        self.fd = fd
        self.gate_fd = gate_fd
        self.gates = gates

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        """Write one record with a single ``os.write``."""
        os.write(self.fd, kind + b"\0" + payload.ljust(16, b"\0") + time.perf_counter_ns().to_bytes(8, "big"))

    def gate(self, number: int) -> None:
        """Before entry ``number``: if it is gated, say so and wait for the server's byte."""
        if self.gates is None or number in self.gates:
            self.send(GATE)
            os.read(self.gate_fd, 1)


def _observe(store: SessionStore, channel: Channel, known: dict[int, bytes]) -> None:
    """Make ``store.append`` announce each entry before and acknowledge it after (any caller).

    ``known`` holds the workload's digests by ``id(entry)``, computed before the run, so the
    announcement comes right before the store's work; a compaction entry is digested here.
    """
    real = store.append

    def append(session_id: str, entry: Entry) -> None:
        channel.send(INTENT, known.get(id(entry)) or bytes.fromhex(digest(entry)))
        real(session_id, entry)
        channel.send(ACK)

    store.append = append  # type: ignore[method-assign]


def _known(entries: Sequence[Entry]) -> dict[int, bytes]:
    return {id(entry): bytes.fromhex(digest(entry)) for entry in entries}


def _open(job: CrashJob, root: str | os.PathLike[str]) -> SessionStore:
    store = build_store(job.strategy, root)
    if job.create_first:
        store.create(job.session_id)
    return store


def _finish(channel: Channel, pause: bool) -> None:
    channel.send(DONE)
    while pause:  # wait for the server's SIGKILL: a crash after the last append, not an exit
        time.sleep(3600)


def session_run(job: CrashJob, entries: Sequence[Entry], root: str, channel: Channel, *, pause: bool) -> None:
    """Append every entry through a :class:`~aptmem.session.Session` that compacts past its trigger."""
    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.session import Session
    from aptmem.tokens.tiers import build_estimator

    class ObservedSession(Session):
        """Marks the start and the end of every compaction on the channel."""

        def compact(self):  # type: ignore[no-untyped-def]
            channel.send(COMPACT)
            result = super().compact()
            channel.send(COMPACTED)
            return result

    store = _open(job, root)
    _observe(store, channel, _known(entries))
    policy = CompactionPolicy(**msgspec.structs.asdict(job.policy))
    session = ObservedSession(store, job.session_id, policy=policy, estimator=build_estimator(job.estimator))
    channel.send(READY)
    for number, entry in enumerate(entries, 1):
        channel.gate(number)
        session.append(entry)
    _finish(channel, pause)


def _manifest(out: Path, cuts: list[PowerCut]) -> None:
    (out / "manifest.json").write_bytes(msgspec.json.encode(cuts))


def trace_run(job: CrashJob, entries: Sequence[Entry], root: str, cuts: dict[int, float], out: Path) -> None:
    """Append every entry under the file-system model; snapshot one call of each chosen append.

    ``cuts`` maps an append (1-based) to a fraction: the snapshot is taken after the call at
    that fraction of the append's state-changing calls. Every call of a chosen append is
    snapshotted in memory and one kept, since the number of calls is known only at the end.
    """
    model = FsModel(root)
    pending: list[tuple[str, dict[str, FileImage]]] = []
    collecting = [False]
    model.on_change = lambda call: pending.append((call, model.snapshot())) if collecting[0] else None
    Path(root).mkdir(parents=True, exist_ok=True, mode=0o700)
    model.install()
    try:
        store = _open(job, root)
        target = ""
        saved: list[PowerCut] = []
        for number, entry in enumerate(entries, 1):
            model.written = number
            collecting[0] = number in cuts
            store.append(job.session_id, entry)
            collecting[0] = False
            # The session's file, by the store's own account (after an append it always exists).
            target = target or Path(store.stats(job.session_id).path).name
            if number in cuts and pending:
                pick = min(len(pending) - 1, int(cuts[number] * len(pending)))
                call, files = pending[pick]
                save_images(out / f"cut-{len(saved)}", files)
                log = files.get(target)
                saved.append(PowerCut(append=number, acked=number - 1, written=number, call=call, call_index=pick,
                                      calls=len(pending), target=target, names=sorted(files),
                                      synced_entries=log.synced_entries if log else 0))
            pending.clear()
    finally:
        model.uninstall()
    _manifest(out, saved)


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def wal_run(job: CrashJob, entries: Sequence[Entry], root: str, cuts: list[int], region: str, out: Path) -> None:
    """Append every entry to SQLite in WAL mode; around each chosen commit, save its files.

    ``region`` ``last_commit`` (synchronous=FULL): the power fails while commit k is being
    written, before its sync: its frames are the unsynced region, entries 1..k-1 acknowledged. A
    commit that also checkpointed moved the database file past that moment, so the cut moves to
    the next commit. ``since_checkpoint`` (NORMAL, OFF): the power fails after commit k returned:
    every frame of the current WAL generation is unsynced (the header, synced when the WAL was
    reused, stays), entries 1..k acknowledged.
    """
    store = _open(job, root)
    stats = store.stats(job.session_id)
    db = Path(stats.path)
    wal = Path(f"{db}-wal")
    todo = set(cuts)
    saved: list[PowerCut] = []
    for number, entry in enumerate(entries, 1):
        if number not in todo:
            store.append(job.session_id, entry)
            continue
        before_db, before = _read(db), wal_state(_read(wal))
        store.append(job.session_id, entry)
        db_bytes, wal_bytes = _read(db), _read(wal)
        after = wal_state(wal_bytes)
        todo.discard(number)
        note = ""
        if region == "last_commit":
            if db_bytes != before_db:
                if number < len(entries):
                    todo.add(number + 1)  # this commit checkpointed: take the next one instead
                continue
            start, acked = (before.end if after.salts == before.salts else 0), number - 1
            note = "WAL restarted by this commit" if after.salts != before.salts else ""
        else:
            start, acked = min(32, after.end), number
        current = (wal_bytes or b"")[: after.end]
        files = {db.name: FileImage(db_bytes, db_bytes), wal.name: FileImage(current, current[:start])}
        save_images(out / f"cut-{len(saved)}", files)
        saved.append(PowerCut(append=number, acked=acked, written=number, call="commit", call_index=0, calls=1,
                              target=wal.name, names=sorted(files), synced_entries=None, region=[start, after.end],
                              note=note))
    _manifest(out, saved)


def choose_cuts(rng: random.Random, count: int, entries: int) -> dict[int, float]:
    """``count`` distinct appends (1-based) and a fraction for each: the power-loss moments."""
    chosen = sorted(rng.sample(range(1, entries + 1), min(count, entries)))
    return {number: rng.random() for number in chosen}
