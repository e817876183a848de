"""The crash-state explorer job: every strategy's append and compaction, every crash state, judged.

For each strategy and operation (:data:`~experiments.measurements.crash_explore.child.OPERATIONS`) a worker
records the file operations the strategy issues, enumerates the states a power loss could leave
(:mod:`experiments.measurements.crash_explore.states`: every prefix of the operations, the last write torn at every
byte, unsynced writes dropped, zero-filled or reordered, unsynced renames undone), recovers each
in the strategy's recovery modes and judges it against the strategy's own promise
(:mod:`experiments.measurements.crash_explore.check`); see :mod:`experiments.measurements.crash_explore.unit`.

Writes ``crash_states`` (one row per strategy, operation, state kind and recovery mode: states
explored and violations by kind), ``crash_state_examples`` (a few states per problem, in words),
both as parquet and CSV, and ``crash_explore_notes.json``. The report section is rebuilt from
those files alone (:mod:`experiments.measurements.crash_explore.report`).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import polars as pl

from aptmem.store import RECOVERY_MODES
from experiments.core.runfolder import LEADING_COLUMNS, RunFolder, RunMeta, read_measurement
from experiments.core.strategy import StrategySpec, capabilities
from experiments.measurements.crash_explore.check import VIOLATIONS
from experiments.measurements.crash_explore.child import APPENDING, CONCURRENT, OPERATIONS
from experiments.measurements.crash_explore.protocol import ExploreUnit, UnitResult
from experiments.measurements.crash_explore.settings import CrashExploreSettings
from experiments.measurements.crash_explore.states import KINDS
from experiments.measurements.crash_explore.unit import COUNTS, explore_unit
from experiments.workloads import Workload, WorkloadRequest, workload_name

__all__ = ["EXAMPLES_SCHEMA", "STATES_SCHEMA", "TABLES", "planned_units", "read_tables", "run_crash_explore"]

TABLES = ("crash_states", "crash_state_examples")


#: The columns of ``crash_states``, in order.
STATES_SCHEMA: dict[str, pl.DataType] = {
    **LEADING_COLUMNS,  # strategy, family, variant, durable
    "durability": pl.String(),  # capabilities.durability: per_append | batch | process | none
    "operation": pl.String(),  # append | compaction_append | compaction_rewrite | compaction_amid_appends
    "kind": pl.String(),  # crash state kind: prefix | torn | torn_zero | zero | dropped | reordered | undone
    "mode": pl.String(),  # the recovery mode the states were recovered in
    "default_mode": pl.Boolean(),  # mode is the strategy's default (what an agent gets)
    "enumerated": pl.Int64(),  # crash states of this kind enumerated (before the max_states budget)
    "states": pl.Int64(),  # crash states explored (recovered and judged)
    "violations": pl.Int64(),  # states that broke the promise in any way
    **{kind: pl.Int64() for kind in VIOLATIONS},  # states with that violation
    "states_unloadable": pl.Int64(),  # states not loadable (violation or not)
    "states_refused": pl.Int64(),  # of those, refused by a refusing mode's contract (data left on disk)
    "states_lossy": pl.Int64(),  # states losing acknowledged entries (within the promise or not)
    "states_lossy_allowed": pl.Int64(),  # of those, states that broke no promise (a weaker promise allows the loss)
    "acked_lost": pl.Int64(),  # acknowledged entries lost, summed over the states
    "acked_lost_max": pl.Int64(),  # most acknowledged entries one state lost
    "good_lines_discarded": pl.Int64(),  # good lines the recovery cut (point_in_time), summed
    "ops": pl.Int64(),  # file operations the strategy issued for the operation
    "tracer": pl.String(),  # fs_model (Python calls, traced in-process) | strace (system calls)
    "entries": pl.Int64(),  # entries in the session before the operation
    "appends": pl.Int64(),  # entries the append operation appended
    "torn_max": pl.Int64(),  # torn bytes per write at most (every byte below that)
    "max_subsets": pl.Int64(),  # subsets of unsynced operations per crash point at most
    "max_states": pl.Int64(),  # states explored per strategy and operation at most (0: all)
    "seed": pl.Int64(),  # CrashExploreSettings.seed
    "commit": pl.String(),  # the code's commit (+dirty)
    "machine": pl.String(),  # host, CPU, OS, Python
}

#: The columns of ``crash_state_examples``, in order.
EXAMPLES_SCHEMA: dict[str, pl.DataType] = {
    "strategy": pl.String(), "durability": pl.String(), "operation": pl.String(), "mode": pl.String(),
    "kind": pl.String(),  # the state's kind
    "point": pl.Int64(),  # the crash came after this many operations
    "problem": pl.String(),  # the first violation, or refused | unloadable | good_lines_discarded | lost_acked
    "violation": pl.Boolean(), "violations": pl.String(),  # every violation kind, comma-separated
    "matched": pl.String(),  # the version read back: old | new | +j appended | other | - (not loadable)
    "lost_acked": pl.Int64(), "detail": pl.String(),  # where the crash struck and what the disk lost
    "error": pl.String(),  # the recovery's error, if any
}


def _ram_disk() -> str | None:
    """/dev/shm if it is a writable folder (Linux), else None (the system's temp folder)."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _session_id(name: str) -> str:
    digest = hashlib.sha256(f"aptmem-crash-explore:{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _units(strategies: Sequence[StrategySpec], settings: CrashExploreSettings, workload: Workload, base: Path,
           strace_problem: str | None) -> tuple[list[ExploreUnit], dict[str, Any], list[dict[str, str]]]:
    """The work: one unit per (strategy, operation); the strategies' facts; what was skipped and why."""
    units, facts, skipped = [], {}, []
    for strategy in strategies:
        name = strategy.name
        if strategy.tracer == "strace" and (strace_problem or not settings.strace):
            skipped.append({"strategy": name, "reason": strace_problem or "crash_explore.strace is false"})
            continue
        caps = capabilities(strategy)
        offered = tuple(caps.recovery_modes)
        default = strategy.default_mode(caps)
        others = [m for m in settings.modes if m in offered and m != default] if len(offered) > 1 else []
        modes = [default, *others]
        facts[name] = {"durability": str(caps.durability), "default_mode": default, "modes": modes,
                       "tracer": strategy.tracer, "explain": {"within_promise": strategy.explain.within_promise,
                                                              "violations": strategy.explain.violations},
                       "spec": strategy}
        for operation in settings.operations:
            if operation in CONCURRENT and not caps.multi_process_safe:
                skipped.append({"strategy": name, "operation": operation,
                                "reason": "not safe for several processes (multi_process_safe is false): no concurrent writer"})
                continue
            units.append(ExploreUnit(
                strategy=strategy, operation=operation, session_id=_session_id(name), entries=settings.entries,
                appends=settings.appends,
                workload=WorkloadRequest.of(workload, settings.entries + settings.appends * (operation in APPENDING)),
                window=settings.window, keep_turns=settings.keep_turns, estimator=settings.estimator,
                scratch=str(base / f"{name}-{operation}"), modes=modes, modes_offered=len(offered),
                torn_max=settings.torn_max, max_subsets=settings.max_subsets, max_states=settings.max_states,
                seed=settings.seed, examples=settings.examples, state_timeout_s=settings.state_timeout_s,
                record_timeout_s=settings.record_timeout_s,
            ))
    return units, facts, skipped


def planned_units(strategies: Sequence[StrategySpec], settings: CrashExploreSettings) -> int:
    """How many (strategy, operation) units the job plans (for a progress bar)."""
    return len(strategies) * len(settings.operations)


def _run_units(units: list[ExploreUnit], workers: int, progress: Callable[[int], object] | None) -> list[UnitResult]:
    """Explore every unit in worker processes (spawned: the harness process has threads)."""
    results = []
    # Traced units are the slowest (a traced process, then a database opened per state): first.
    order = sorted(units, key=lambda u: u.strategy.tracer != "strace")
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(explore_unit, unit) for unit in order]
        for future in as_completed(futures):
            results.append(future.result())
            if progress is not None:
                progress(1)
    return results


def run_crash_explore(
    strategies: Sequence[StrategySpec],
    settings: CrashExploreSettings,
    workload: Workload,
    out: Path | RunFolder,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Explore every strategy's crash states; write the tables and the notes to ``out``."""
    from experiments.measurements.crash_explore.strace import strace_problem

    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    problem = strace_problem() if settings.strace else None
    scratch = tmp or settings.tmp or _ram_disk()
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="aptmem-crash-explore-", dir=scratch)))
    try:
        units, facts, skipped = _units(strategies, settings, workload, base, problem)
        if progress is not None and len(units) < planned_units(strategies, settings):
            progress(planned_units(strategies, settings) - len(units))  # the skipped ones
        workers = settings.workers or os.cpu_count() or 1
        results = _run_units(units, min(workers, max(1, len(units))), progress) if units else []
    finally:
        shutil.rmtree(base, ignore_errors=True)
    states, examples = _tables(results, facts, settings, folder.meta)
    notes = _notes(settings, workload, facts, results, skipped, started)
    return folder.write("crash_explore", {"crash_states": states, "crash_state_examples": examples}, notes)


def _tables(results: list[UnitResult], facts: dict[str, Any], settings: CrashExploreSettings,
            meta: RunMeta) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The two tables from the units' results, in strategy, operation, kind, mode order."""
    order = {name: i for i, name in enumerate(facts)}
    rank = {"operation": {o: i for i, o in enumerate(OPERATIONS)}, "kind": {k: i for i, k in enumerate(KINDS)}}
    rows, examples = [], []
    for result in results:
        fact = facts[result.strategy]
        spec: StrategySpec = fact["spec"]
        fixed = {**spec.columns(), "durability": result.info["durability"], "operation": result.operation}
        for row in result.rows:
            rows.append({**fixed, "kind": row["kind"], "mode": row["mode"],
                         "default_mode": row["mode"] == fact["default_mode"],
                         "enumerated": row["enumerated"], "states": row["states"], **{c: row[c] for c in COUNTS},
                         "ops": result.info["ops"],
                         "tracer": fact["tracer"], "entries": settings.entries,
                         "appends": settings.appends if result.operation in APPENDING else 0,
                         "torn_max": settings.torn_max, "max_subsets": settings.max_subsets,
                         "max_states": settings.max_states, "seed": settings.seed,
                         "commit": meta.commit, "machine": meta.machine})
        for example in result.examples:
            examples.append({"strategy": spec.name, "durability": fixed["durability"],
                             "operation": result.operation, **example})
    modes = {m: i for i, m in enumerate(RECOVERY_MODES)}

    def key(row: dict[str, Any]) -> tuple[int, int, int, int, int]:
        return (order[row["strategy"]], rank["operation"][row["operation"]], rank["kind"].get(row["kind"], 99),
                0 if row.get("default_mode", True) else 1 + modes.get(row["mode"], 9), row.get("point", 0))

    states = pl.DataFrame(sorted(rows, key=key), schema=STATES_SCHEMA) if rows else pl.DataFrame(schema=STATES_SCHEMA)
    ex = (pl.DataFrame([{k: e[k] for k in EXAMPLES_SCHEMA} for e in sorted(examples, key=key)], schema=EXAMPLES_SCHEMA)
          if examples else pl.DataFrame(schema=EXAMPLES_SCHEMA))
    return states, ex


def _notes(settings: CrashExploreSettings, workload: Workload, facts: dict[str, Any], results: list[UnitResult],
           skipped: list[dict[str, str]], started: int) -> dict[str, Any]:
    """What was explored how, and what was left out (crash_explore_notes.json)."""
    units = {f"{r.strategy}/{r.operation}": r.info for r in results}
    return {
        "seed": settings.seed,
        "workload": workload_name(workload), "workload_seed": workload.seed,
        "settings": dict(vars(settings)),
        "strategies": {name: {k: v for k, v in fact.items() if k != "spec"} for name, fact in facts.items()},
        "units": dict(sorted(units.items())),
        "skipped": skipped,
        "model": ("POSIX, as a power loss plays it: a file's data (writes, truncates) is durable once a later "
                  "fsync/fdatasync of that file was issued, and until then any subset of it may be on disk, in any "
                  "order, a write torn or NUL-filled; a name (create, rename, unlink) is durable once a later fsync of "
                  "its folder was issued, and until then may be undone (name operations survive in the order issued); "
                  "data and names are independent. The state before the operation is taken as durable."),
        "tracers": {"fs_model": "the strategy's Python-level os calls, replaced on the os module in a forked writer "
                                "(experiments/core/crashsim/fs_model.py)",
                    "strace": "the writer's system calls (strace -xx -X raw, every byte written), parsed into the same "
                              "operations (experiments/measurements/crash_explore/strace.py); files a strategy declares "
                              "as holding no data (ignore_files) are left out"},
        "torn_sampling": (f"a write of up to {settings.torn_max + 1} bytes is torn at every byte; a longer one at "
                          f"{settings.torn_max} seeded bytes ({sum(i['writes_sampled'] for i in units.values())} of "
                          f"{sum(i['op_kinds'].get('write', 0) for i in units.values())} writes sampled)"),
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's crash-state tables and notes back."""
    return read_measurement(run_dir, TABLES, "crash_explore")
