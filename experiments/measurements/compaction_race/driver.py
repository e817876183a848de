"""Running the compaction race: real writer and compactor processes on one session, then the check.

:func:`plan_cells` builds one :class:`~.spec.RaceCell` per (strategy, persist mode) from the
strategy YAMLs in ``configs/strategy/``: library writers for every strategy, ``aptmem append``
writers and ``aptmem compact`` compactions for strategies whose store is aptmem's JSONL log
(the command line writes that format only). Strategies whose store is not safe for several
processes (``capabilities.multi_process_safe`` False) get no cell: several processes cannot
share such a session even without a compaction, and a row says so. :func:`run_cell` starts every
process, releases them at once, waits, and checks (:mod:`.oracle`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import msgspec

from aptmem.jsonl_store import JsonlStore
from experiments.core.strategy import StrategySpec, build_store, capabilities, import_target, load_strategy
from experiments.measurements.compaction_race.oracle import check
from experiments.measurements.compaction_race.spec import SIZES, CompactorSpec, RaceCell, RaceRow, RaceSize, WriterSpec

__all__ = ["PERSIST_WAYS", "plan_cells", "run_cell", "run_race"]

PERSIST_WAYS = ("append", "rewrite")
_REPO = Path(__file__).resolve().parents[3]


def plan_cells(strategies: Sequence[StrategySpec | str], size: RaceSize | str = "ci", seed: int = 0,
               persist: Sequence[str] = PERSIST_WAYS) -> tuple[list[RaceCell], list[RaceRow]]:
    """The cells to run, and a row for every strategy left out (with the reason).

    ``strategies`` are specs (with their services started, as a run hands them over) or names
    of strategy configs (for a strategy that declares a service, start it first:
    :func:`experiments.core.strategy.services_started`).
    """
    size = SIZES[size] if isinstance(size, str) else size
    cells, skipped = [], []
    for given in strategies:
        strategy_spec = load_strategy(given) if isinstance(given, str) else given
        strategy, spec = strategy_spec.name, strategy_spec.store
        if not capabilities(strategy_spec).multi_process_safe:
            for way in persist:
                skipped.append(RaceRow(strategy=strategy, persist=way, seed=seed, role="writer", name="-", kind="-",
                                       error="not safe for several processes (multi_process_safe is false): no race"))
            continue
        cli = import_target(spec.target) is JsonlStore  # the store whose files aptmem's command line writes
        writers = [WriterSpec("lib-ids", "library", size.library, with_ids=True, pause_ms=size.writer_pause_ms),
                   WriterSpec("lib-fresh", "library_fresh", size.library_fresh, with_ids=False, pause_ms=size.writer_pause_ms)]
        compactors = [CompactorSpec("compact-lib", "library", size.library_compactions)]
        if cli:
            writers += [WriterSpec("cli-each", "cli_each", size.cli_each, with_ids=False),
                        WriterSpec("cli-stream", "cli_stream", size.cli_stream, with_ids=False)]
            compactors.append(CompactorSpec("compact-cli", "cli", size.cli_compactions))
        for way in persist:
            cells.append(RaceCell(strategy=strategy, store=spec, persist=way, writers=writers,  # type: ignore[arg-type]
                                  compactors=compactors, seed=seed, timeout_s=size.timeout_s))
    return cells, skipped


def run_cell(cell: RaceCell, base: str | os.PathLike[str]) -> list[RaceRow]:
    """Race the cell's processes on one new session under ``base``; return one row per participant."""
    work = Path(base) / f"{cell.strategy}-{cell.persist}-{uuid.uuid4().hex[:8]}"
    root, coord = work / "sessions", work / "coord"
    root.mkdir(parents=True)
    coord.mkdir()
    sid = str(uuid.uuid4())
    procs: dict[str, subprocess.Popen] = {}
    outs: dict[str, Path] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    started = time.monotonic()
    error = None
    try:
        for role, specs in (("writer", cell.writers), ("compactor", cell.compactors)):
            for spec in specs:
                outs[spec.name] = work / f"{spec.name}.out"
                job = {"role": role, "cell": msgspec.to_builtins(cell), "spec": msgspec.to_builtins(spec), "root": str(root),
                       "session_id": sid, "coord": str(coord), "out": str(outs[spec.name])}
                proc = subprocess.Popen([sys.executable, "-m", "experiments.measurements.compaction_race.child"],
                                        stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=_REPO, env=env)
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(job).encode())
                proc.stdin.close()
                procs[spec.name] = proc
        (coord / "go").write_bytes(b"")
        error = _wait(procs, coord, started + cell.timeout_s)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    seconds = time.monotonic() - started
    store = build_store(cell.store, root)
    try:
        found = check(store, sid, cell.persist, {w.name: outs[w.name] for w in cell.writers},
                      {c.name: outs[c.name] for c in cell.compactors})
    finally:
        store.close()
    rows = _rows(cell, found, seconds, error)
    if error is None and not any(r.lost or r.duplicated for r in rows):
        shutil.rmtree(work, ignore_errors=True)  # a finding keeps its files for a look
    return rows


def _wait(procs: dict[str, subprocess.Popen], coord: Path, deadline: float) -> str | None:
    """Wait for every process; on a failure or the deadline, stop the others; return what went wrong."""
    failed = None
    while any(p.poll() is None for p in procs.values()):
        for name, proc in procs.items():
            if proc.poll() not in (None, 0) and failed is None:
                assert proc.stderr is not None
                failed = f"{name} exited {proc.returncode}: {proc.stderr.read().decode(errors='replace')[-2000:]}"
                (coord / "stop").write_bytes(b"")
        if failed is None and time.monotonic() > deadline:
            failed = "timed out"
            (coord / "stop").write_bytes(b"")
            deadline = time.monotonic() + 60  # give them a minute to stop on their own
        elif failed is not None and time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for name, proc in procs.items():
        if proc.poll() not in (None, 0) and failed is None:
            assert proc.stderr is not None
            failed = f"{name} exited {proc.returncode}: {proc.stderr.read().decode(errors='replace')[-2000:]}"
    return failed


def _rows(cell: RaceCell, found: Any, seconds: float, error: str | None) -> list[RaceRow]:
    changed = {name: sum(r["changed"] for r in records) for name, records in found.compactions.items()}
    totals = {"cell_acknowledged": sum(len(d) for d in found.acknowledged.values()), "cell_lost": sum(found.lost.values()),
              "cell_compactions": sum(changed.values()), "cell_entries_at_end": found.entries_at_end,
              "cell_left_append_log": found.left_append_log, "cell_live_consistent": found.live_consistent,
              "seconds": round(seconds, 2), "error": error}
    common = {"strategy": cell.strategy, "persist": cell.persist, "seed": cell.seed}
    rows = [RaceRow(**common, role="writer", name=w.name, kind=w.kind, with_ids=w.with_ids,  # type: ignore[arg-type]
                    acknowledged=len(found.acknowledged[w.name]), lost=found.lost[w.name],
                    duplicated=found.duplicated[w.name], errors=found.waits[w.name], **totals) for w in cell.writers]
    for c in cell.compactors:
        records = found.compactions[c.name]
        rows.append(RaceRow(**common, role="compactor", name=c.name, kind=c.kind, compactions=changed[c.name],  # type: ignore[arg-type]
                            noop=sum(1 for r in records if not r["changed"] and not r["error"]),
                            errors=sum(1 for r in records if r["error"]),
                            summarized=sum(len(r["digests"]) for r in records), **totals))
    return rows


def run_race(strategies: Sequence[StrategySpec | str], size: RaceSize | str = "ci", seed: int = 0,
             base: str | os.PathLike[str] | None = None, persist: Sequence[str] = PERSIST_WAYS,
             progress: Any = None) -> list[RaceRow]:
    """Every cell of ``strategies`` (see :func:`plan_cells`), one after the other; all rows."""
    cells, rows = plan_cells(strategies, size, seed, persist)
    scratch = tempfile.mkdtemp(prefix="aptmem-race-", dir=base)
    for cell in cells:
        cell_rows = run_cell(cell, scratch)
        rows.extend(cell_rows)
        if progress is not None:
            progress(cell, cell_rows)
    if not os.listdir(scratch):  # every cell was clean (a cell with a finding keeps its folder)
        os.rmdir(scratch)
    return rows
