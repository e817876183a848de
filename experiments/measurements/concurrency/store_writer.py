"""The library writers of the concurrency measurement: ``python -m experiments.measurements.concurrency.store_writer JOB``.

``JOB`` is a :class:`StoreWriterJob` as JSON. This process imports the strategy's store module
once and forks ``writers`` processes from it, so each writer is a process of its own that did
not pay the imports again (the OpenAI Agents SDK takes 3.5 s to import; four writers exec'd
apart spent 7 s of the default run's two cores on that alone). Each writer builds its own store
(after the fork: nothing open is shared), says it is ready, and blocks on a gate; the gate is
opened for all at once (its write end closed: every reader sees end-of-file together), and each
appends its entries with ids of its own, closes the store, and reports how many appends returned.

The protocol with the harness, on this process's stdin and stdout: it prints ``ready`` once
every writer has its store open (or has failed trying), waits for a line on stdin, opens the
gate, and at the end prints one :class:`WritersOutcome` as JSON. Why wait for ready: a start
signal sent while slow writers were still importing would let the fast ones finish before the
slow ones began, and then nothing ran concurrently at all.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

import msgspec

from aptmem.entries import User
from experiments.core.children import fork_running, readable
from experiments.core.strategy import StoreSpec, build_store, import_target

__all__ = ["StoreWriterJob", "WritersOutcome", "main"]


class StoreWriterJob(msgspec.Struct, frozen=True, kw_only=True):
    """What the writers append, and where: ``writers`` processes, ``appends`` entries each."""

    store: StoreSpec
    root: str
    session: str
    writers: int
    appends: int
    #: seconds a writer may take to open its store, and all of them to finish appending
    timeout: float = 600.0


class WritersOutcome(msgspec.Struct, kw_only=True):
    """What each writer reported: the appends acknowledged, and its error ("" for none)."""

    acknowledged: list[int]
    errors: list[str]


_READY = b"ready\n"


def _writer(job: StoreWriterJob, writer: int, gate: int, report: int) -> None:
    """One writer, in its forked process: open, say ready, wait at the gate, append, report the count."""
    done, error = 0, ""
    try:
        store = build_store(job.store, job.root)
        os.write(report, _READY)
        while os.read(gate, 1):  # end-of-file: the gate is open
            pass
        for i in range(job.appends):
            store.append(job.session, User(content=f"writer {writer} entry {i}", ts=i, id=f"w{writer}-{i}"))
            done += 1
        store.close()
    except Exception as exc:  # noqa: BLE001 - what the writer hit is the finding, reported to the harness
        traceback.print_exc()
        error = f"{type(exc).__name__}: {exc}"
    finally:
        os.write(report, msgspec.json.encode({"done": done, "error": error}) + b"\n")


def _read_line(fd: int, deadline: float) -> bytes:
    """Read ``fd`` up to a newline or its end (whichever comes first), waiting at most until ``deadline``."""
    data = b""
    while not data.endswith(b"\n"):
        if not readable(fd, deadline - time.monotonic()):
            raise TimeoutError
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data


def run(job: StoreWriterJob) -> WritersOutcome:
    """Fork the writers, print ``ready`` when all are, wait for the start line, open the gate, collect."""
    import_target(job.store.target)  # once, here: every writer inherits it
    gate_read, gate_write = os.pipe()
    reports: list[int] = []
    pids: list[int] = []
    for writer in range(job.writers):
        report_read, report_write = os.pipe()

        def body(writer: int = writer, report_write: int = report_write) -> None:
            os.close(gate_write)
            _writer(job, writer, gate_read, report_write)

        pids.append(fork_running(body))
        os.close(report_write)
        reports.append(report_read)
    os.close(gate_read)
    deadline = time.monotonic() + job.timeout
    first = [_read_line(fd, deadline) for fd in reports]  # ready, or a failed writer's report
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    os.close(gate_write)
    acknowledged, errors = [], []
    for fd, line, pid in zip(reports, first, pids, strict=True):
        final = _read_line(fd, deadline) if line == _READY else line
        os.close(fd)
        told = msgspec.json.decode(final) if final.strip() else {"done": 0, "error": ""}
        _, status = os.waitpid(pid, 0)
        acknowledged.append(int(told["done"]))
        errors.append(str(told["error"]) or (f"the writer ended with status {status:#x}" if status else ""))
    return WritersOutcome(acknowledged=acknowledged, errors=errors)


def main(argv: list[str] | None = None) -> int:
    """Run the job given as JSON in the first argument; print the outcome as one JSON line."""
    args = sys.argv[1:] if argv is None else argv
    outcome = run(msgspec.json.decode(args[0], type=StoreWriterJob))
    sys.stdout.write(msgspec.json.encode(outcome).decode() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
