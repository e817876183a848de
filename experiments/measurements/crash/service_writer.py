"""``python -m experiments.measurements.crash.service_writer write|recover JOB``: a served store's writer and reader.

``write`` appends the job's entries to a store whose server the parent will kill: before each
append it prints ``I <digest>`` (the entry it is about to append), after it ``A`` (acknowledged),
one flushed line each, so the parent knows what was acknowledged when the server died. After each
acknowledgement but the last it waits for one byte on its standard input before the next append:
the parent steps it, so on a loaded machine the writer cannot run past the moment the parent
chose to kill the server (it would otherwise finish while the parent still reads old lines). When an
append fails (the server is gone) it prints ``E <error>`` and exits 0: losing its server is what
the case is about. ``recover`` opens a fresh store after the server was started again and prints
the :class:`~experiments.core.crashsim.recovery.RecoveryOutcome` as one JSON line.
"""

from __future__ import annotations

import sys

import msgspec

from experiments.core.strategy import StoreSpec
from experiments.workloads import WorkloadRequest

__all__ = ["ServiceWriterJob", "main"]


class ServiceWriterJob(msgspec.Struct, frozen=True, kw_only=True):
    """What the writer appends, where, and how the reader recovers it."""

    store: StoreSpec
    root: str
    session_id: str
    workload: WorkloadRequest
    mode: str


def _write(job: ServiceWriterJob) -> None:
    from experiments.core.crashsim.recovery import digest
    from experiments.core.strategy import build_store

    out = sys.stdout
    entries = job.workload.entries()
    store = build_store(job.store, job.root)
    store.create(job.session_id)
    out.write("R\n")  # ready: the store is open and the session exists
    out.flush()
    step = sys.stdin.buffer
    try:
        for i, entry in enumerate(entries):
            if i and not step.read(1):  # the parent closed our input: it wants no more appends
                return
            out.write(f"I {digest(entry)}\n")
            out.flush()
            store.append(job.session_id, entry)
            out.write("A\n")
            out.flush()
    except Exception as exc:  # the server died under the append: report it, as the case expects
        out.write(f"E {type(exc).__name__}: {str(exc)[:200]!r}\n")
        out.flush()
        return
    finally:
        try:
            store.close()
        except Exception:  # closing a connection to a dead server fails too; nothing to save
            pass


def _recover(job: ServiceWriterJob) -> None:
    from experiments.core.crashsim.recovery import recover_case

    print(msgspec.json.encode(recover_case(job.store, job.session_id, job.root, job.mode)).decode())


def main(argv: list[str]) -> int:
    """Run ``write`` or ``recover`` on the JSON job of ``argv``."""
    if len(argv) != 2 or argv[0] not in ("write", "recover"):
        print("usage: python -m experiments.measurements.crash.service_writer write|recover JOB", file=sys.stderr)
        return 2
    job = msgspec.json.decode(argv[1], type=ServiceWriterJob)
    (_write if argv[0] == "write" else _recover)(job)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
