"""One unit of the crash-state explorer: record one strategy's operation, then explore its crash states.

:func:`explore_unit` runs in a worker process of :mod:`experiments.measurements.crash_explore.job`:

1. record the operation's file operations (:mod:`experiments.measurements.crash_explore.child`): through
   :class:`~experiments.core.crashsim.fs_model.FsModel` in a forked child for the Python-level strategies, under
   strace for SQLite (:mod:`experiments.measurements.crash_explore.strace`);
2. check the log against the files the operation really left (replaying every operation must
   give them back byte for byte: a call the recorder missed would show here, not as a false result);
3. enumerate the crash states (:mod:`experiments.measurements.crash_explore.states`), lay each out in a folder of its
   own, recover it in each recovery mode and judge it (:mod:`experiments.measurements.crash_explore.check`);
4. return one aggregate per (state kind, recovery mode) and a few example states per problem.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import msgspec

from experiments.core.crashsim.images import write_image
from experiments.core.crashsim.oplog import OpLog, replay
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.measurements.crash_explore.check import VIOLATIONS, Expectation, Outcome, judge_state, recover_state
from experiments.measurements.crash_explore.child import Recording, record_in_fork
from experiments.measurements.crash_explore.protocol import ExploreUnit, OperationJob, UnitResult
from experiments.measurements.crash_explore.states import Limits, StateSpec, choose, enumerate_states, materialize

__all__ = ["COUNTS", "explore_unit", "record", "check_log"]

#: The per-(kind, mode) counters a unit returns, besides ``states``.
COUNTS = ("violations", *VIOLATIONS, "states_unloadable", "states_refused", "states_lossy", "states_lossy_allowed",
          "acked_lost", "acked_lost_max", "good_lines_discarded")


def _record_traced(job: OperationJob, folder: Path, timeout: float) -> Recording:
    """Run the operation under strace and parse its calls (a store whose file I/O is C code)."""
    from experiments.measurements.crash_explore.strace import parse_trace, trace_command

    folder.mkdir(parents=True, exist_ok=True)
    marks = folder / "marks-never-created"
    job_path, out, trace = folder / "job.json", folder / "recording.json", folder / "trace.txt"
    job_path.write_bytes(msgspec.json.encode(msgspec.structs.replace(job, marks=str(marks))))
    done = subprocess.run(trace_command(trace, job_path, out), cwd=REPO_ROOT, env=child_env(), capture_output=True,
                          timeout=timeout)
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"the traced operation failed ({done.returncode}): {tail}")
    recording = msgspec.json.decode(out.read_bytes(), type=Recording)
    with trace.open(encoding="ascii", errors="replace") as lines:
        recording.log = parse_trace(lines, job.root, str(marks), recording.initial, tuple(job.unit.strategy.ignore_files))
    trace.unlink()  # page-sized writes in hex: megabytes, needed no more
    return recording


def record(job: OperationJob, folder: Path, timeout: float) -> Recording:
    """Record the operation of ``job`` with the tracer its strategy declares (``fs_model`` or ``strace``)."""
    if job.unit.strategy.tracer == "strace":
        return _record_traced(job, folder, timeout)
    return record_in_fork(job, timeout)


def check_log(log: OpLog, final: dict[str, bytes]) -> None:
    """Raise if replaying the whole log does not give the files the operation left."""
    replayed = replay(log)
    if replayed != final:
        differ = sorted(n for n in set(replayed) | set(final) if replayed.get(n) != final.get(n))
        raise RuntimeError(f"the recorded operations do not replay to the files left: {', '.join(differ)} differ "
                           "(a file-system call the recorder does not see?)")


class _Tally:
    """Counters per (kind, mode) and a few examples per (mode, problem)."""

    def __init__(self, examples: int) -> None:
        self.rows: dict[tuple[str, str], dict[str, int]] = {}
        self.enumerated: dict[str, int] = {}  # states per kind before the budget
        self.examples: list[dict[str, Any]] = []
        self._shown: dict[tuple[str, str], int] = {}
        self.limit = examples

    def add(self, spec: StateSpec, mode: str, outcome: Outcome, log: OpLog) -> None:
        row = self.rows.setdefault((spec.kind, mode), {"states": 0, **{c: 0 for c in COUNTS}})
        row["states"] += 1
        row["violations"] += bool(outcome.violations)
        for kind in outcome.violations:
            row[kind] += 1
        row["states_unloadable"] += not outcome.loadable
        row["states_refused"] += outcome.refused
        row["states_lossy"] += outcome.lost_acked > 0
        row["states_lossy_allowed"] += outcome.lost_acked > 0 and not outcome.violations
        row["acked_lost"] += outcome.lost_acked
        row["acked_lost_max"] = max(row["acked_lost_max"], outcome.lost_acked)
        row["good_lines_discarded"] += outcome.good_lines_discarded
        problem = (outcome.violations[0] if outcome.violations else "refused" if outcome.refused
                   else "unloadable" if not outcome.loadable else "good_lines_discarded" if outcome.good_lines_discarded
                   else "lost_acked" if outcome.lost_acked else "")
        if problem and self._shown.get((mode, problem), 0) < self.limit:
            self._shown[(mode, problem)] = self._shown.get((mode, problem), 0) + 1
            self.examples.append({"kind": spec.kind, "mode": mode, "point": spec.point, "problem": problem,
                                  "violation": bool(outcome.violations), "violations": ",".join(outcome.violations),
                                  "matched": outcome.matched, "lost_acked": outcome.lost_acked,
                                  "detail": spec.detail(log), "error": (outcome.error or "")[:300]})


def explore_unit(unit: ExploreUnit) -> UnitResult:
    """Record, check and explore one (strategy, operation); return aggregates, examples and facts."""
    started = time.perf_counter_ns()
    scratch = Path(unit.scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    job = OperationJob(unit=unit, root=str(scratch / "writer"))
    try:
        recording = record(job, scratch / "trace", unit.record_timeout_s)
        log = recording.log
        assert log is not None
        check_log(log, recording.final)
        exp = Expectation.build(unit.operation, recording.durability, recording.old, recording.new,
                                recording.intended, unit.modes_offered)
        limits = Limits(unit.torn_max, unit.max_subsets, f"{unit.seed}:{unit.strategy.name}:{unit.operation}")
        tally = _Tally(unit.examples)
        root = scratch / "state"
        recorded_ns = time.perf_counter_ns()
        specs = list(enumerate_states(log, limits))
        chosen = choose(specs, unit.max_states, random.Random(f"{limits.seed}:budget"))
        for spec in specs:
            tally.enumerated[spec.kind] = tally.enumerated.get(spec.kind, 0) + 1
        for spec in chosen:
            image: dict[str, bytes | None] = dict(materialize(log, spec))
            acked = log.acked_at(spec.point)
            synced = log.synced_written(spec.point, floor=exp.prefix)
            for mode in unit.modes:
                write_image(root, image)
                result = recover_state(unit.strategy.in_mode(mode), unit.session_id, str(root), mode,
                                       unit.state_timeout_s)
                if result.error:  # scratch paths differ per run and say nothing
                    result.error = result.error.replace(f"{root}/", "").replace(str(root), "<root>")
                tally.add(spec, mode, judge_state(exp, result, acked=acked, synced=synced, mode=mode), log)
                shutil.rmtree(root)
        kinds = {}
        for op in log.ops:
            name = type(op).__name__.lower()
            kinds[name] = kinds.get(name, 0) + 1
        info = {"durability": recording.durability, "ops": len(log.ops), "op_kinds": kinds,
                "bytes_written": sum(len(getattr(op, "data", b"")) for op in log.ops),
                "writes_sampled": sum(len(getattr(op, "data", b"")) - 1 > limits.torn_max for op in log.ops),
                "entries_before": exp.prefix, "entries_after": len(exp.versions[-1]),
                "states_enumerated": len(specs), "states_explored": len(chosen),
                "record_s": round((recorded_ns - started) / 1e9, 2),
                "explore_s": round((time.perf_counter_ns() - recorded_ns) / 1e9, 2)}
        for kind in tally.enumerated:  # a kind the budget left no state of still shows what was enumerated
            for mode in unit.modes:
                tally.rows.setdefault((kind, mode), {"states": 0, **{c: 0 for c in COUNTS}})
        rows = [{"kind": kind, "mode": mode, "enumerated": tally.enumerated[kind], **counts}
                for (kind, mode), counts in tally.rows.items()]
        return UnitResult(strategy=unit.strategy.name, operation=unit.operation, rows=rows, examples=tally.examples,
                          info=info)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
