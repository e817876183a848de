"""``python -m experiments.measurements.crash.server``: crash one strategy's writers, recover each in a fresh process.

Reads a JSON job on stdin (built by :mod:`experiments.measurements.crash.job`), prints one JSON line per
case and a last ``info`` line. One server per strategy imports everything once, then forks:
every writer and every recovery is a process of its own (see :mod:`experiments.measurements.crash.writer`
and :mod:`experiments.core.crashsim.recovery`), so a hundred cases cost forks, not interpreter starts.

**Process crashes.** A calibration run steps a writer through the whole workload, gate by gate
(see :mod:`experiments.measurements.crash.writer`), and the records' own timestamps say how long after its
gate each append and each compaction (and a compaction's write) started and how long it took.
A kill is then aimed at a seeded random moment: a kill run lets the writer go at full speed to
the chosen entry's gate, releases it, and SIGKILLs it after the calibrated offset plus a uniform
fraction of the append (or of the compaction, or, every other compaction kill, of the
compaction's write: the part that changes the files). The server then reads the channel to its
end and knows exactly which entries were acknowledged and which one was in flight; where the
writer really died (its last record) is what the table reports, not where the kill was aimed.

**Power losses.** See :func:`experiments.measurements.crash.writer.trace_run` / ``wal_run`` for the moments
and :mod:`experiments.measurements.crash.power_loss` for the images; each image is recovered once per mode.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from aptmem.entries import Entry
from experiments.core.children import ForkFailed, fork_running, in_fork, readable
from experiments.core.crashsim.images import load_images, write_image
from experiments.core.crashsim.recovery import RecoveryOutcome, digest, recover_case
from experiments.measurements.crash.power_loss import build_image
from experiments.measurements.crash.protocol import CrashCase, CrashJob, PowerCut, ServerInfo
from experiments.measurements.crash.writer import (ACK, COMPACT, COMPACTED, DONE, GATE, INTENT, RECORD, Channel,
                                                   choose_cuts, session_run, trace_run, wal_run)

__all__ = ["Records", "main"]


class Records:
    """The server's end of a writer's acknowledgement channel: every record, in order.

    Each record is kept as (kind, digest hex, writer's perf_counter_ns, entry), ``entry`` being
    the 1-based workload entry the writer was on (counted by its gates: every entry of a
    calibration run is gated; a kill run's records before its one gate count as entry 0).
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.log: list[tuple[bytes, str, int, int]] = []
        self.counts: dict[bytes, int] = {}
        self._rest = b""

    def read(self, deadline: float) -> bool:
        """Read what is there (waiting until ``deadline``, monotonic); False at end-of-file."""
        left = deadline - time.monotonic()
        if not readable(self.fd, left):
            raise TimeoutError("the writer stopped reporting")
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return False
        data = self._rest + chunk
        whole = len(data) - len(data) % RECORD
        for at in range(0, whole, RECORD):
            kind = data[at : at + 1]
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.log.append((kind, data[at + 2 : at + 18].hex(), int.from_bytes(data[at + 18 : at + RECORD], "big"),
                             self.counts.get(GATE, 0)))
        self._rest = data[whole:]
        return True

    def count(self, kind: bytes) -> int:
        """How many records of ``kind`` arrived."""
        return self.counts.get(kind, 0)

    def intents(self) -> list[str]:
        """Digests of every entry announced, in order (the acknowledged ones first)."""
        return [d for k, d, _, _ in self.log if k == INTENT]

    def where(self) -> tuple[str, str]:
        """Where the writer was at its last record: (phase, description), entries counted as the
        workload's (1-based), compactions as the session's."""
        entry = compaction = 0
        inside = writing = False
        for kind, _, _, _ in self.log:
            if kind == COMPACT:
                compaction, inside = compaction + 1, True
            elif kind == COMPACTED:
                inside = False
            elif kind == INTENT:
                entry, writing = entry + (not inside), True
            elif kind == ACK:
                writing = False
            elif kind == DONE:
                return "append", "after the last append"
        last = self.log[-1][0] if self.log else b""
        if inside:
            step = "in its write" if writing else "before its write" if last == COMPACT else "after its write"
            return "compaction", f"in compaction {compaction} (during entry {entry}), {step}"
        if writing:
            return "append", f"in the append of entry {entry}"
        return "append", f"after the append of entry {entry}"


def _fork_writer(run: Any, job: CrashJob, entries: list[Entry], root: Path, gates: set[int] | None,
                 pause: bool) -> tuple[int, Records, int]:
    """Fork a writer running ``run``; return its pid, the server's end of its channel and its gate."""
    read_fd, write_fd = os.pipe()
    gate_read, gate_write = os.pipe()

    def child() -> None:
        os.close(read_fd)
        os.close(gate_write)
        if _WRITER_CPU is not None:
            os.sched_setaffinity(0, {_WRITER_CPU})
        run(job, entries, str(root), Channel(write_fd, gate_read, gates), pause=pause)

    pid = fork_running(child)
    os.close(write_fd)
    os.close(gate_read)
    return pid, Records(read_fd), gate_write


def _wait(pid: int) -> str:
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return f"exit {os.WEXITSTATUS(status)}"


def _calibrate(run: Any, job: CrashJob, entries: list[Entry], root: Path, deadline: float) -> tuple[Records, list[int]]:
    """Step a writer through every entry, gate by gate, without a kill; return its records and
    when each gate was released (server clock): the timings kills are aimed by."""
    pid, records, gate = _fork_writer(run, job, entries, root, None, pause=False)
    released: list[int] = []
    try:
        while records.read(deadline):
            while records.count(GATE) > len(released):
                released.append(time.perf_counter_ns())
                os.write(gate, b"g")
    finally:
        os.close(records.fd)
        os.close(gate)
        fate = _wait(pid)
    if fate != "exit 0":
        raise RuntimeError(f"{job.strategy.name}: the calibration writer ended with {fate}")
    return records, released


def _pin() -> None:
    """With two CPUs or more, keep the writers on one CPU and the server off it.

    The server spins to time a kill to the microsecond; a writer woken by the server's gate
    byte is placed on the waker's CPU by the scheduler and would wait there behind the spin
    (measured: kills aimed 1.4 ms after the gate landed before the writer had even woken).
    """
    global _WRITER_CPU
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        _WRITER_CPU = cpus[-1]
        os.sched_setaffinity(0, set(cpus[:-1]))


#: the CPU writers run on (None: one CPU only, and the server sleeps instead of spinning)
_WRITER_CPU: int | None = None


def _sleep_until(end: int) -> None:
    """Wait for ``perf_counter_ns() >= end``: sleep most of it, spin the rest if the writer has a CPU of its own."""
    left = end - time.perf_counter_ns()
    if _WRITER_CPU is None:
        if left > 0:
            time.sleep(left / 1e9)
        return
    if left > 2_000_000:
        time.sleep((left - 1_000_000) / 1e9)
    while time.perf_counter_ns() < end:
        pass


def _kill(run: Any, job: CrashJob, entries: list[Entry], root: Path, target: tuple[int, int],
          deadline: float) -> dict[str, Any]:
    """Start a writer gated before entry ``target[0]``; release it and SIGKILL it ``target[1]`` ns later."""
    entry, offset = target
    pid, records, gate = _fork_writer(run, job, entries, root, {entry}, pause=True)
    killed = False
    try:
        while records.read(deadline):
            if not killed and records.count(GATE):
                released = time.perf_counter_ns()
                os.write(gate, b"g")
                _sleep_until(released + offset)
                os.kill(pid, signal.SIGKILL)
                killed = True
    finally:
        if not killed:
            os.kill(pid, signal.SIGKILL)
        os.close(records.fd)
        os.close(gate)
        fate = _wait(pid)
    phase, where = records.where()
    if fate != "SIGKILL":
        raise RuntimeError(f"{job.strategy.name}: a writer meant to be killed ended with {fate}")
    return {"intended": records.intents(), "acked": records.count(ACK), "phase": phase, "where": where}


def _first(records: Records, kind: bytes, entry: int, after: int = 0) -> int:
    """The writer's time of the first ``kind`` record of ``entry`` at or after ``after``."""
    return next(t for k, _, t, e in records.log if k == kind and e == entry and t >= after)


def _append_targets(calibration: Records, released: list[int], rng: random.Random, kills: int) -> list[tuple[int, int, str]]:
    """Kill moments during appends: entry e (uniform), a uniform fraction into its calibrated append."""
    targets = []
    for _ in range(kills):
        entry = rng.randrange(1, len(released) + 1)
        fraction = rng.random()
        start = _first(calibration, INTENT, entry)
        span = _first(calibration, ACK, entry) - start
        offset = start - released[entry - 1] + int(fraction * span)
        targets.append((entry, offset, f"aimed at {fraction:.2f} of the append of entry {entry} ({span / 1000:.0f} us)"))
    return targets


def _compaction_targets(calibration: Records, released: list[int], rng: random.Random, kills: int) -> list[tuple[int, int, str]]:
    """Kill moments during compactions: compaction j (uniform), anywhere in it or (every other
    kill) in its write, the part that changes the files."""
    spans: list[tuple[int, int, int, int, int]] = []  # entry, start, write start, write end, end
    for kind, _, t, entry in calibration.log:
        if kind == COMPACT:
            write = _first(calibration, INTENT, entry, t)
            spans.append((entry, t, write, _first(calibration, ACK, entry, write), _first(calibration, COMPACTED, entry, t)))
    targets = []
    for index in range(kills if spans else 0):
        j = rng.randrange(len(spans))
        entry, start, write, written, end = spans[j]
        fraction = rng.random()
        lo, hi, aim = (write, written, "its write") if index % 2 else (start, end, "anywhere in it")
        offset = lo - released[entry - 1] + int(fraction * (hi - lo))
        targets.append((entry, offset, f"aimed at {fraction:.2f} of compaction {j + 1}, {aim} ({(hi - lo) / 1000:.0f} us)"))
    return targets


def _emit(line: CrashCase | ServerInfo) -> None:
    sys.stdout.write(msgspec.json.encode(line).decode() + "\n")
    sys.stdout.flush()


def _recover(job: CrashJob, root: Path, mode: str) -> RecoveryOutcome:
    store = job.strategy.in_mode(mode)  # a store that offers several modes reads in the mode it recovers in
    try:
        outcome = in_fork(lambda: recover_case(store, job.session_id, str(root), mode), job.recovery_timeout_s,
                          RecoveryOutcome)
        if outcome.error:  # the scratch folder's name says nothing and differs per run
            outcome.error = outcome.error.replace(f"{root}{os.sep}", "").replace(str(root), "<root>")
        return outcome
    except ForkFailed as exc:
        return RecoveryOutcome(mode=mode, error=f"recovery failed: {exc}")


def process_crashes(job: CrashJob, entries: list[Entry], scratch: Path, deadline: float) -> dict[str, Any]:
    """Calibrate one writer, then kill writers during appends and during compactions; emit one case per kill.

    Every writer appends through a compacting Session (one calibration serves both kinds of
    kill): an append kill is aimed at an entry's own ``store.append``, a compaction kill into a
    compaction. Cases are numbered across both, append kills first.
    """
    if job.kills + job.compaction_kills <= 0:
        return {}
    calibration, released = _calibrate(session_run, job, entries, scratch / "calibrate", deadline)
    info: dict[str, Any] = {"calibration": {"acknowledged": calibration.count(ACK), "compactions": calibration.count(COMPACT)}}
    targets = [*_append_targets(calibration, released, _rng(job, "process:append"), job.kills),
               *_compaction_targets(calibration, released, _rng(job, "process:compaction"), job.compaction_kills)]
    if len(targets) < job.kills + job.compaction_kills:
        info["skipped"] = "the calibration run never compacted: no compaction to kill"
    for case, (entry, offset, aimed) in enumerate(targets):
        root = scratch / f"process-{case}"
        killed = _kill(session_run, job, entries, root, (entry, offset), deadline)
        outcome = _recover(job, root, job.default_mode)
        _emit(CrashCase(crash_kind="process", phase=killed["phase"], damage=None, case=case, intended=killed["intended"],
                        acked=killed["acked"], unsynced_acked=None, note=f"{aimed}; died {killed['where']}",
                        outcome=outcome))
    return info


def _rng(job: CrashJob, purpose: str) -> random.Random:
    """A random stream of its own per strategy and purpose, from the job's seed."""
    return random.Random(f"aptmem-crash:{job.seed}:{job.strategy.name}:{purpose}")


def power_losses(job: CrashJob, entries: list[Entry], digests: list[str], scratch: Path) -> dict[str, Any]:
    """Take the power-loss snapshots, build every image, recover each in every mode; emit the cases."""
    power = job.power
    if power.model.model == "none" or power.images <= 0:
        return {}
    cuts = choose_cuts(_rng(job, "power"), power.images, len(entries))
    folder = scratch / "power"
    root = str(scratch / "power-writer")
    if power.model.model == "trace":
        in_fork(lambda: trace_run(job, entries, root, cuts, folder), job.strategy_timeout_s)
    else:
        region = power.model.region
        assert region is not None  # the model's own check: sqlite_wal names its region
        in_fork(lambda: wal_run(job, entries, root, sorted(cuts), region, folder), job.strategy_timeout_s)
    manifest = msgspec.json.decode((folder / "manifest.json").read_bytes(), type=list[PowerCut])
    for case, cut in enumerate(manifest):
        files = load_images(folder / f"cut-{case}", cut.names)
        unsynced = None if cut.synced_entries is None else max(0, cut.acked - cut.synced_entries)
        where = f"power lost in append {cut.append} after its {cut.call} ({cut.call_index + 1}/{cut.calls})"
        if cut.region:
            where += f"; unsynced WAL bytes {cut.region[0]}..{cut.region[1]}"
        for damage in power.damages:
            image = build_image(files, damage, _rng(job, f"power:{case}:{damage}"), target=cut.target,
                                lines=power.model.lines)
            absent = "the session file is absent: its name was never made durable (no fsync of its folder)" \
                if image.get(cut.target) is None else ""
            for mode in power.modes:
                image_root = scratch / f"power-{case}-{damage}-{mode}"
                write_image(image_root, image)
                outcome = _recover(job, image_root, mode)
                note = "; ".join(filter(None, [where, cut.note, absent, power.model.caveat]))
                _emit(CrashCase(crash_kind="power_loss", phase="append", damage=damage, case=case,
                                intended=digests[: cut.written], acked=cut.acked, unsynced_acked=unsynced, note=note,
                                outcome=outcome))
    return {"power_cuts": len(manifest)}


def _warm(job: CrashJob) -> None:
    """Import (once, before any fork) what writers and recoveries use, so no fork pays for it."""
    from aptmem.session import Session  # noqa: F401  (the compaction-phase writer)
    from aptmem.tokens.tiers import build_estimator
    from experiments.core.strategy import import_target

    import_target(job.strategy.store.target)
    build_estimator(job.estimator)


def main() -> int:
    """Run the job on stdin; print the cases, then an ``info`` line."""
    job = msgspec.json.decode(sys.stdin.buffer.read(), type=CrashJob)
    _pin()
    deadline = time.monotonic() + job.strategy_timeout_s
    entries = job.workload.entries()
    _warm(job)
    digests = [digest(e) for e in entries]
    scratch = Path(job.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter_ns()
    info = process_crashes(job, entries, scratch, deadline)
    middle = time.perf_counter_ns()
    info.update(power_losses(job, entries, digests, scratch))
    info["seconds"] = {"process": round((middle - started) / 1e9, 2),
                       "power_loss": round((time.perf_counter_ns() - middle) / 1e9, 2)}
    _emit(ServerInfo(info=info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
