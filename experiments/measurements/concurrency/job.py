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

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from omegaconf import OmegaConf

from experiments.measurements.concurrency.modes import signal_go
from experiments.core.runfolder import write_measurement
from experiments.core.runinfo import REPO_ROOT, run_metadata
from experiments.core.strategy import build_store, load_strategy
from experiments.measurements.write_cost.samples import strategy_info

__all__ = ["ConcurrencySettings", "run_concurrency", "TABLES"]

TABLES = ("concurrency", "concurrency_modes")
SESSION = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"

# The writer: builds the store from its target and settings (no Hydra: start-up stays short),
# waits for the start signal on stdin, appends, closes, and prints how many appends returned.
_WRITER = r"""
import importlib, json, sys
from aptmem.entries import User
spec = json.loads(sys.argv[1])
module, _, name = spec["target"].rpartition(".")
store = getattr(importlib.import_module(module), name)(spec["root"], **spec["settings"])
sys.stdin.readline()
done = 0
try:
    for i in range(spec["appends"]):
        store.append(spec["session"], User(content=f"writer {spec['writer']} entry {i}", ts=i, id=f"w{spec['writer']}-{i}"))
        done += 1
    store.close()
finally:
    print(done, flush=True)
"""


@dataclass(kw_only=True)
class ConcurrencySettings:
    """How hard the writers contend (a plain dataclass: also the Hydra schema of ``concurrency``)."""

    #: processes appending to the one session at once
    writers: int = 4
    #: entries each writer appends
    appends: int = 50
    #: seconds a writer may take before it is counted as stuck and killed
    timeout: float = 60.0
    #: modes of the command-line runs: lock, no_lock (aptmem append --no-lock), buffered (a naive logger)
    modes: list[str] = field(default_factory=lambda: ["lock", "no_lock", "buffered"])
    #: line sizes (bytes) of the command-line runs: small lines, and large ones that may interleave
    line_bytes: list[int] = field(default_factory=lambda: [1000, 1_000_000])
    #: entries each command-line writer appends (fewer for large lines: see max_bytes_per_writer)
    cli_appends: int = 500
    #: bytes each command-line writer appends at most; large lines get fewer appends (at least 2)
    max_bytes_per_writer: int = 16_000_000
    #: the naive buffered logger's buffer, in bytes
    buffer_bytes: int = 512
    #: working-memory set() calls per writer process in the sidecar runs (0: no sidecar runs)
    sidecar_sets: int = 25

    def __post_init__(self) -> None:
        from experiments.measurements.concurrency.modes import LOG_MODES

        unknown = sorted(set(self.modes) - set(LOG_MODES))
        if unknown:
            raise ValueError(f"concurrency.modes: unknown mode(s) {unknown}; choose from {', '.join(LOG_MODES)}")
        if self.writers < 1 or self.appends < 1 or self.cli_appends < 1 or any(size < 64 for size in self.line_bytes):
            raise ValueError("concurrency: writers, appends and cli_appends must be >= 1 and line_bytes >= 64")

    def appends_for(self, size: int) -> int:
        """Entries each command-line writer appends with lines of ``size`` bytes."""
        return max(2, min(self.cli_appends, self.max_bytes_per_writer // size))


def _spec(cfg: Any) -> tuple[str, dict[str, Any]]:
    store = OmegaConf.to_container(cfg.store, resolve=True)
    assert isinstance(store, dict)
    target = str(store.pop("_target_"))
    return target, store


def _measure(cfg: Any, settings: ConcurrencySettings, root: Path) -> dict[str, Any]:
    target, store_settings = _spec(cfg)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = []
    for writer in range(settings.writers):
        spec = {"target": target, "settings": store_settings, "root": str(root), "session": SESSION,
                "writer": writer, "appends": settings.appends}
        procs.append(subprocess.Popen([sys.executable, "-c", _WRITER, json.dumps(spec)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    time.sleep(0.3)  # let every writer import and open its store before the start signal
    started = time.perf_counter_ns()
    signal_go(procs)
    acknowledged, failed, errors = 0, 0, []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=settings.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        acknowledged += int(out.strip() or 0)
        if proc.returncode != 0:
            failed += 1
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}")
    elapsed = time.perf_counter_ns() - started
    return {"acknowledged": acknowledged, "writers_failed": failed, "wall_ns": elapsed,
            "error": "; ".join(sorted(set(errors)))[:300] or None, **_survivors(cfg, root)}


def _survivors(cfg: Any, root: Path) -> dict[str, Any]:
    """What a fresh reader finds after the writers are done."""
    store = build_store(cfg, root)
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
    strategies: Sequence[Any],
    settings: ConcurrencySettings,
    out: Path,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Measure every strategy; write the ``concurrency`` table (parquet and CSV) to ``out``."""
    meta = run_metadata()
    rows = []
    for cfg in strategies:
        cfg = load_strategy(cfg) if isinstance(cfg, str) else cfg
        info = strategy_info(cfg)
        with tempfile.TemporaryDirectory(prefix="aptmem-concurrency-") as scratch:
            outcome = _measure(cfg, settings, Path(scratch))
        expected = settings.writers * settings.appends
        rows.append({"strategy": info.strategy, "family": info.family, "variant": info.variant, "durable": info.durable,
                     "writers": settings.writers, "appends": settings.appends, "expected": expected,
                     "lost": outcome["acknowledged"] - min(outcome["found"], outcome["acknowledged"]),
                     **outcome, "commit": meta["commit"], "machine": meta["machine"]})
        if progress is not None:
            progress(1)
    modes = run_modes(settings, meta, progress=progress)
    return write_measurement(out, {"concurrency": pl.DataFrame(rows), "concurrency_modes": modes}, "concurrency",
                             {**meta, "writers": settings.writers, "appends": settings.appends})


#: What writes in each mode, as the report names it.
WRITERS = {("log", "lock"): "aptmem append", ("log", "no_lock"): "aptmem append --no-lock",
           ("log", "buffered"): "naive buffered logger (harness only)", ("sidecar", "lock"): "WorkingMemory.set",
           ("sidecar", "no_lock"): "unlocked read-modify-write (harness only)"}


def planned_mode_runs(settings: ConcurrencySettings) -> int:
    """How many mode runs :func:`run_modes` makes."""
    return len(settings.modes) * len(settings.line_bytes) + (2 if settings.sidecar_sets else 0)


def run_modes(settings: ConcurrencySettings, meta: dict[str, Any], *,
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
                     "commit": meta["commit"], "machine": meta["machine"]})
        if progress is not None:
            progress(1)
    return pl.DataFrame(rows, infer_schema_length=None)

