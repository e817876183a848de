"""Hostile I/O scenarios that change the whole process: ``python -m experiments.hostile_child NAME ROOT``.

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

import msgspec

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Assistant, User
from aptmem.errors import AptmemError
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory

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


def _temp_files(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


def _log_ids(root: Path) -> list[str] | None:
    """The ids a strict reader loads (None if it refuses the log)."""
    try:
        with JsonlStore(root, recovery="strict") as store:
            return [e.id for e in store.iter_entries(SID)]
    except AptmemError:
        return None


def _result(error: BaseException | None, intact: bool, note: str = "") -> dict[str, Any]:
    text = None if error is None else (str(error).splitlines() or [type(error).__name__])[0]
    if error is not None and not isinstance(error, AptmemError):
        note = f"{note}; raised {type(error).__name__}, not an aptmem error".strip("; ")
    return {"outcome": "refused" if error is not None else "accepted", "error": text, "intact": intact, "note": note}


def _session(root: Path, persist: str) -> tuple[JsonlStore, Session]:
    store = JsonlStore(root, sync="always")
    policy = CompactionPolicy(window=100_000, keep_turns=2, persist=persist)  # type: ignore[arg-type]
    return store, Session(store, SID, policy=policy, estimator=get_estimator("rough"))


def append_disk_full(root: Path) -> dict[str, Any]:
    """A line that does not fit below the file-size limit: refused, the partial line removed."""
    store = JsonlStore(root, sync="always")
    store.append_many(SID, _entries(5))
    _limit_file_size(store.path(SID).stat().st_size + 100)
    error = None
    try:
        store.append(SID, User(content="x" * 1000, ts=9, id="big"))
    except BaseException as exc:  # noqa: BLE001 - the error is the finding
        error = exc
    store.append(SID, User(content="fits", ts=10, id="after"))  # the store goes on after the refusal
    store.close()
    _limit_file_size(None)
    ids = _log_ids(root)
    return _result(error, ids == [f"e{i}" for i in range(5)] + ["after"], f"loaded afterwards: {ids and len(ids)} entries")


def _compact_disk_full(root: Path, persist: str, room: int) -> dict[str, Any]:
    store, session = _session(root, persist)
    for entry in _entries(40):
        session.append(entry)
    before = store.path(SID).read_bytes()
    _limit_file_size(len(before) + room if persist == "append" else room)
    error = None
    try:
        session.compact()
    except BaseException as exc:  # noqa: BLE001
        error = exc
    _limit_file_size(None)
    unchanged = store.path(SID).read_bytes() == before
    again = session.compact()  # with room again, the same session object compacts
    store.close()
    ids = _log_ids(root)
    intact = unchanged and not _temp_files(root) and ids is not None
    return _result(error, intact, f"file unchanged: {unchanged}; temp files left: {len(_temp_files(root))}; "
                                  f"compacted once space was back: {again.entry.summarized} entries summarized")


def compact_rewrite_disk_full(root: Path) -> dict[str, Any]:
    """A rewrite compaction whose temp file hits the limit: refused, the old file untouched."""
    return _compact_disk_full(root, "rewrite", 1000)


def compact_append_disk_full(root: Path) -> dict[str, Any]:
    """An appended compaction marker cut by the limit: refused, the partial marker removed."""
    return _compact_disk_full(root, "append", 50)


def sidecar_disk_full(root: Path) -> dict[str, Any]:
    """A sidecar rewrite whose temp file hits the limit: refused, the sidecar untouched."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    before = memory.path.read_bytes()
    _limit_file_size(50)
    error = None
    try:
        memory.set("plan", "x" * 500)
    except BaseException as exc:  # noqa: BLE001
        error = exc
    _limit_file_size(None)
    intact = memory.path.read_bytes() == before and memory.get("kept") == 1 and not _temp_files(root)
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def append_fsync_eio(root: Path) -> dict[str, Any]:
    """fdatasync fails: that append is refused, later ones too until the store is reopened."""
    store = JsonlStore(root, sync="always")
    store.append_many(SID, _entries(2))
    real, calls = os.fdatasync, []

    def failing(fd: int) -> None:
        calls.append(fd)
        _eio()

    os.fdatasync = failing  # type: ignore[assignment]
    error = later = None
    try:
        store.append(SID, User(content="unlucky", ts=2, id="e2"))
    except BaseException as exc:  # noqa: BLE001
        error = exc
    os.fdatasync = real  # the disk "recovers": a retry on the same descriptor must still be refused
    try:
        store.append(SID, User(content="later", ts=3, id="e3"))
    except AptmemError as exc:
        later = exc
    store.close()
    with JsonlStore(root, sync="always") as reopened:
        reopened.append(SID, User(content="reopened", ts=4, id="e4"))
    ids = _log_ids(root) or []
    intact = later is not None and {"e0", "e1", "e4"} <= set(ids) and "e3" not in ids and len(calls) == 1
    return _result(error, intact, f"later append: {'refused' if later else 'ACCEPTED'}; syncs tried on the failed "
                                  f"descriptor: {len(calls)}; the unacknowledged entry is "
                                  f"{'present' if 'e2' in ids else 'absent'} after reopening")


def batch_close_fsync_eio(root: Path) -> dict[str, Any]:
    """sync=batch: the closing fdatasync fails, and close says so instead of returning quietly."""
    store = JsonlStore(root, sync="batch", batch_size=1000, batch_ms=1e9)
    store.append_many(SID, _entries(5))
    real = os.fdatasync
    os.fdatasync = _eio  # type: ignore[assignment]
    error = None
    try:
        store.close()
    except BaseException as exc:  # noqa: BLE001
        error = exc
    finally:
        os.fdatasync = real
    ids = _log_ids(root)
    return _result(error, ids == [f"e{i}" for i in range(5)], "the lines stay in the file; their durability is unknown")


def compact_fsync_eio(root: Path) -> dict[str, Any]:
    """A rewrite compaction whose fsync fails: refused, the old file untouched, no temp file left."""
    store, session = _session(root, "rewrite")
    for entry in _entries(40):
        session.append(entry)
    before = store.path(SID).read_bytes()
    real = os.fsync
    os.fsync = _eio  # type: ignore[assignment]
    error = None
    try:
        session.compact()
    except BaseException as exc:  # noqa: BLE001
        error = exc
    finally:
        os.fsync = real
    store.close()
    intact = store.path(SID).read_bytes() == before and not _temp_files(root) and _log_ids(root) is not None
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def sidecar_fsync_eio(root: Path) -> dict[str, Any]:
    """A sidecar write whose fsync fails: refused, the sidecar untouched, no temp file left."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    before = memory.path.read_bytes()
    real = os.fsync
    os.fsync = _eio  # type: ignore[assignment]
    error = None
    try:
        memory.set("plan", "step 1")
    except BaseException as exc:  # noqa: BLE001
        error = exc
    finally:
        os.fsync = real
    intact = memory.path.read_bytes() == before and not _temp_files(root)
    return _result(error, intact, f"temp files left: {len(_temp_files(root))}")


def sidecar_big_int_raised_limit(root: Path) -> dict[str, Any]:
    """A 5,000-digit integer after sys.set_int_max_str_digits(0): refused, not written unreadable."""
    memory = WorkingMemory(root, SID)
    memory.create(title="t", working={"kept": 1})
    sys.set_int_max_str_digits(0)
    error = None
    try:
        memory.set("n", 10**5000)
    except BaseException as exc:  # noqa: BLE001
        error = exc
    sys.set_int_max_str_digits(4300)
    try:
        intact = memory.get("kept") == 1
    except AptmemError:
        intact = False
    return _result(error, intact, "the sidecar stays readable")


def entry_big_int_raised_limit(root: Path) -> dict[str, Any]:
    """A 5,000-digit integer in an entry's args after sys.set_int_max_str_digits(0)."""
    from aptmem.entries import ToolCall

    with JsonlStore(root) as store:
        store.append_many(SID, _entries(2))
        sys.set_int_max_str_digits(0)
        error = None
        try:
            store.append(SID, ToolCall(name="calc", args={"n": 10**5000}, ts=2, id="big"))
        except BaseException as exc:  # noqa: BLE001
            error = exc
        sys.set_int_max_str_digits(4300)
    ids = _log_ids(root)
    note = "the line was written and no reader can decode it: the entry is lost on read" if ids is None else ""
    return _result(error, ids is not None, note)


SCENARIOS: dict[str, Callable[[Path], dict[str, Any]]] = {f.__name__: f for f in (
    append_disk_full, compact_rewrite_disk_full, compact_append_disk_full, sidecar_disk_full,
    append_fsync_eio, batch_close_fsync_eio, compact_fsync_eio, sidecar_fsync_eio,
    sidecar_big_int_raised_limit, entry_big_int_raised_limit,
)}


def main(argv: list[str] | None = None) -> int:
    """Run one scenario; print its result as one JSON line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] not in SCENARIOS:
        print(f"usage: python -m experiments.hostile_child {{{','.join(SCENARIOS)}}} ROOT", file=sys.stderr)
        return 2
    root = Path(args[1])
    root.mkdir(parents=True, exist_ok=True)
    sys.stdout.write(msgspec.json.encode(SCENARIOS[args[0]](root)).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
