"""Hostile I/O scenarios that change the whole process: ``python -m experiments.measurements.hostile.child NAME ROOT``.

A full disk is a file-size limit (``RLIMIT_FSIZE``, soft limit only, so it can be lifted again);
an fsync error is ``os.fdatasync`` / ``os.fsync`` replaced by a function that raises ``EIO``. Both
are process-wide, so each scenario runs in a process of its own. Each builds a session under
ROOT, acknowledges some entries, applies the hazard, tries the operation, lifts the hazard and
checks what a fresh reader finds. It prints one JSON object: ``outcome`` (``refused`` or
``accepted``), ``error`` (the error's text, one line), ``intact`` (everything acknowledged before
is there, the files are loadable, no temp file is left) and ``note``.
"""

from __future__ import annotations

import errno
import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import msgspec

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Assistant, User
from aptmem.errors import AptmemError
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory
from experiments.measurements.hostile.result import CaseResult

__all__ = ["SCENARIOS", "main"]

SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"


def _entries(n: int, start: int = 0) -> list[Any]:
    """``n`` alternating user/assistant entries with ids ``e<i>``."""
    kinds = (User, Assistant)
    return [kinds[i % 2](content=f"entry {i}: " + "words " * 30, ts=i, id=f"e{i}") for i in range(start, start + n)]


def _limit_file_size(size: int | None) -> None:
    """Set (or with None lift) the soft file-size limit of this process."""
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY if size is None else size, hard))


def _eio(*_args: object) -> None:
    raise OSError(errno.EIO, os.strerror(errno.EIO))


def _raised(action: Callable[[], object]) -> BaseException | None:
    """Run ``action``; return what it raised (the finding of the case), or None."""
    try:
        action()
    except BaseException as exc:  # noqa: BLE001 - whatever it raised is what the case reports
        return exc
    return None


def _temp_files(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


def _log_ids(root: Path) -> list[str] | None:
    """The ids a strict reader loads (None if it refuses the log)."""
    try:
        with JsonlStore(root, recovery="strict") as store:
            return [e.id for e in store.iter_entries(SID)]
    except AptmemError:
        return None


def _result(error: BaseException | None, intact: bool, note: str = "") -> CaseResult:
    text = None if error is None else (str(error).splitlines() or [type(error).__name__])[0]
    if error is not None and not isinstance(error, AptmemError):
        note = f"{note}; raised {type(error).__name__}, not an aptmem error".strip("; ")
    return CaseResult(outcome="refused" if error is not None else "accepted", error=text, intact=intact, note=note)


def _session(root: Path, persist: str) -> tuple[JsonlStore, Session]:
    store = JsonlStore(root, sync="always")
    policy = CompactionPolicy(window=100_000, keep_turns=2, persist=persist)  # type: ignore[arg-type]
    return store, Session(store, SID, policy=policy, estimator=get_estimator("rough"))


def append_disk_full(root: Path) -> CaseResult:
    """A line that does not fit below the file-size limit: refused, the partial line removed."""
    store = JsonlStore(root, sync="always")
    store.append_many(SID, _entries(5))
    _limit_file_size(store.path(SID).stat().st_size + 100)
    error = _raised(lambda: store.append(SID, User(content="x" * 1000, ts=9, id="big")))
    store.append(SID, User(content="fits", ts=10, id="after"))  # the store goes on after the refusal
    store.close()
    _limit_file_size(None)
    ids = _log_ids(root)
    return _result(error, ids == [f"e{i}" for i in range(5)] + ["after"], f"loaded afterwards: {ids and len(ids)} entries")


def _compact_disk_full(root: Path, persist: str, room: int) -> CaseResult:
    store, session = _session(root, persist)
    for entry in _entries(40):
        session.append(entry)
    before = store.path(SID).read_bytes()
    _limit_file_size(len(before) + room if persist == "append" else room)
    error = _raised(session.compact)
    _limit_file_size(None)
    unchanged = store.path(SID).read_bytes() == before
    again = session.compact()  # with room again, the same session object compacts
    store.close()
    ids = _log_ids(root)
    intact = unchanged and not _temp_files(root) and ids is not None
    return _result(error, intact, f"file unchanged: {unchanged}; temp files left: {len(_temp_files(root))}; "
                                  f"compacted once space was back: {again.entry.summarized} entries summarized")


def compact_rewrite_disk_full(root: Path) -> CaseResult:
    """A rewrite compaction whose temp file hits the limit: refused, the old file untouched."""
    return _compact_disk_full(root, "rewrite", 1000)


def compact_append_disk_full(root: Path) -> CaseResult:
    """An appended compaction marker cut by the limit: refused, the partial marker removed."""
    return _compact_disk_full(root, "append", 50)


def sidecar_disk_full(root: Path) -> CaseResult:
    """A sidecar rewrite whose temp file hits the limit: refused, the sidecar untouched."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    before = memory.path.read_bytes()
    _limit_file_size(50)
    error = _raised(lambda: memory.set("plan", "x" * 500))
    _limit_file_size(None)
    intact = memory.path.read_bytes() == before and memory.get("kept") == 1 and not _temp_files(root)
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def append_fsync_eio(root: Path) -> CaseResult:
    """fdatasync fails: that append is refused, later ones too until the store is reopened."""
    store = JsonlStore(root, sync="always")
    store.append_many(SID, _entries(2))
    calls: list[int] = []

    def failing(fd: int) -> None:
        calls.append(fd)
        _eio()

    with mock.patch.object(os, "fdatasync", failing):
        error = _raised(lambda: store.append(SID, User(content="unlucky", ts=2, id="e2")))
    # The disk "recovers": a retry on the same descriptor must still be refused.
    later = _raised(lambda: store.append(SID, User(content="later", ts=3, id="e3")))
    store.close()
    with JsonlStore(root, sync="always") as reopened:
        reopened.append(SID, User(content="reopened", ts=4, id="e4"))
    ids = _log_ids(root) or []
    refused_later = isinstance(later, AptmemError)
    intact = refused_later and {"e0", "e1", "e4"} <= set(ids) and "e3" not in ids and len(calls) == 1
    return _result(error, intact, f"later append: {'refused' if refused_later else 'ACCEPTED'}; syncs tried on the failed "
                                  f"descriptor: {len(calls)}; the unacknowledged entry is "
                                  f"{'present' if 'e2' in ids else 'absent'} after reopening")


def batch_close_fsync_eio(root: Path) -> CaseResult:
    """sync=batch: the closing fdatasync fails, and close says so instead of returning quietly."""
    store = JsonlStore(root, sync="batch", batch_size=1000, batch_ms=1e9)
    store.append_many(SID, _entries(5))
    with mock.patch.object(os, "fdatasync", _eio):
        error = _raised(store.close)
    ids = _log_ids(root)
    return _result(error, ids == [f"e{i}" for i in range(5)], "the lines stay in the file; their durability is unknown")


def compact_fsync_eio(root: Path) -> CaseResult:
    """A rewrite compaction whose fsync fails: refused, the old file untouched, no temp file left."""
    store, session = _session(root, "rewrite")
    for entry in _entries(40):
        session.append(entry)
    before = store.path(SID).read_bytes()
    with mock.patch.object(os, "fsync", _eio):
        error = _raised(session.compact)
    store.close()
    intact = store.path(SID).read_bytes() == before and not _temp_files(root) and _log_ids(root) is not None
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def sidecar_fsync_eio(root: Path) -> CaseResult:
    """A sidecar write whose fsync fails: refused, the sidecar untouched, no temp file left."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    before = memory.path.read_bytes()
    with mock.patch.object(os, "fsync", _eio):
        error = _raised(lambda: memory.set("plan", "step 1"))
    intact = memory.path.read_bytes() == before and not _temp_files(root)
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def sidecar_big_int_raised_limit(root: Path) -> CaseResult:
    """A 5,000-digit integer after sys.set_int_max_str_digits(0): refused, not written unreadable."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    sys.set_int_max_str_digits(0)
    error = _raised(lambda: memory.set("n", 10**5000))
    sys.set_int_max_str_digits(4300)
    try:
        intact = memory.get("kept") == 1
    except AptmemError:
        intact = False
    return _result(error, intact, "the sidecar stays readable")


def entry_big_int_raised_limit(root: Path) -> CaseResult:
    """A 5,000-digit integer in an entry's args after sys.set_int_max_str_digits(0)."""
    from aptmem.entries import ToolCall

    with JsonlStore(root) as store:
        store.append_many(SID, _entries(2))
        sys.set_int_max_str_digits(0)
        error = _raised(lambda: store.append(SID, ToolCall(name="calc", args={"n": 10**5000}, ts=2, id="big")))
        sys.set_int_max_str_digits(4300)
    ids = _log_ids(root)
    note = "the line was written and no reader can decode it: the entry is lost on read" if ids is None else ""
    return _result(error, ids is not None, note)


SCENARIOS: dict[str, Callable[[Path], CaseResult]] = {f.__name__: f for f in (
    append_disk_full, compact_rewrite_disk_full, compact_append_disk_full, sidecar_disk_full,
    append_fsync_eio, batch_close_fsync_eio, compact_fsync_eio, sidecar_fsync_eio,
    sidecar_big_int_raised_limit, entry_big_int_raised_limit,
)}


def main(argv: list[str] | None = None) -> int:
    """Run one scenario; print its result as one JSON line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] not in SCENARIOS:
        print(f"usage: python -m experiments.measurements.hostile.child {{{','.join(SCENARIOS)}}} ROOT", file=sys.stderr)
        return 2
    root = Path(args[1])
    root.mkdir(parents=True, exist_ok=True)
    sys.stdout.write(msgspec.json.encode(SCENARIOS[args[0]](root)).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
