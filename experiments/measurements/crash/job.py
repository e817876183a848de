"""The crash job: crash every strategy's writer both ways, recover, judge, store the table.

Process crashes: a real writer process appends a seeded workload and is SIGKILLed at seeded
random moments, during appends and during compaction; power losses: simulated on the bytes
(see :mod:`experiments.measurements.crash.power_loss`). Every case is recovered in a fresh process and judged
against the strategy's own promise (:mod:`experiments.core.crashsim.judge`). The job writes the tidy
table ``recovery`` (parquet and CSV, one row per case) and ``crash_notes.json`` (what was
simulated how, and what was not, and why); the report is built from those files alone
(:mod:`experiments.measurements.crash.report`).

One server process per strategy (:mod:`experiments.measurements.crash.server`) does the crashing and the
recovering, each writer and each recovery in a process forked from it.
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from aptmem.store import RECOVERY_MODES
from experiments.core.crashsim.judge import judge
from experiments.measurements.crash.power_loss import DAMAGES
from experiments.core.runfolder import read_measurement, write_measurement
from experiments.core.runinfo import REPO_ROOT, run_metadata
from experiments.core.strategy import build_store, load_strategy
from experiments.workloads.synthetic import WorkloadConfig
from experiments.workloads.transcripts import workload_name, workload_spec
from experiments.measurements.write_cost.samples import strategy_info

__all__ = ["CrashSettings", "PRESETS", "RECOVERY_SCHEMA", "power_model", "planned_cases", "run_crash", "read_tables"]


@dataclass(kw_only=True)
class CrashSettings:
    """How crashes are injected (a plain dataclass: also the Hydra schema of ``crash``)."""

    #: SIGKILLs of the writer per strategy, at seeded random moments during appends
    kills: int = 4
    #: SIGKILLs per strategy during a compaction (the writer appends through a Session)
    compaction_kills: int = 2
    #: power-loss moments per strategy; each gives one image per damage kind
    images: int = 3
    #: entries the writer appends: the first N entries of the workload
    entries: int = 200
    #: seed of the kill moments, the power-loss moments and the damage
    seed: int = 0
    #: context window (tokens) of the compaction-phase Session: small, so compaction fires often
    window: int = 8000
    #: turns a compaction keeps verbatim in the compaction phase
    keep_turns: int = 3
    #: how the compaction is persisted in the compaction phase (only append is judged)
    persist: str = "append"
    #: token estimator tier of the compaction-phase Session
    estimator: str = "medium"
    #: damage kinds of the power-loss images (torn, zero, drop, middle)
    damages: list[str] = field(default_factory=lambda: list(DAMAGES))
    #: recovery modes each power-loss image is recovered in, where a store offers several (JSONL)
    modes: list[str] = field(default_factory=lambda: list(RECOVERY_MODES))
    #: the writer creates the session with store.create() first (as `aptmem new` does);
    #: false: its first append creates it
    create_first: bool = True
    #: seconds one strategy's crashes and recoveries may take in all before the job fails
    strategy_timeout_s: float = 300.0
    #: seconds one recovery may take before it is recorded as not loadable (hung)
    recovery_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if min(self.kills, self.compaction_kills, self.images) < 0 or self.entries < 2:
            raise ValueError("kills, compaction_kills and images must be >= 0, entries >= 2")
        if unknown := set(self.damages) - set(DAMAGES):
            raise ValueError(f"unknown damage kinds {sorted(unknown)}; choose from {', '.join(DAMAGES)}")
        if unknown := set(self.modes) - set(RECOVERY_MODES):
            raise ValueError(f"unknown recovery modes {sorted(unknown)}; choose from {', '.join(RECOVERY_MODES)}")
        if self.persist != "append":
            raise ValueError("the crash job judges compactions persisted by append only (rewrite: see the notes)")


#: Named settings: ``default`` takes seconds per strategy; ``recovery`` many more cases.
PRESETS: dict[str, CrashSettings] = {
    "default": CrashSettings(),
    "recovery": CrashSettings(kills=40, compaction_kills=20, images=20, entries=400),
}

#: The columns of the ``recovery`` table, in order.
RECOVERY_SCHEMA: dict[str, pl.DataType] = {
    "strategy": pl.String(),  # config name, e.g. jsonl_always
    "family": pl.String(),  # jsonl | sqlite | full_json
    "variant": pl.String(),  # the store's settings, "key=value;..." in config order
    "durable": pl.Boolean(),  # the config's promise: acknowledged appends survive a power loss
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

_SQLITE_CAVEAT = ("optimistic: synchronous=OFF never syncs the database file at checkpoints either; "
                  "pages a checkpoint wrote are assumed on disk")


def power_model(family: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """How a strategy's power loss is simulated: ``trace`` (its Python-level syscalls), ``sqlite_wal``
    (SQLite's documented WAL rules, with the unsynced ``region``), or ``none`` with the reason."""
    if family in ("jsonl", "full_json"):
        return {"model": "trace", "lines": family == "jsonl",
                "how": "the writer's os.open/write/fsync/fdatasync/replace/rename/unlink/ftruncate traced in its "
                       "own process; durable = bytes at the last sync of each file, names as of the last folder fsync"}
    if family == "sqlite":
        journal, sync = str(kwargs.get("journal_mode", "")).upper(), str(kwargs.get("synchronous", "")).upper()
        if journal == "WAL" and sync == "FULL":
            return {"model": "sqlite_wal", "region": "last_commit", "lines": False,
                    "how": "modelled (SQLite docs): the WAL is synced at every commit, so a power loss during commit k "
                           "can lose only commit k's frames: they are torn, zero-filled or dropped"}
        if journal == "WAL":
            model = {"model": "sqlite_wal", "region": "since_checkpoint", "lines": False,
                     "how": f"modelled (SQLite docs): with synchronous={sync} the WAL is synced only at checkpoints, so "
                            "every frame since the last one is unsynced: torn, zero-filled or dropped"}
            if sync == "OFF":
                model["caveat"] = _SQLITE_CAVEAT
            return model
        reason = ("not simulated: a power loss matters only mid-commit, when SQLite's hot rollback journal holds the "
                  "pages being overwritten; those writes happen in C and are invisible to Python, and between "
                  "commits nothing is unsynced") if sync != "OFF" else (
                  "not simulated: with synchronous=OFF nothing is ever synced and the database file is written in "
                  "place, page by page; which pages reach the disk cannot be modelled on bytes without page-level tracking")
        return {"model": "none", "reason": reason}
    return {"model": "none", "reason": f"no power-loss model for the {family} family"}


def _session_id(name: str) -> str:
    digest = hashlib.sha256(f"aptmem-crash:{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _config(strategy: str | Any) -> Any:
    """A strategy config from its name, or the composed config itself (overrides included)."""
    return load_strategy(strategy) if isinstance(strategy, str) else strategy


def _describe(strategy: str | Any) -> tuple[Any, dict[str, Any], str, tuple[str, ...], dict[str, Any]]:
    """A strategy's info, store spec, declared durability, recovery modes and power model."""
    from omegaconf import OmegaConf

    cfg = _config(strategy)
    store = OmegaConf.to_container(cfg.store, resolve=True)
    assert isinstance(store, dict)
    spec = {"target": store.pop("_target_"), "kwargs": store}
    probe = tempfile.mkdtemp(prefix="crash-probe-")
    try:
        built = build_store(cfg, probe)
        caps = built.capabilities
        built.close()
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return cfg, spec, str(caps.durability), tuple(caps.recovery_modes), power_model(str(cfg.family), store)


def _job(strategy: str | Any, settings: CrashSettings, workload: WorkloadConfig, scratch: Path) -> tuple[dict[str, Any], Any, str, int]:
    """The server's job for one strategy, and the strategy's info, durability and number of modes."""
    cfg, spec, durability, modes, power = _describe(strategy)
    name = str(cfg.name)
    default_mode = str(spec["kwargs"].get("recovery", modes[0]))
    power_modes = [m for m in settings.modes if m in modes] if len(modes) > 1 else [default_mode]
    damages = [d for d in settings.damages if d != "middle" or power["model"] == "trace"]
    job = {
        "strategy": name, "store": spec, "session_id": _session_id(name), "seed": settings.seed,
        "workload": workload_spec(workload, settings.entries), "scratch": str(scratch),
        "create_first": settings.create_first, "kills": settings.kills, "compaction_kills": settings.compaction_kills,
        "policy": {"window": settings.window, "keep_turns": settings.keep_turns, "persist": settings.persist},
        "estimator": settings.estimator, "default_mode": default_mode,
        "power": {**power, "images": settings.images, "damages": damages, "modes": power_modes},
        "strategy_timeout_s": settings.strategy_timeout_s, "recovery_timeout_s": settings.recovery_timeout_s,
    }
    return job, cfg, durability, len(modes)


def planned_cases(names: Sequence[str | Any], settings: CrashSettings) -> int:
    """How many cases (rows) the job plans (for a progress bar; SQLite cuts can fall short)."""
    total = 0
    for name in names:
        cfg = _config(name)
        store = {k: v for k, v in cfg.store.items() if k != "_target_"}
        power = power_model(str(cfg.family), store)
        total += settings.kills + settings.compaction_kills
        if power["model"] != "none":
            damages = [d for d in settings.damages if d != "middle" or power["model"] == "trace"]
            modes = len(settings.modes) if "recovery" in store else 1
            total += settings.images * len(damages) * modes
    return total


def _serve(job: dict[str, Any], stderr: Path) -> Iterator[dict[str, Any]]:
    """Run the crash server on ``job``; yield its lines as they come.

    The server keeps its own deadlines; a watchdog kills it (by its pid) if it overruns them.
    """
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "experiments.measurements.crash.server"], cwd=REPO_ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        watchdog = threading.Timer(job["strategy_timeout_s"] + 60, proc.kill)
        watchdog.start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(msgspec.json.encode(job))
        proc.stdin.close()
        try:
            for line in proc.stdout:
                yield msgspec.json.decode(line)
            proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        tail = stderr.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"crash server for {job['strategy']} failed ({proc.returncode}):\n{tail}")


def run_crash(
    strategies: Sequence[str | Any],
    settings: CrashSettings,
    workload: WorkloadConfig,
    out: Path,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Crash, recover and judge every strategy in ``strategies``; write ``recovery`` and the notes to ``out``."""
    started = time.perf_counter_ns()
    meta = run_metadata()
    base = Path(tempfile.mkdtemp(prefix="aptmem-crash-", dir=tmp))
    rows: list[dict[str, Any]] = []
    strategies_notes: dict[str, Any] = {}
    not_simulated: list[dict[str, str]] = []
    try:
        for strategy in strategies:
            name = str(_config(strategy).name)
            job, cfg, durability, offered = _job(strategy, settings, workload, base / name)
            info = strategy_info(cfg)
            power = job["power"]
            if power["model"] == "none":
                not_simulated.append({"strategy": name, "crash_kind": "power_loss", "reason": power["reason"]})
            elif "middle" in settings.damages and "middle" not in power["damages"]:
                not_simulated.append({"strategy": name, "crash_kind": "power_loss", "damage": "middle",
                                      "reason": "a partial line spliced by another writer has no analogue in SQLite's "
                                                "page format, and SQLite's locking keeps a second writer out"})
            fixed = {"strategy": info.strategy, "family": info.family, "variant": info.variant, "durable": info.durable,
                     "durability": durability, "workload": workload_name(workload), "seed": settings.seed,
                     "commit": meta["commit"], "machine": meta["machine"]}
            server_info: dict[str, Any] = {}
            begun = time.perf_counter_ns()
            for line in _serve(job, base / f"{name}.stderr"):
                if "info" in line:
                    server_info = line["info"]
                    continue
                rows.append(_row(fixed, line, durability, offered))
                if progress is not None:
                    progress(1)
            strategies_notes[name] = {"durability": durability, "durable": info.durable, "default_mode": job["default_mode"],
                                      "power_model": power.get("model"), "power_how": power.get("how", power.get("reason")),
                                      "power_caveat": power.get("caveat"), **server_info,
                                      "seconds_total": round((time.perf_counter_ns() - begun) / 1e9, 2)}
            shutil.rmtree(base / name, ignore_errors=True)  # crash images add up: keep the scratch small
    finally:
        shutil.rmtree(base, ignore_errors=True)
    table = pl.DataFrame(rows, schema=RECOVERY_SCHEMA, orient="row") if rows else pl.DataFrame(schema=RECOVERY_SCHEMA)
    notes = _notes(settings, workload, meta, strategies_notes, not_simulated, started)
    return write_measurement(out, {"recovery": table}, "crash", notes)


def _row(fixed: dict[str, Any], case: dict[str, Any], durability: str, offered: int) -> dict[str, Any]:
    """One table row from one server case, judged."""
    verdict = judge(intended=case["intended"], acked=case["acked"], recovered=case["recovered"],
                    loadable=case["loadable"], live_ok=case["live_ok"], durability=durability,
                    crash_kind=case["crash_kind"], damage=case["damage"], mode=case["mode"], modes_offered=offered,
                    unsynced_acked=case["unsynced_acked"])
    note = [case["note"]]
    if not case["loadable"]:
        refused = case["mode"] == "strict" and offered > 1
        note.append(("refused by strict, nothing changed: " if refused else "not loadable: ") + (case["error"] or "")[:160])
    if verdict.reason:
        note.append("VIOLATION: " + verdict.reason)
    return {**fixed, "crash_kind": case["crash_kind"], "phase": case["phase"], "damage": case["damage"],
            "mode": case["mode"], "case": case["case"], "acknowledged": case["acked"], "recovered": verdict.recovered,
            "lost": verdict.lost, "allowed_loss": verdict.allowed_loss, "invented": verdict.invented,
            "loadable": bool(case["loadable"]), "bytes_discarded": case["bytes_discarded"],
            "recovery_ns": case["recovery_ns"], "violation": verdict.violation, "note": "; ".join(filter(None, note))}


def _notes(settings: CrashSettings, workload: WorkloadConfig, meta: dict[str, str], strategies: dict[str, Any],
           not_simulated: list[dict[str, str]], started: int) -> dict[str, Any]:
    """What the run did, how, and what it left out (crash_notes.json)."""
    return {
        "commit": meta["commit"], "machine": meta["machine"], "seed": settings.seed, "workload_seed": workload.seed,
        "settings": {k: v for k, v in vars(settings).items()},
        "process_crash": ("a writer process forked from a per-strategy server appends the workload, announcing each "
                          "entry on a pipe before store.append and acknowledging it after (one os.write of an 18-byte "
                          "record each: a record written is in the kernel's pipe buffer and survives the SIGKILL); "
                          "kills aimed by a calibration run's timings; recovery in a fresh forked process in the "
                          "strategy's default mode, then iter_entries and read_live"),
        "compaction_phase": (f"every process-crash writer appends through aptmem.session.Session (window "
                             f"{settings.window} tokens, keep_turns {settings.keep_turns}, persist {settings.persist}), so "
                             "compactions fire; append kills are aimed at an entry's store.append, compaction kills half "
                             "anywhere in a compaction, half at its write"),
        "power_loss": ("per chosen append, the state after one random file-system call of it (or around one SQLite "
                       "commit): current bytes and durable bytes per file; images: torn (unsynced tail kept to a "
                       "random byte), zero (NUL-filled from a random byte), drop (unsynced tail lost), middle (a "
                       "partial line spliced in at a line boundary of the current file)"),
        "strategies": strategies,
        "not_simulated": not_simulated,
        "not_injected": ["compactions persisted by rewrite (atomic replace): covered by tests/test_compaction_crash.py "
                         "for JSONL, not by this job"],
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    }


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's crash table and notes back."""
    return read_measurement(run_dir, ["recovery"], "crash")


def main(argv: Sequence[str]) -> int:
    """``python -m experiments.measurements.crash.job OUT [--preset NAME] [STRATEGY ...]``: run the job alone and
    write the tables and the report's crash section (``crash.md``) to OUT (all strategies by default)."""
    import argparse

    from experiments.core.strategy import strategy_names

    parser = argparse.ArgumentParser(prog="python -m experiments.measurements.crash.job", description=main.__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("strategies", nargs="*", default=None)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="default")
    args = parser.parse_intermixed_args(argv)
    from experiments.measurements.crash.report import crash_section

    names = args.strategies or strategy_names()
    run_crash(names, PRESETS[args.preset], WorkloadConfig(), args.out)
    (args.out / "crash.md").write_text(crash_section(args.out) or "", encoding="utf-8")
    print(args.out / "crash.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
