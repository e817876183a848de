"""The crash job: crash every strategy's writer both ways, recover, judge, store the table.

Process crashes: a real writer process appends a seeded workload and is SIGKILLed at seeded
random moments, during appends and during compaction; power losses: simulated on the bytes
(see :mod:`.power_loss`), by the model the strategy's YAML declares (``power_loss``). Every case
is recovered in a fresh process and judged against the strategy's own promise
(:mod:`experiments.core.crashsim.judge`). The job writes the tidy table ``recovery`` (parquet and
CSV, one row per case) and ``crash_notes.json`` (what was simulated how, and what was not, and
why); the report is built from those files alone (:mod:`.report`).

One server process per strategy (:mod:`.server`) does the crashing and the recovering, each
writer and each recovery in a process forked from it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from experiments.core.crashsim.judge import judge
from experiments.core.runfolder import LEADING_COLUMNS, RunFolder, RunMeta, read_measurement
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.core.strategy import CrashModel, Service, StrategySpec, capabilities
from experiments.measurements.crash.service_crash import CRASH_KIND, service_crash_cases
from experiments.measurements.crash.protocol import CrashCase, CrashJob, PolicySpec, PowerPlan, ServerInfo, ServerLine
from experiments.measurements.crash.settings import CrashSettings
from experiments.workloads import Workload, WorkloadRequest, workload_name

__all__ = ["RECOVERY_SCHEMA", "TRACE_HOW", "planned_cases", "power_how", "read_tables", "run_crash"]

#: The columns of the ``recovery`` table, in order.
RECOVERY_SCHEMA: dict[str, pl.DataType] = {
    **LEADING_COLUMNS,  # strategy, family, variant, durable
    "durability": pl.String(),  # the store's declared capabilities.durability
    "workload": pl.String(),  # the workload: synthetic | transcript
    "seed": pl.Int64(),  # CrashSettings.seed (the workload's own seed is in the notes)
    "commit": pl.String(),  # the code's commit (+dirty)
    "machine": pl.String(),  # host, CPU, OS, Python
    "crash_kind": pl.String(),  # process | power_loss
    "phase": pl.String(),  # append | compaction: where the writer was when it crashed
    "damage": pl.String(),  # power_loss: torn | zero | drop | middle; process: null
    "mode": pl.String(),  # the recovery mode recover() ran in
    "case": pl.Int64(),  # the kill or the power-loss moment, 0-based per strategy and kind
    "acknowledged": pl.Int64(),  # entries whose append had returned before the crash
    "recovered": pl.Int64(),  # entries read back after recovery (0 if not loadable)
    "lost": pl.Int64(),  # acknowledged entries not read back (all of them if not loadable)
    "allowed_loss": pl.Int64(),  # what the strategy's promise allows to lose here (null: no promise)
    "invented": pl.Int64(),  # entries read back that were not written in that order (altered or made up)
    "loadable": pl.Boolean(),  # recover() succeeded and the session could be read
    "bytes_discarded": pl.Int64(),  # RecoveryReport.discarded_bytes
    "recovery_ns": pl.Int64(),  # perf_counter_ns of opening the store and recover(), in the fresh process
    "violation": pl.Boolean(),  # the outcome broke the strategy's own promise
    "note": pl.String(),  # where the crash struck; why a case is judged as it is
}

#: How the ``trace`` model works, said for every strategy whose YAML gives no words of its own.
TRACE_HOW = ("the writer's os.open/write/fsync/fdatasync/replace/rename/unlink/ftruncate traced in its "
             "own process; durable = bytes at the last sync of each file, names as of the last folder fsync")


def power_how(model: CrashModel) -> str:
    """How a strategy's power loss is simulated (or why it is not), in words."""
    if model.model == "none":
        return model.reason
    return model.how or (TRACE_HOW if model.model == "trace" else "")


def _session_id(name: str) -> str:
    digest = hashlib.sha256(f"aptmem-crash:{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _damages(settings: CrashSettings, model: CrashModel) -> list[str]:
    """The damage kinds tried: a partial line spliced in (``middle``) needs a traced file to splice into."""
    return [d for d in settings.damages if d != "middle" or model.model == "trace"]


def _job(strategy: StrategySpec, settings: CrashSettings, workload: Workload, scratch: Path) -> tuple[CrashJob, str, int]:
    """The server's job for one strategy, its declared durability and how many recovery modes it offers."""
    caps = capabilities(strategy)
    default_mode = strategy.default_mode(caps)
    modes = tuple(caps.recovery_modes)
    power_modes = [m for m in settings.modes if m in modes] if len(modes) > 1 else [default_mode]
    job = CrashJob(
        strategy=strategy, session_id=_session_id(strategy.name), seed=settings.seed,
        workload=WorkloadRequest.of(workload, settings.entries), scratch=str(scratch),
        create_first=settings.create_first, kills=settings.kills, compaction_kills=settings.compaction_kills,
        policy=PolicySpec(window=settings.window, keep_turns=settings.keep_turns, persist=settings.persist),
        estimator=settings.estimator, default_mode=default_mode,
        power=PowerPlan(model=strategy.power_loss, images=settings.images,
                        damages=_damages(settings, strategy.power_loss), modes=power_modes),
        strategy_timeout_s=settings.strategy_timeout_s, recovery_timeout_s=settings.recovery_timeout_s,
    )
    return job, str(caps.durability), len(modes)


def planned_cases(strategies: Sequence[StrategySpec], settings: CrashSettings) -> int:
    """How many cases (rows) the job plans (for a progress bar; SQLite cuts can fall short)."""
    total = 0
    for strategy in strategies:
        total += settings.kills + settings.compaction_kills + (settings.server_kills if strategy.service else 0)
        if strategy.power_loss.model != "none":
            modes = len(settings.modes) if strategy.recovery_setting is not None else 1
            total += settings.images * len(_damages(settings, strategy.power_loss)) * modes
    return total


def _serve(job: CrashJob, stderr: Path) -> Iterator[ServerLine]:
    """Run the crash server on ``job``; yield its lines as they come.

    The server keeps its own deadlines; a watchdog kills it (by its pid) if it overruns them.
    """
    decoder = msgspec.json.Decoder(ServerLine)
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "experiments.measurements.crash.server"], cwd=REPO_ROOT,
                                env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        watchdog = threading.Timer(job.strategy_timeout_s + 60, proc.kill)
        watchdog.start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(msgspec.json.encode(job))
        proc.stdin.close()
        try:
            for line in proc.stdout:
                yield decoder.decode(line)
            proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        tail = stderr.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"crash server for {job.strategy.name} failed ({proc.returncode}):\n{tail}")


def run_crash(
    strategies: Sequence[StrategySpec],
    settings: CrashSettings,
    workload: Workload,
    out: Path | RunFolder,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
    services: Mapping[str, Service] | None = None,
) -> dict[str, pl.DataFrame]:
    """Crash, recover and judge every strategy; write ``recovery`` and the notes to ``out``.

    A strategy with a running service in ``services`` (by name) also has that service crashed
    mid-append ``settings.server_kills`` times (:mod:`.service_crash`); one that declares a
    service the run did not hand over is noted as not crashed.
    """
    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    base = Path(tempfile.mkdtemp(prefix="aptmem-crash-", dir=tmp))
    rows: list[dict[str, Any]] = []
    strategies_notes: dict[str, Any] = {}
    not_simulated: list[dict[str, str]] = []
    try:
        for strategy in strategies:
            name = strategy.name
            job, durability, offered = _job(strategy, settings, workload, base / name)
            model = strategy.power_loss
            if model.model == "none":
                not_simulated.append({"strategy": name, "crash_kind": "power_loss", "reason": model.reason})
            elif "middle" in settings.damages and "middle" not in job.power.damages:
                not_simulated.append({"strategy": name, "crash_kind": "power_loss", "damage": "middle",
                                      "reason": "a partial line spliced by another writer has no analogue in a "
                                                "modelled store's page format, and its locking keeps a second writer out"})
            fixed = {**strategy.columns(), "durability": durability, "workload": workload_name(workload),
                     "seed": settings.seed, "commit": folder.meta.commit, "machine": folder.meta.machine}
            server_info: dict[str, Any] = {}
            begun = time.perf_counter_ns()
            for line in _serve(job, base / f"{name}.stderr"):
                if isinstance(line, ServerInfo):
                    server_info = line.info
                    continue
                rows.append(_row(fixed, line, durability, offered))
                if progress is not None:
                    progress(1)
            if strategy.service is not None and settings.server_kills:
                service = (services or {}).get(name)
                if service is None:
                    not_simulated.append({"strategy": name, "crash_kind": CRASH_KIND,
                                          "reason": "its service was not handed to the crash job (run it through the harness)"})
                else:
                    for case in service_crash_cases(strategy, service, kills=settings.server_kills,
                                                    entries=settings.entries, seed=settings.seed, workload=workload,
                                                    mode=job.default_mode, scratch=base / name,
                                                    timeout_s=settings.strategy_timeout_s):
                        rows.append(_row(fixed, case, durability, offered))
                        if progress is not None:
                            progress(1)
            strategies_notes[name] = {"durability": durability, "durable": strategy.durable, "default_mode": job.default_mode,
                                      "power_model": model.model, "power_how": power_how(model),
                                      "power_caveat": model.caveat, **server_info,
                                      "seconds_total": round((time.perf_counter_ns() - begun) / 1e9, 2)}
            shutil.rmtree(base / name, ignore_errors=True)  # crash images add up: keep the scratch small
    finally:
        shutil.rmtree(base, ignore_errors=True)
    table = pl.DataFrame(rows, schema=RECOVERY_SCHEMA, orient="row") if rows else pl.DataFrame(schema=RECOVERY_SCHEMA)
    notes = _notes(settings, workload, folder.meta, strategies_notes, not_simulated, started)
    return folder.write("crash", {"recovery": table}, notes)


def _row(fixed: dict[str, Any], case: CrashCase, durability: str, offered: int) -> dict[str, Any]:
    """One table row from one server case, judged."""
    outcome = case.outcome
    verdict = judge(intended=case.intended, acked=case.acked, recovered=outcome.recovered,
                    loadable=outcome.loadable, live_ok=outcome.live_ok, durability=durability,
                    crash_kind=case.crash_kind, damage=case.damage, mode=outcome.mode, modes_offered=offered,
                    unsynced_acked=case.unsynced_acked)
    note = [case.note]
    if not outcome.loadable:
        refused = outcome.mode == "strict" and offered > 1
        note.append(("refused by strict, nothing changed: " if refused else "not loadable: ") + (outcome.error or "")[:160])
    if verdict.reason:
        note.append("VIOLATION: " + verdict.reason)
    return {**fixed, "crash_kind": case.crash_kind, "phase": case.phase, "damage": case.damage,
            "mode": outcome.mode, "case": case.case, "acknowledged": case.acked, "recovered": verdict.recovered,
            "lost": verdict.lost, "allowed_loss": verdict.allowed_loss, "invented": verdict.invented,
            "loadable": bool(outcome.loadable), "bytes_discarded": outcome.bytes_discarded,
            "recovery_ns": outcome.recovery_ns, "violation": verdict.violation, "note": "; ".join(filter(None, note))}


def _notes(settings: CrashSettings, workload: Workload, meta: RunMeta, strategies: dict[str, Any],
           not_simulated: list[dict[str, str]], started: int) -> dict[str, Any]:
    """What the run did, how, and what it left out (crash_notes.json)."""
    return {
        "commit": meta.commit, "machine": meta.machine, "seed": settings.seed, "workload_seed": workload.seed,
        "settings": dict(vars(settings)),
        "process_crash": ("a writer process forked from a per-strategy server appends the workload, announcing each "
                          "entry on a pipe before store.append and acknowledging it after (one os.write of an 18-byte "
                          "record each: a record written is in the kernel's pipe buffer and survives the SIGKILL); "
                          "kills aimed by a calibration run's timings; recovery in a fresh forked process in the "
                          "strategy's default mode, then iter_entries and read_live"),
        "compaction_phase": (f"every process-crash writer appends through aptmem.session.Session (window "
                             f"{settings.window} tokens, keep_turns {settings.keep_turns}, persist {settings.persist}), so "
                             "compactions fire; append kills are aimed at an entry's store.append, compaction kills half "
                             "anywhere in a compaction, half at its write"),
        "power_loss": ("per chosen append, the state after one random file-system call of it (or around one modelled "
                       "commit): current bytes and durable bytes per file; images: torn (unsynced tail kept to a "
                       "random byte), zero (NUL-filled from a random byte), drop (unsynced tail lost), middle (a "
                       "partial line spliced in at a line boundary of the current file)"),
        "strategies": strategies,
        "not_simulated": not_simulated,
        "server_crash": ("for a strategy that declares a service: a fresh writer process appends the workload, the "
                         "server's whole process group is SIGKILLed at a seeded moment (after a seeded acknowledgement, "
                         "plus up to 4 ms), then started again on its files (its WAL replayed), and the session "
                         "recovered in another fresh process; judged like a power loss"),
        "not_injected": ["compactions persisted by rewrite (atomic replace): covered by tests/test_compaction_crash.py "
                         "for aptmem's log, not by this job"],
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's crash table and notes back."""
    return read_measurement(run_dir, ["recovery"], "crash")
