"""Measuring one piece of work in a fresh process: wall time, peak RSS, traced heap peak.

Shared by the children of the resume benchmark (:mod:`experiments.measurements.memory.resume_child`) and the memory
job (:mod:`experiments.measurements.memory.store_child`); :func:`experiments.core.children.run_module` starts them.

Peak RSS is the kernel's high-water mark of this process's own memory (``VmHWM`` in
``/proc/self/status``), not ``getrusage(...).ru_maxrss``: on Linux, ``ru_maxrss`` of a freshly
exec'd child starts at its parent's RSS at the fork (measured: a 300 MB parent made a bare
``python -c`` child report 311 MB), so it would charge the harness's own memory to the child.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

__all__ = ["Measured", "child_main", "measure", "peak_rss_bytes"]

_T = TypeVar("_T")


def peak_rss_bytes() -> int:
    """This process's peak resident set size in bytes (VmHWM; ru_maxrss where /proc is missing)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Measured(msgspec.Struct, kw_only=True):
    """What :func:`measure` saw around one piece of work."""

    #: perf_counter_ns around the work.
    wall_ns: int
    #: VmHWM before the work (after the imports the caller did) and after it, in bytes.
    rss_before_bytes: int
    peak_rss_bytes: int
    #: tracemalloc's peak during the work (Python allocations only), when traced.
    traced_peak_bytes: int | None = None


def measure(work: Callable[[], _T], *, trace: bool = False) -> tuple[_T, Measured]:
    """Run ``work()`` once; return its result and its wall time and memory peaks.

    Import everything the work needs before calling this: the ``before`` high-water mark is then
    the interpreter plus the code, and ``peak - before`` is what the work itself added. With
    ``trace`` tracemalloc runs around the work only (it slows allocation-heavy code several
    times over, so a caller times untraced runs and traces a separate one).
    """
    before = peak_rss_bytes()
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter_ns()
    result = work()
    wall = time.perf_counter_ns() - t0
    traced = tracemalloc.get_traced_memory()[1] if trace else None
    if trace:
        tracemalloc.stop()
    return result, Measured(wall_ns=wall, rss_before_bytes=before, peak_rss_bytes=peak_rss_bytes(), traced_peak_bytes=traced)


def child_main(argv: Sequence[str] | None, usage: str, work: Callable[[str, str, bool], msgspec.Struct]) -> int:
    """A measuring child's command line, ``WHAT ARG [--trace]``: run ``work(what, arg, trace)`` and print its
    result as one JSON line (2 and ``usage`` on stderr for anything else)."""
    args = list(sys.argv[1:] if argv is None else argv)
    trace = "--trace" in args
    args = [a for a in args if a != "--trace"]
    if len(args) != 2:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    sys.stdout.write(msgspec.json.encode(work(args[0], args[1], trace)).decode() + "\n")
    return 0
