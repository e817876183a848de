"""One read of a session through a store, in a fresh process: ``python -m experiments.measurements.memory.store_child OP JOB [--trace]``.

``JOB`` is a :class:`ReadJob` as JSON (the strategy's store spec, its root, the session).
Operations:

* ``full_load``: open the store and stream every entry with ``iter_entries``, keeping nothing
  (what any reader of the whole history pays at least);
* ``resume``: open the store and ``read_live`` (what an agent resuming the session needs);
* ``verify`` (not a measurement): check that ``read_live`` equals
  :func:`aptmem.store.select_live` of every entry, and report the entry count and
  ``stats().bytes_on_disk`` as a freshly opened store sees them.

The wall time covers opening the store and the read (a fresh process has to do both); the
opening alone is reported as ``open_ns``. Closing is not timed. The store's module is imported
before the measurement starts, so imports count in neither time nor ``peak - before``. Prints
one JSON :class:`StoreResult`. Measuring (and why peak RSS is VmHWM) is
:mod:`experiments.core.procmem`'s.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import msgspec

from experiments.core.procmem import child_main, measure
from experiments.core.strategy import StoreSpec, build_store, import_target

__all__ = ["OPS", "ReadJob", "StoreResult", "run"]

OPS = ("full_load", "resume", "verify")


class ReadJob(msgspec.Struct, kw_only=True):
    """Which store to open, where, and which session to read."""

    store: StoreSpec
    root: str
    session_id: str


class StoreResult(msgspec.Struct, kw_only=True):
    """What one child measured (or, for ``verify``, checked)."""

    op: str
    #: perf_counter_ns around opening the store and the read; the opening alone.
    wall_ns: int
    open_ns: int
    #: entries streamed (full_load, verify) or returned by read_live (resume).
    entries_read: int
    #: length of read_live (resume, verify); None for full_load.
    live_entries: int | None = None
    rss_before_bytes: int
    peak_rss_bytes: int
    traced_peak_bytes: int | None = None
    #: verify only: read_live == select_live(all entries), and stats().bytes_on_disk.
    verified: bool | None = None
    bytes_on_disk: int | None = None


def run(op: str, job: ReadJob, trace: bool = False) -> StoreResult:
    """Do ``op`` on the session of ``job`` in this process; measure it."""
    from aptmem.store import select_live

    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; choose one of {', '.join(OPS)}")
    import_target(job.store.target)  # import the store's module now, outside the measurement
    holder: list[Any] = []

    def work() -> tuple[int, int, int | None, bool | None, int | None]:
        """(open ns, entries read, live entries, verified, bytes on disk) of the op."""
        t0 = time.perf_counter_ns()
        store = build_store(job.store, job.root)
        opened = time.perf_counter_ns() - t0
        holder.append(store)
        sid = job.session_id
        if op == "full_load":
            read = 0
            for _ in store.iter_entries(sid):
                read += 1
            return opened, read, None, None, None
        if op == "resume":
            live = store.read_live(sid)
            return opened, len(live), len(live), None, None
        everything = list(store.iter_entries(sid))
        live = store.read_live(sid)
        return opened, len(everything), len(live), live == select_live(everything), store.stats(sid).bytes_on_disk

    try:
        (opened, read, live, verified, size), m = measure(work, trace=trace)
    finally:
        for store in holder:
            store.close()
    return StoreResult(op=op, wall_ns=m.wall_ns, open_ns=opened, entries_read=read, live_entries=live,
                       rss_before_bytes=m.rss_before_bytes, peak_rss_bytes=m.peak_rss_bytes,
                       traced_peak_bytes=m.traced_peak_bytes, verified=verified, bytes_on_disk=size)


def main(argv: list[str] | None = None) -> int:
    """Parse ``OP JOB_JSON [--trace]``, run, print the result as one JSON line."""
    return child_main(argv, "python -m experiments.measurements.memory.store_child OP JOB_JSON [--trace]",
                      lambda op, job, trace: run(op, msgspec.json.decode(job, type=ReadJob), trace))


if __name__ == "__main__":
    sys.exit(main())
