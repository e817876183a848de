"""The operations the crash-state explorer records, run in a process of their own.

:func:`run_operation` builds a session of ``entries`` entries of the workload with the strategy's
store (then closes the store: the state before the operation is taken as durable), then, with a
recorder running, opens a fresh store and does one operation:

* ``append``: ``appends`` more entries, one ``store.append`` each (each acknowledged when it
  returns), then ``store.close()`` (one more acknowledgement: a ``batch`` store syncs there);
* ``compaction_append`` / ``compaction_rewrite``: a :class:`aptmem.session.Session` over the
  store compacts now (``Session.compact``, the ``append`` or ``rewrite`` way to persist), then the
  store is closed (acknowledgements: the compaction returned; the store closed);
* ``compaction_amid_appends``: a compaction interleaved with a concurrent writer. A writer's store
  is opened first and appends the first half of ``appends`` entries; a second store (the
  compactor's) rewrites the session (``Session.compact``, the ``rewrite`` way: the one that
  replaces the file under the writer's open descriptor); the writer appends the rest; both
  close (acknowledgements: each append, the compaction, the closes). Only for strategies safe for
  several processes (two stores on one session stand for two processes).

Two recorders: :class:`ModelRecorder` (the writer's Python-level calls, through
:class:`experiments.core.crashsim.fs_model.FsModel`, in a forked child) and :class:`MarkRecorder` (for a
process run under strace: each event is an ``open`` of a path that does not exist, which the
trace shows and :mod:`experiments.measurements.crash_explore.strace` reads back as a mark).

``python -m experiments.measurements.crash_explore.child JOB.json OUT.json`` runs one job with marks (under strace).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Protocol

import msgspec

from aptmem.store import SessionStore
from experiments.core.children import in_fork
from experiments.core.crashsim.fs_model import FsModel
from experiments.core.crashsim.oplog import OpLog
from experiments.core.crashsim.recovery import digest
from experiments.core.strategy import StoreSpec, build_store
from experiments.measurements.crash_explore.protocol import OperationJob

__all__ = ["APPENDING", "CONCURRENT", "OPERATIONS", "Recording", "Recorder", "ModelRecorder", "MarkRecorder", "run_operation", "read_files",
           "record_in_fork"]

#: The operations recorded, in report order.
OPERATIONS = ("append", "compaction_append", "compaction_rewrite", "compaction_amid_appends")
#: The operations that append entries of the workload (``appends`` of them) besides the session before.
APPENDING = ("append", "compaction_amid_appends")
#: The operations that need two stores on one session at once (strategies safe for several processes only).
CONCURRENT = ("compaction_amid_appends",)


class Recording(msgspec.Struct, kw_only=True):
    """What one recorded operation left: the histories, the files, and (once built) its log.

    Histories are ``[digest, entry id]`` pairs, oldest first: ``old`` before the operation,
    ``new`` after it, ``intended`` the entries the append operation appended.
    """

    durability: str
    old: list[tuple[str, str | None]]
    new: list[tuple[str, str | None]]
    intended: list[tuple[str, str | None]]
    final: dict[str, bytes]
    initial: dict[str, bytes] = {}
    log: OpLog | None = None


class Recorder(Protocol):
    """What the operation tells whoever records it."""

    def begin(self) -> None:
        """The operation starts now: the files under the root are its initial state."""

    def handed(self, written: int) -> None:
        """The writer is handing entry number ``written`` (1-based, whole session) to the store."""

    def ack(self) -> None:
        """Something was acknowledged (an append or a compaction returned, the store closed)."""

    def end(self) -> None:
        """The operation is over."""


def read_files(root: str | os.PathLike[str], ignore: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every regular file directly under ``root`` (names ending in ``ignore`` left out), by name."""
    out = {}
    for name in sorted(os.listdir(root)):
        path = Path(root, name)
        if not name.endswith(ignore) and path.is_file() and not path.is_symlink():
            out[name] = path.read_bytes()
    return out


class ModelRecorder:
    """Records through an :class:`FsModel` installed for the operation only (call in a forked child)."""

    def __init__(self, root: str, ignore: tuple[str, ...]) -> None:
        self.model = FsModel(root)
        self.ignore = ignore

    def begin(self) -> None:
        self.model.install()
        self.model.start_log(self.ignore)

    def handed(self, written: int) -> None:
        self.model.written = written

    def ack(self) -> None:
        self.model.ack()

    def end(self) -> None:
        self.model.uninstall()


class MarkRecorder:
    """Marks events for a tracer that sees only system calls: each is a failed ``open`` of
    ``marks/<event>`` (the folder does not exist), and the initial and final files are kept."""

    def __init__(self, root: str, marks: str, ignore: tuple[str, ...]) -> None:
        self.root, self.marks, self.ignore = root, marks, ignore
        self.initial: dict[str, bytes] = {}

    def _mark(self, event: str) -> None:
        try:
            os.close(os.open(os.path.join(self.marks, event), os.O_RDONLY))
        except FileNotFoundError:
            pass  # the point: the trace shows the attempt

    def begin(self) -> None:
        self.initial = read_files(self.root, self.ignore)  # read before the mark: not part of the operation
        self._mark("begin")

    def handed(self, written: int) -> None:
        self._mark(f"handed-{written}")

    def ack(self) -> None:
        self._mark("ack")

    def end(self) -> None:
        self._mark("end")


def _history(spec: StoreSpec, root: str, sid: str) -> list[tuple[str, str | None]]:
    """The session as a fresh store reads it: (digest, id) of every entry, oldest first."""
    store = build_store(spec, root)
    try:
        return [(digest(e), e.id) for e in store.iter_entries(sid)]
    finally:
        store.close()


def _compact(job: OperationJob, store: SessionStore, recorder: Recorder, way: str, handed: int) -> None:
    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.session import Session
    from aptmem.tokens import get_estimator

    unit = job.unit
    policy = CompactionPolicy(window=unit.window, keep_turns=unit.keep_turns, persist=way)  # type: ignore[arg-type]
    session = Session(store, unit.session_id, policy=policy, estimator=get_estimator(unit.estimator))
    recorder.handed(handed)
    session.compact()
    recorder.ack()


def _append(store: SessionStore, sid: str, entries: list, first: int, recorder: Recorder) -> None:
    """Append ``entries`` one by one (numbered from ``first``), each acknowledged when it returns."""
    for number, entry in enumerate(entries, first):
        recorder.handed(number)
        store.append(sid, entry)
        recorder.ack()


def run_operation(job: OperationJob, recorder: Recorder) -> Recording:
    """Build the session, record the operation (see the module docstring); return the histories
    before (``old``) and after (``new``), the entries meant (``intended``) and the final files."""
    unit = job.unit
    spec, root, sid = unit.strategy.store, job.root, unit.session_id
    total = unit.entries + (unit.appends if unit.operation in APPENDING else 0)
    entries = unit.workload.entries()
    if len(entries) < total:
        raise ValueError(f"the workload has {len(entries)} entries; the operation needs {total}")
    prefix, extra = entries[: unit.entries], entries[unit.entries : total]
    Path(root).mkdir(parents=True, exist_ok=True, mode=0o700)
    store = build_store(spec, root)
    durability = str(store.capabilities.durability)
    store.create(sid)
    for entry in prefix:
        store.append(sid, entry)
    store.close()
    old = _history(spec, root, sid)
    recorder.begin()
    store = build_store(spec, root)
    if unit.operation == "append":
        _append(store, sid, extra, len(prefix) + 1, recorder)
    elif unit.operation == "compaction_amid_appends":
        half = len(extra) // 2
        _append(store, sid, extra[:half], len(prefix) + 1, recorder)
        compactor = build_store(spec, root)
        _compact(job, compactor, recorder, "rewrite", len(prefix) + half + 1)
        _append(store, sid, extra[half:], len(prefix) + half + 1, recorder)
        compactor.close()
    else:
        _compact(job, store, recorder, unit.operation.removeprefix("compaction_"), unit.entries + 1)
    store.close()
    recorder.ack()
    recorder.end()
    final = read_files(root, tuple(unit.strategy.ignore_files))  # before anything else opens the session
    return Recording(durability=durability, old=old, new=_history(spec, root, sid),  # type: ignore[arg-type]
                     intended=[(digest(e), e.id) for e in extra], final=final)


def record_in_fork(job: OperationJob, timeout: float) -> Recording:
    """Record the operation through :class:`ModelRecorder` in a forked child (the ``os`` module is
    patched there only); return the recording with its log."""

    def child() -> Recording:
        recorder = ModelRecorder(job.root, tuple(job.unit.strategy.ignore_files))
        recording = run_operation(job, recorder)
        recording.log = recorder.model.log
        return recording

    return in_fork(child, timeout, Recording)


def main(argv: list[str]) -> int:
    """Run the job in ``argv[0]`` with a :class:`MarkRecorder`; write the result to ``argv[1]``."""
    job = msgspec.json.decode(Path(argv[0]).read_bytes(), type=OperationJob)
    if job.marks is None:
        raise ValueError(f"{argv[0]}: a traced operation needs its marks folder")
    recorder = MarkRecorder(job.root, job.marks, tuple(job.unit.strategy.ignore_files))
    recording = run_operation(job, recorder)
    recording.initial = recorder.initial
    Path(argv[1]).write_bytes(msgspec.json.encode(recording))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
