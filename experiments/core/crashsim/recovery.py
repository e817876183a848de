"""Recovery after a crash, each case in a process of its own, and the helpers to fork one.

:func:`recover_case` is what an agent does when it starts again after a crash: open the store,
``recover()`` the session in a recovery mode, then load it (``iter_entries`` and
``read_live``). It runs in a process forked from the crash server, which never opened a store:
no descriptor, cache, lock or connection of the crashed writer exists in it, so what it finds
is what the files say. ``recovery_ns`` (``perf_counter_ns``) covers opening the store (SQLite
replays its WAL or rolls back its journal there) and ``recover()``.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable
from typing import Any

import msgspec

from aptmem.store import select_live
from experiments.measurements.crash.writer import build_store, digest
from experiments.core.children import fork_running

__all__ = ["recover_case", "in_fork", "ForkFailed"]


class ForkFailed(RuntimeError):
    """A forked helper exited with an error, died, or overran its time."""


def recover_case(job: dict[str, Any], root: str, mode: str) -> dict[str, Any]:
    """Recover and load the session under ``root`` in ``mode``; report what a reader gets.

    ``recovered`` holds the digest of every entry read, oldest first (None when not loadable),
    ``ids`` their entry ids; ``live_ok`` says whether ``read_live`` agrees with the live context
    selected from them; ``good_lines_discarded`` is the recovery report's count.
    """
    sid = job["session_id"]
    kwargs = job["store"]["kwargs"]
    # A store that offers several modes reads in the mode it recovers in (JSONL's ``recovery``).
    overrides = {"recovery": mode} if "recovery" in kwargs else {}
    result: dict[str, Any] = {"mode": mode, "loadable": False, "recovered": None, "ids": None, "bytes_discarded": 0,
                              "good_lines_discarded": 0, "recovery_ns": 0, "live_ok": None, "error": None, "actions": []}
    store = None
    start = time.perf_counter_ns()
    try:
        store = build_store(job["store"], root, **overrides)
        report = store.recover(sid, mode)
        result["recovery_ns"] = time.perf_counter_ns() - start
        result.update(loadable=report.loadable, bytes_discarded=report.discarded_bytes, error=report.error,
                      good_lines_discarded=report.good_lines_discarded, actions=list(report.actions))
        if report.loadable:
            entries = list(store.iter_entries(sid))
            live = store.read_live(sid)
            result["recovered"] = [digest(e) for e in entries]
            result["ids"] = [e.id for e in entries]
            result["live_ok"] = [digest(e) for e in live] == [digest(e) for e in select_live(entries)]
    except Exception as exc:  # whatever stops a reader: the session is not loadable (the type is kept)
        result["recovery_ns"] = result["recovery_ns"] or time.perf_counter_ns() - start
        result.update(loadable=False, recovered=None, ids=None, error=f"{type(exc).__name__}: {exc}")
    finally:
        if store is not None:
            try:
                store.close()
            except Exception:
                pass
    return result


def _read_all(fd: int, deadline: float) -> bytes:
    """Read ``fd`` to end-of-file, raising ``TimeoutError`` past ``deadline`` (monotonic)."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def in_fork(fn: Callable[[], Any], timeout: float) -> Any:
    """Run ``fn()`` in a forked process; return its result (msgspec-JSON-encodable).

    The child writes the encoded result to a pipe and leaves with ``os._exit`` (no atexit
    handlers, no flushing of buffers it inherited). Raises :class:`ForkFailed` if the child
    fails, is killed, or takes longer than ``timeout`` seconds (it is then SIGKILLed).
    """
    read_fd, write_fd = os.pipe()

    def child() -> None:
        os.close(read_fd)
        view = memoryview(msgspec.json.encode(fn()))
        while view:
            view = view[os.write(write_fd, view):]

    pid = fork_running(child)
    os.close(write_fd)
    try:
        data = _read_all(read_fd, time.monotonic() + timeout)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise ForkFailed(f"timed out after {timeout} s") from None
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise ForkFailed(f"the forked process ended with status {status:#x}")
    return msgspec.json.decode(data)
