"""Server crashes: the service a strategy declares (a database server) SIGKILLed mid-append, then restarted.

For a strategy whose store needs a service, the data lives in the server, so what a crash of the
*server* leaves is the question (a kill of the client is an ordinary process crash, measured like
every other strategy's). Per case: a fresh writer process
(:mod:`experiments.measurements.crash.service_writer`) appends the workload and reports each entry
before and after its append; at a seeded moment (a seeded number of acknowledged entries, then a
seeded pause of up to a few milliseconds, so the kill lands inside an append as often as between
two) the parent calls the service's ``crash()`` -- every server process SIGKILLed at once, as when
its machine dies -- waits for the writer to notice, calls ``restart()`` (the server replays its
WAL), and recovers the session in another fresh process. The case is judged like a power loss
(:mod:`experiments.core.crashsim.judge`): a store that promises ``per_append`` loses nothing it
acknowledged; one whose commits return before they are flushed may lose the last ones.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec

from experiments.core.children import readable
from experiments.core.crashsim.recovery import RecoveryOutcome
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.core.strategy import Service, StrategySpec
from experiments.measurements.crash.protocol import CrashCase
from experiments.workloads import Workload, WorkloadRequest

__all__ = ["CRASH_KIND", "service_crash_cases"]

#: The ``crash_kind`` of these cases in the recovery table.
CRASH_KIND = "server"
_MODULE = "experiments.measurements.crash.service_writer"


def _session_id(name: str, case: int) -> str:
    digest = hashlib.sha256(f"aptmem-server-crash:{name}:{case}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _lines(proc: subprocess.Popen[bytes], deadline: float) -> Iterator[str]:
    """The writer's lines as they come, until it closes its output (or the deadline passes)."""
    assert proc.stdout is not None
    rest = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the writer stopped reporting")
        if not readable(proc.stdout.fileno(), left):
            continue
        chunk = proc.stdout.read1(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            return
        rest += chunk
        *whole, rest = rest.split(b"\n")
        yield from (line.decode() for line in whole)


def _step(pipe: IO[bytes]) -> None:
    """Let the writer make its next append (one byte on its input); a writer that already left is fine."""
    try:
        pipe.write(b".")
        pipe.flush()
    except BrokenPipeError:
        pass


def service_crash_cases(strategy: StrategySpec, service: Service, *, kills: int, entries: int, seed: int,
                        workload: Workload, mode: str, scratch: Path, timeout_s: float) -> Iterator[CrashCase]:
    """``kills`` server crashes of ``strategy``'s ``service``, each recovered and returned as a case to judge."""
    rng = random.Random(f"{seed}:{strategy.name}:server-crash")
    request = WorkloadRequest.of(workload, entries)
    for case in range(kills):
        from experiments.measurements.crash.service_writer import ServiceWriterJob

        root = scratch / f"server-crash-{case}"
        job = ServiceWriterJob(store=strategy.store, root=str(root), session_id=_session_id(strategy.name, case),
                               workload=request, mode=mode)
        encoded = msgspec.json.encode(job).decode()
        target = rng.randint(max(1, entries // 4), max(1, entries * 3 // 4))
        pause = rng.uniform(0.0, 0.004)
        intended: list[str] = []
        acked, error, crashed = 0, "", False
        deadline = time.monotonic() + timeout_s
        proc = subprocess.Popen([sys.executable, "-m", _MODULE, "write", encoded], cwd=REPO_ROOT, env=child_env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        try:
            for line in _lines(proc, deadline):
                if line.startswith("I "):
                    intended.append(line[2:])
                elif line == "A":
                    acked += 1
                    # the writer waits for this before its next append (after its last it has left: _step allows that)
                    _step(proc.stdin)
                    if acked == target and not crashed:
                        # the kill lands within ``pause`` of the next append's start: before, inside or
                        # just after it
                        time.sleep(pause)
                        service.crash()
                        crashed = True
                elif line.startswith("E "):
                    error = line[2:]
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:  # the writer already left
                pass
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if not crashed:  # the writer finished (or failed) before the chosen moment: crash it now
                service.crash()
            service.restart()
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            raise RuntimeError(f"{strategy.name}: the server-crash writer failed ({proc.returncode}): {stderr[-1500:]}")
        done = subprocess.run([sys.executable, "-m", _MODULE, "recover", encoded], cwd=REPO_ROOT, env=child_env(),
                              capture_output=True, timeout=timeout_s)
        if done.returncode != 0:
            raise RuntimeError(f"{strategy.name}: recovery after a server crash failed: {done.stderr.decode()[-1500:]}")
        outcome = msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=RecoveryOutcome)
        in_flight = len(intended) > acked
        note = (f"server SIGKILLed {pause * 1000:.1f} ms after acknowledgement {target}; the writer had "
                f"{acked} acknowledged" + (", one append in flight" if in_flight else "")
                + (f"; it saw {error}" if error else "; it finished first") + "; server restarted (WAL replayed)")
        yield CrashCase(crash_kind=CRASH_KIND, phase="append", damage=None, case=case, intended=intended, acked=acked,
                        unsynced_acked=None, note=note, outcome=outcome)
