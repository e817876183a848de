"""The memory job: full load and resume of sessions of growing size, each read in a fresh process.

For every session size the job generates one seeded session in the resume layout of
:class:`experiments.workloads.resume.ResumeSession` (history, then a compaction marker that keeps the
last turns, then a few more entries, so a resume has most of the history to skip), writes it
into every strategy's store, and then runs each timed read in its own ``python -m
experiments.measurements.memory.store_child`` process (one per measurement and repeat), so one strategy's garbage
and allocator state never count against the next:

* ``full_load``: open the store, stream every entry (``iter_entries``);
* ``resume``: open the store, ``read_live``.

Each run reports wall time (``perf_counter_ns``) and peak RSS (VmHWM); with ``trace`` one extra
run per (strategy, size, op) traces the Python heap with tracemalloc (tracing slows allocation,
so those runs are not used for time or RSS). Repeats go round-robin over strategies and ops, so a
noisy minute on a shared machine hits all of them alike. Files are read from a warm page cache
(they were just written): the figures compare parsing and memory, not the disk.

How a session is written: one ``replace(session, entries)`` per store, i.e. one atomic file
write for JSONL and full JSON and one transaction for SQLite. That is the fastest correct route
and yields the same entries as appending them one by one; appending would be quadratic for
full_json, and the write path is the write-cost job's subject, not this one's. Before measuring,
a freshly opened store checks once per (strategy, size) that ``read_live`` equals ``select_live``
of all entries and that it holds exactly the session written. That check measures nothing, so it
runs in this process: a child of its own would pay the store's imports again (3.5 s for the
OpenAI Agents SDK, a tenth of the default run's memory measurement) to learn nothing more, since
the timed children then read the same files and are checked against the same counts.

Tables written to the run folder: ``memory`` (parquet and CSV, one row per child run, see
:data:`MEMORY_SCHEMA`) and ``memory_notes.json``. The report section is built from those alone
(:mod:`experiments.measurements.memory.report`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from experiments.core.children import run_module
from experiments.core.runfolder import LEADING_COLUMNS, RunFolder, RunMeta, read_measurement
from experiments.core.strategy import StrategySpec, build_store
from experiments.measurements.memory.settings import MemorySettings
from experiments.measurements.memory.store_child import ReadJob, StoreResult
from experiments.measurements.memory.store_child import run as read_in_this_process
from experiments.workloads import Workload, workload_entries, workload_name
from experiments.workloads.resume import ResumeFile, ResumeSession
from experiments.workloads.transcripts import TranscriptWorkload

__all__ = ["MEMORY_SCHEMA", "OPS", "planned_measurements", "read_tables", "run_memory"]

#: the measured operations, in the order each repeat runs them.
OPS = ("full_load", "resume")


#: the columns of the ``memory`` table, in order.
MEMORY_SCHEMA: dict[str, pl.DataType] = {
    **LEADING_COLUMNS,  # strategy, family, variant, durable
    "workload": pl.String(),  # synthetic | transcript
    "seed": pl.Int64(),  # workload seed
    "commit": pl.String(),  # checked-out commit (+dirty)
    "machine": pl.String(),  # host, CPU, OS, Python
    "size_mb": pl.Float64(),  # the target session size (MB of JSONL)
    "session_bytes": pl.Int64(),  # the session's exact size as JSONL (the same for every strategy)
    "entries": pl.Int64(),  # entries in the session
    "bytes_on_disk": pl.Int64(),  # store.stats().bytes_on_disk, from a freshly opened store
    "files_bytes": pl.Int64(),  # every file in the store's folder after it was closed
    "op": pl.String(),  # full_load | resume
    "run": pl.String(),  # timed | traced (a tracemalloc run: its time and RSS are inflated)
    "repeat": pl.Int64(),  # 0-based repeat of this (strategy, size, op, run)
    "wall_ns": pl.Int64(),  # perf_counter_ns around opening the store and the read, in the child
    "open_ns": pl.Int64(),  # the opening alone
    "entries_read": pl.Int64(),  # entries streamed (full_load) or returned (resume)
    "live_entries": pl.Int64(),  # len(read_live) (resume rows; null for full_load)
    "rss_before_bytes": pl.Int64(),  # the child's VmHWM after imports, before the work
    "peak_rss_bytes": pl.Int64(),  # the child's VmHWM after the work
    "traced_peak_bytes": pl.Int64(),  # tracemalloc peak of the work (traced runs only, else null)
}


def _chosen(strategies: Sequence[StrategySpec], settings: MemorySettings) -> list[StrategySpec]:
    # The subset names the strategies worth measuring; a run without any of them (its strategy
    # list was overridden) measures all of its own rather than nothing.
    chosen = [s for s in strategies if s.name in settings.strategies]
    return chosen or list(strategies)


def _capped(strategy: StrategySpec, size_mb: float, settings: MemorySettings) -> bool:
    return strategy.whole_reads and settings.whole_read_max_mb > 0 and size_mb > settings.whole_read_max_mb


def planned_measurements(strategies: Sequence[StrategySpec], settings: MemorySettings) -> int:
    """How many steps the job will take (for a progress bar): checks, and timed and traced child runs."""
    per = 1 + len(OPS) * (settings.repeats + (1 if settings.trace else 0))
    return sum(per for s in _chosen(strategies, settings) for size in settings.sizes_mb if not _capped(s, size, settings))


def _session_id(size_mb: float) -> str:
    # A fixed id per size, shaped as a UUID v4: reruns name the same files.
    digest = hashlib.sha256(f"aptmem-memory:{size_mb!r}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _files_bytes(root: Path) -> int:
    return sum(os.lstat(Path(d) / f).st_size for d, _, files in os.walk(root) for f in files)


def _child(op: str, job: ReadJob, settings: MemorySettings, *, trace: bool = False) -> StoreResult:
    args = [op, msgspec.json.encode(job).decode()] + (["--trace"] if trace else [])
    return msgspec.json.decode(run_module("experiments.measurements.memory.store_child", args, timeout=settings.timeout_s),
                               type=StoreResult)


def _write_session(strategy: StrategySpec, root: Path, session_id: str, entries: list[Any]) -> None:
    """Write the session into a new store of ``strategy`` with one ``replace`` (see the module docstring)."""
    store = build_store(strategy, root)
    try:
        store.replace(session_id, entries)
    finally:
        store.close()


def _check(name: str, size_mb: float, info: ResumeFile, got: StoreResult) -> None:
    """Raise unless a child read what the session holds."""
    want = {"full_load": (info.entries, None), "resume": (info.live_entries, info.live_entries),
            "verify": (info.entries, info.live_entries)}[got.op]
    if (got.entries_read, got.live_entries) != want or got.verified is False:
        raise RuntimeError(f"{name} at {size_mb:g} MB, {got.op}: read {got.entries_read} entries, "
                           f"{got.live_entries} live (verified {got.verified}); expected {want}")


def run_memory(
    strategies: Sequence[StrategySpec],
    settings: MemorySettings,
    workload: Workload,
    out: Path | RunFolder,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Measure full load and resume of ``strategies`` at every size; write the tables.

    ``workload`` gives the seed and content settings of the sessions; a transcript workload gives
    their history instead (read up to each size; sizes beyond the whole transcript are measured
    once, at the transcript's own size, and listed in the notes). ``progress`` is called
    with 1 after every child process. Returns ``{"memory": table}``; raises ``RuntimeError`` if
    any store reads back something other than the session written to it.
    """
    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    chosen = _chosen(strategies, settings)
    rows: list[dict[str, object]] = []
    sessions: list[dict[str, object]] = []
    capped: list[dict[str, object]] = []
    checked = 0  # (strategy, size) pairs whose read_live was verified against select_live(all)
    history = workload_entries(workload) if isinstance(workload, TranscriptWorkload) else None
    beyond: list[float] = []  # sizes larger than the whole transcript (measured once, at its size)
    for size_mb in sorted(settings.sizes_mb):
        if beyond or (history is not None and sessions and sessions[-1]["exhausted"]):
            beyond.append(size_mb)
            continue
        active = [s for s in chosen if not _capped(s, size_mb, settings)]
        capped += [{"strategy": s.name, "size_mb": size_mb} for s in chosen if _capped(s, size_mb, settings)]
        if not active:
            continue
        if history is not None:
            source = ResumeSession(int(size_mb * 1e6), entries=history, keep_turns=settings.keep_turns,
                                   tail_entries=settings.tail_entries)
        else:
            source = ResumeSession(int(size_mb * 1e6), workload=workload, keep_turns=settings.keep_turns,
                                   tail_entries=settings.tail_entries)
        entries = [entry for entry, _ in source]
        info = source.info
        sessions.append({"size_mb": size_mb, "bytes": info.bytes, "entries": info.entries, "marker_line": info.marker_line,
                         "live_entries": info.live_entries, "live_bytes": info.live_bytes, "exhausted": source.exhausted})
        session_id = _session_id(size_mb)
        scratch = Path(tempfile.mkdtemp(prefix="aptmem-memory-", dir=settings.tmp))
        try:
            jobs: dict[str, ReadJob] = {}
            sizes: dict[str, tuple[int, int]] = {}
            for strategy in active:
                root = scratch / strategy.name
                _write_session(strategy, root, session_id, entries)
                jobs[strategy.name] = job = ReadJob(store=strategy.store, root=str(root), session_id=session_id)
                check = read_in_this_process("verify", job)  # not a child: see the module docstring
                _check(strategy.name, size_mb, info, check)
                sizes[strategy.name] = (check.bytes_on_disk or 0, _files_bytes(root))
                checked += 1
                if progress is not None:
                    progress(1)
            del entries  # the parent's copy is not needed while the children measure
            plan = [(s, op, r, False) for r in range(settings.repeats) for s in active for op in OPS]
            if settings.trace:
                plan += [(s, op, 0, True) for s in active for op in OPS]
            for strategy, op, repeat, traced in plan:
                res = _child(op, jobs[strategy.name], settings, trace=traced)
                _check(strategy.name, size_mb, info, res)
                rows.append(_row(strategy, folder.meta, workload.seed, size_mb, info, sizes[strategy.name], res, repeat,
                                 traced, workload_name(workload)))
                if progress is not None:
                    progress(1)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    table = pl.DataFrame(rows, schema=MEMORY_SCHEMA)
    notes = {
        "sizes_mb": sorted(settings.sizes_mb), "repeats": settings.repeats, "trace": settings.trace,
        "keep_turns": settings.keep_turns, "tail_entries": settings.tail_entries, "seed": workload.seed,
        "strategies": [s.name for s in chosen], "whole_read_max_mb": settings.whole_read_max_mb, "capped": capped,
        "sessions": sessions, "written_by": "replace", "checked": checked, "workload": workload_name(workload),
        "sizes_beyond_workload": beyond,
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }
    return folder.write("memory", {"memory": table}, notes)


def _row(strategy: StrategySpec, meta: RunMeta, seed: int, size_mb: float, session: ResumeFile,
         sizes: tuple[int, int], res: StoreResult, repeat: int, traced: bool, workload: str = "synthetic") -> dict[str, object]:
    """One row of :data:`MEMORY_SCHEMA`."""
    return {
        "strategy": strategy.name, "family": strategy.family, "variant": strategy.variant, "durable": strategy.durable,
        "workload": workload, "seed": seed, "commit": meta.commit, "machine": meta.machine,
        "size_mb": float(size_mb), "session_bytes": session.bytes, "entries": session.entries,
        "bytes_on_disk": sizes[0], "files_bytes": sizes[1], "op": res.op, "run": "traced" if traced else "timed",
        "repeat": repeat, "wall_ns": res.wall_ns, "open_ns": res.open_ns, "entries_read": res.entries_read,
        "live_entries": res.live_entries, "rss_before_bytes": res.rss_before_bytes, "peak_rss_bytes": res.peak_rss_bytes,
        "traced_peak_bytes": res.traced_peak_bytes,
    }


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's memory table and notes back."""
    return read_measurement(run_dir, ["memory"], "memory")
