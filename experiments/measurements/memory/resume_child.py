"""One resume measurement, run in a fresh process: ``python -m experiments.measurements.memory.resume_child MODE PATH [--trace]``.

Modes:

* ``full_stream``: iterate :class:`aptmem.recovery.LogScan` over the whole file, keeping nothing
  (the least a reader that ignores the marker must do);
* ``full_load``: ``list(LogScan(...))`` then :func:`aptmem.store.select_live` (what a naive resume
  does: load everything, then pick the live part);
* ``tail``: :func:`aptmem.tailscan.read_live_tail` (fast resume, backwards from the end);
* ``verify``: check that ``read_live_tail`` returns exactly ``select_live`` of every entry.

Prints one JSON object: wall time of the work (perf_counter_ns), peak RSS, and with ``--trace``
the tracemalloc peak (tracing slows the work, so timed runs do not trace). The measuring itself
(and why peak RSS is VmHWM, not ``ru_maxrss``) is :mod:`experiments.core.procmem`'s; the memory job's
child for any store, :mod:`experiments.measurements.memory.store_child`, shares it.
"""

from __future__ import annotations

import sys

import msgspec

from experiments.core.procmem import child_main, measure, peak_rss_bytes

__all__ = ["MODES", "ChildResult", "peak_rss_bytes", "run"]

MODES = ("full_stream", "full_load", "tail", "verify")


class ChildResult(msgspec.Struct, kw_only=True):
    """What one child measured."""

    mode: str
    wall_ns: int
    #: entries parsed (full modes) and entries in the live context (modes that compute it).
    entries_read: int | None = None
    live_entries: int | None = None
    #: VmHWM before the work (after imports) and after it, in bytes.
    rss_before_bytes: int
    peak_rss_bytes: int
    #: tracemalloc peak during the work, only with --trace.
    traced_peak_bytes: int | None = None
    verified: bool | None = None


def run(mode: str, path: str, trace: bool = False) -> ChildResult:
    """Do one measurement of ``mode`` on the log at ``path`` in this process."""
    from aptmem.recovery import LogScan
    from aptmem.store import select_live
    from aptmem.tailscan import read_live_tail

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")

    def work() -> tuple[int | None, int | None, bool | None]:
        """(entries read, live entries, verified) of the mode."""
        if mode == "full_stream":
            read = 0
            for _ in LogScan(path):
                read += 1
            return read, None, None
        if mode == "full_load":
            entries = list(LogScan(path))
            return len(entries), len(select_live(entries)), None
        if mode == "tail":
            return None, len(read_live_tail(path)), None
        entries = list(LogScan(path))
        expected = select_live(entries)
        got = read_live_tail(path)
        return len(entries), len(got), got == expected

    (read, live, verified), m = measure(work, trace=trace)
    return ChildResult(mode=mode, wall_ns=m.wall_ns, entries_read=read, live_entries=live, rss_before_bytes=m.rss_before_bytes,
                       peak_rss_bytes=m.peak_rss_bytes, traced_peak_bytes=m.traced_peak_bytes, verified=verified)


def main(argv: list[str] | None = None) -> int:
    """Parse ``MODE PATH [--trace]``, run, print the result as one JSON line."""
    return child_main(argv, "python -m experiments.measurements.memory.resume_child MODE PATH [--trace]", run)


if __name__ == "__main__":
    sys.exit(main())
