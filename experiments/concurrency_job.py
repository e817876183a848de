"""Concurrency safety, measured: several processes append to one session at the same moment.

For each strategy, ``writers`` real processes open the same root and session and, released
together, each append ``appends`` entries with ids of their own, then close. A fresh reader
then counts what survived: entries found, lost (acknowledged by a writer but absent), duplicated,
damaged lines, and whether every writer finished. A strategy that serializes writers (a lock,
a database transaction) loses nothing; one that keeps its own copy in memory and rewrites the
file loses other writers' entries (the last rewrite wins).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import polars as pl
from omegaconf import OmegaConf

from experiments.runinfo import REPO_ROOT, run_metadata
from experiments.strategy_configs import build_store, load_strategy
from experiments.write_cost import strategy_info

__all__ = ["ConcurrencySettings", "run_concurrency", "TABLES"]

TABLES = ("concurrency",)
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
    for proc in procs:
        proc.stdin.write("go\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
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
    table = pl.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out / "concurrency.parquet")
    table.write_csv(out / "concurrency.csv")
    (out / "concurrency_notes.json").write_bytes(msgspec.json.encode({**meta, "writers": settings.writers,
                                                                      "appends": settings.appends}))
    return {"concurrency": table}

