"""One library writer of the concurrency measurement: ``python -m experiments.measurements.concurrency.store_writer JOB``.

``JOB`` is a :class:`StoreWriterJob` as JSON. The writer builds the strategy's store (without
Hydra: start-up stays short), waits for the start line on stdin (so every writer begins
together), appends its entries with ids of its own, closes the store, and prints how many
appends returned, whatever happened.
"""

from __future__ import annotations

import sys

import msgspec

from aptmem.entries import User
from experiments.core.strategy import StoreSpec, build_store

__all__ = ["StoreWriterJob", "main"]


class StoreWriterJob(msgspec.Struct, frozen=True, kw_only=True):
    """What one writer appends, and where."""

    store: StoreSpec
    root: str
    session: str
    writer: int
    appends: int


def main(argv: list[str] | None = None) -> int:
    """Append the job's entries after the start line; print the acknowledged count."""
    args = sys.argv[1:] if argv is None else argv
    job = msgspec.json.decode(args[0], type=StoreWriterJob)
    store = build_store(job.store, job.root)
    sys.stdin.readline()
    done = 0
    try:
        for i in range(job.appends):
            store.append(job.session, User(content=f"writer {job.writer} entry {i}", ts=i, id=f"w{job.writer}-{i}"))
            done += 1
        store.close()
    finally:
        print(done, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
