"""The child side of ``test_compaction_crash.py``: open a session, compact it, die on cue.

Run as ``python tests/compaction_crash_child.py COMMAND`` with a JSON job on stdin::

    {"root": ..., "session_id": ..., "policy": {...CompactionPolicy fields...}, "sync": "always",
     "runs": [{"root": ..., "call": 3, "how": "torn_half"}, ...]}      # runs: ``kill`` only

Commands:

* ``count``: compact the session under ``root`` to the end, tracing every file-system call that
  can change what is on disk (:data:`TRACED`); print ``{"calls": [[name, bytes], ...],
  "compact_ns": ..., "first_call_ns": ...}`` (the compaction's duration, and when its first write
  came). The session left behind is the reference "new" state.
* ``kill``: import once, then for each run fork a process that opens the session under the
  run's root, compacts it, and SIGKILLs itself at the run's point: at traced call number
  ``call`` (0-based, counted over all traced functions), ``before`` it, ``after`` it, or for an
  ``os.write`` after writing only a prefix (``torn_half``: half the bytes, ``torn_last``: all
  but the last byte). Print each fork's fate, ``{"fates": ["SIGKILL" | "exit 0" | ...]}``.
  Forking from one warm process keeps a hundred kills to a few seconds; each fork is still a
  real process whose death the kernel, not Python, carries out.
* ``ready``: open the session, print ``ready``, compact, print ``done``: the test kills this
  process itself after a random delay.

The kill points need no hooks in the library: the traced functions are replaced on the ``os``
module, which the library calls through (``aptmem.fsutil.write_all`` and the JSONL store's
append both call ``os.write``), only for the compaction itself.

Compaction entries carry a fresh uuid and the wall-clock time; :func:`pin_compactions` makes
both deterministic so an interrupted run and the reference run write the same bytes.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from aptmem.compaction import compactor
from aptmem.compaction.policy import CompactionPolicy
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from experiments.core.children import fork_running

__all__ = ["FIXED_TS", "HOWS", "TRACED", "CountingUuid", "open_session", "pin_compactions"]

#: The functions through which a compaction can change the files: each call is a kill point.
TRACED = ("write", "fsync", "fdatasync", "ftruncate", "replace", "rename", "unlink")
#: Where, around one traced call, a run dies (the torn ones only for ``os.write``).
HOWS = ("before", "torn_half", "torn_last", "after")
#: The timestamp every compaction entry gets in these tests.
FIXED_TS = 1_717_200_000_000
#: The first uuid the child's compaction entry gets (the session's build uses smaller ones).
CHILD_UUID_START = 1 << 64


class CountingUuid:
    """Stands in for the ``uuid`` module in the compactor: ``uuid4()`` counts up from ``start``."""

    def __init__(self, start: int) -> None:
        self.next = start

    def uuid4(self) -> uuid.UUID:
        value = uuid.UUID(int=self.next)
        self.next += 1
        return value


def pin_compactions(set_attr: Callable[[Any, str, Any], None] = setattr, start: int = CHILD_UUID_START) -> None:
    """Give compaction entries a fixed timestamp and counted ids (``set_attr``: e.g. ``monkeypatch.setattr``)."""
    set_attr(compactor, "now_ms", lambda: FIXED_TS)
    set_attr(compactor, "uuid", CountingUuid(start))


def open_session(job: dict[str, Any], root: str) -> Session:
    """Open the job's session under ``root`` as an agent resuming it would."""
    store = JsonlStore(root, sync=job["sync"])
    policy = CompactionPolicy(**job["policy"])
    return Session(store, job["session_id"], policy=policy, estimator=get_estimator("medium"))


def _trace(on_call: Callable[[int, str, tuple[Any, ...]], Any]) -> None:
    """Route every traced ``os`` function through ``on_call(index, name, args)``."""
    counter = [0]
    for name in TRACED:
        real = getattr(os, name)

        def traced(*args: Any, _name: str = name, _real: Callable[..., Any] = real) -> Any:
            index = counter[0]
            counter[0] += 1
            return on_call(index, _name, args, _real)

        setattr(os, name, traced)


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # pragma: no cover - the signal is delivered before this returns


def _count(job: dict[str, Any]) -> dict[str, Any]:
    session = open_session(job, job["root"])
    calls: list[list[Any]] = []
    first_call_ns: list[int] = []
    start = time.perf_counter_ns()

    def record(index: int, name: str, args: tuple[Any, ...], real: Callable[..., Any]) -> Any:
        if not calls:
            first_call_ns.append(time.perf_counter_ns() - start)
        calls.append([name, len(args[1]) if name == "write" else 0])
        return real(*args)

    pin_compactions()
    _trace(record)
    start = time.perf_counter_ns()
    session.compact()
    elapsed = time.perf_counter_ns() - start
    return {"calls": calls, "compact_ns": elapsed, "first_call_ns": first_call_ns[0]}


def _run_to_death(job: dict[str, Any], run: dict[str, Any]) -> None:
    """In a fork: compact the run's copy of the session, dying at the run's kill point."""
    session = open_session(job, run["root"])
    target, how = run["call"], run["how"]

    def maybe_die(index: int, name: str, args: tuple[Any, ...], real: Callable[..., Any]) -> Any:
        if index != target:
            return real(*args)
        if how == "before":
            _die()
        if how in ("torn_half", "torn_last"):
            fd, data = args
            data = memoryview(data)
            real(fd, data[: len(data) // 2 if how == "torn_half" else len(data) - 1])
            _die()
        result = real(*args)
        _die()
        return result  # pragma: no cover

    pin_compactions()
    _trace(maybe_die)
    session.compact()


def _kill(job: dict[str, Any]) -> dict[str, Any]:
    fates: list[str] = []
    for run in job["runs"]:
        pid = fork_running(lambda run=run: _run_to_death(job, run))
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            fates.append(signal.Signals(os.WTERMSIG(status)).name)
        else:
            fates.append(f"exit {os.WEXITSTATUS(status)}")
    return {"fates": fates}


def _ready(job: dict[str, Any]) -> None:
    session = open_session(job, job["root"])
    pin_compactions()
    print("ready", flush=True)
    session.compact()
    print("done", flush=True)


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) == 2 else ""
    job = json.load(sys.stdin)
    if command == "count":
        print(json.dumps(_count(job)))
    elif command == "kill":
        print(json.dumps(_kill(job)))
    elif command == "ready":
        _ready(job)
    else:
        print(f"usage: {argv[0]} count|kill|ready < job.json", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
