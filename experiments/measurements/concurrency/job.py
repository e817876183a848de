"""Concurrency safety, measured: several processes append to one session at the same moment.

Two tables:

* ``concurrency``: for each strategy, ``writers`` real processes open the same root and session
  through the library and, released together, each append ``appends`` entries with ids of their
  own, then close. A fresh reader then counts what survived: entries found, lost (acknowledged by
  a writer but absent), duplicated, damaged lines, and whether every writer finished. A strategy
  that serializes writers (a lock, a database transaction) loses nothing; one that keeps its own
  copy in memory and rewrites the file loses other writers' entries (the last rewrite wins).
* ``concurrency_modes``: the same through the real ``aptmem append`` command line with the lock,
  without it, and through a naive buffered logger, for each of ``line_bytes``; and the
  working-memory sidecar with and without its lock (:mod:`experiments.measurements.concurrency.modes`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from experiments.core.runfolder import RunFolder, RunMeta
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.core.strategy import StrategySpec, build_store
from experiments.measurements.concurrency.settings import ConcurrencySettings
from experiments.measurements.concurrency.store_writer import StoreWriterJob, WritersOutcome

__all__ = ["SESSION", "TABLES", "planned_mode_runs", "run_concurrency", "run_modes"]

TABLES = ("concurrency", "concurrency_modes")
SESSION = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"


def _measure(strategy: StrategySpec, settings: ConcurrencySettings, root: Path) -> dict[str, Any]:
    job = StoreWriterJob(store=strategy.store, root=str(root), session=SESSION, writers=settings.writers,
                         appends=settings.appends, timeout=settings.timeout)
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.measurements.concurrency.store_writer", msgspec.json.encode(job).decode()],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), cwd=REPO_ROOT)
    try:
        ready = proc.stdout.readline()  # type: ignore[union-attr]  # every writer has its store open
        started = time.perf_counter_ns()
        if ready == b"ready\n":
            proc.stdin.write(b"go\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        out, err = proc.communicate(timeout=settings.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    elapsed = time.perf_counter_ns() - started
    if proc.returncode != 0 or not out.strip():
        tail = err.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"{strategy.name}: the writers' process failed ({proc.returncode}): {tail[-1] if tail else ''}")
    outcome = msgspec.json.decode(out.strip().splitlines()[-1], type=WritersOutcome)
    errors = [e for e in outcome.errors if e]
    return {"acknowledged": sum(outcome.acknowledged), "writers_failed": len(errors), "wall_ns": elapsed,
            "error": "; ".join(sorted(set(errors)))[:300] or None, **_survivors(strategy, root)}


def _survivors(strategy: StrategySpec, root: Path) -> dict[str, Any]:
    """What a fresh reader finds after the writers are done."""
    store = build_store(strategy, root)
    safe = store.capabilities.multi_process_safe
    try:
        report = store.recover(SESSION)
        ids = Counter(e.id for e in store.iter_entries(SESSION)) if report.loadable else Counter()
    except Exception as exc:  # a store that cannot even open the session: that is the finding
        return {"multi_process_safe": safe, "loadable": False, "found": 0, "duplicated": 0, "damaged_lines": 0,
                "note": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        store.close()
    return {"multi_process_safe": safe, "loadable": report.loadable, "found": len(ids), "duplicated": sum(n - 1 for n in ids.values() if n > 1),
            "damaged_lines": len(report.damaged_lines) + (1 if report.torn_tail_bytes else 0), "note": None}


def run_concurrency(
    strategies: Sequence[StrategySpec],
    settings: ConcurrencySettings,
    out: Path | RunFolder,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Measure every strategy, then the command-line and sidecar modes; write both tables to ``out``."""
    folder = RunFolder.of(out)
    rows = []
    for strategy in strategies:
        with tempfile.TemporaryDirectory(prefix="aptmem-concurrency-") as scratch:
            outcome = _measure(strategy, settings, Path(scratch))
        expected = settings.writers * settings.appends
        rows.append({**strategy.columns(), "writers": settings.writers, "appends": settings.appends, "expected": expected,
                     "lost": outcome["acknowledged"] - min(outcome["found"], outcome["acknowledged"]),
                     **outcome, "commit": folder.meta.commit, "machine": folder.meta.machine})
        if progress is not None:
            progress(1)
    modes = run_modes(settings, folder.meta, progress=progress)
    return folder.write("concurrency", {"concurrency": pl.DataFrame(rows), "concurrency_modes": modes},
                        {"writers": settings.writers, "appends": settings.appends})


#: What writes in each mode, as the report names it.
WRITERS = {("log", "lock"): "aptmem append", ("log", "no_lock"): "aptmem append --no-lock",
           ("log", "buffered"): "naive buffered logger (harness only)", ("sidecar", "lock"): "WorkingMemory.set",
           ("sidecar", "no_lock"): "unlocked read-modify-write (harness only)"}


def planned_mode_runs(settings: ConcurrencySettings) -> int:
    """How many mode runs :func:`run_modes` makes."""
    return len(settings.modes) * len(settings.line_bytes) + (2 if settings.sidecar_sets else 0)


def run_modes(settings: ConcurrencySettings, meta: RunMeta, *,
              progress: Callable[[int], object] | None = None) -> pl.DataFrame:
    """Every command-line mode and line size, then the sidecar modes: one row each."""
    from experiments.measurements.concurrency.modes import (
        SIDECAR_MODES,
        measure_log_mode,
        measure_sidecar_mode,
    )

    rows = []
    runs: list[tuple[str, str, int]] = [("log", mode, size) for mode in settings.modes for size in settings.line_bytes]
    runs += [("sidecar", mode, 0) for mode in SIDECAR_MODES] if settings.sidecar_sets else []
    for target, mode, size in runs:
        with tempfile.TemporaryDirectory(prefix="aptmem-concurrency-") as scratch:
            if target == "log":
                per_writer = settings.appends_for(size)
                outcome = measure_log_mode(mode, Path(scratch), SESSION, writers=settings.writers, appends=per_writer,
                                           size=size, buffer_bytes=settings.buffer_bytes, timeout=settings.timeout)
            else:
                per_writer = settings.sidecar_sets
                outcome = measure_sidecar_mode(mode, Path(scratch), SESSION, writers=settings.writers,
                                               sets=per_writer, timeout=settings.timeout)
        rows.append({"target": target, "mode": mode, "writer": WRITERS[(target, mode)], "line_bytes": size or None,
                     "writers": settings.writers, "per_writer": per_writer, **outcome,
                     "commit": meta.commit, "machine": meta.machine})
        if progress is not None:
            progress(1)
    return pl.DataFrame(rows, infer_schema_length=None)

