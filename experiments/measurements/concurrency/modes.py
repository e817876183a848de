"""Concurrent writers through the real command line, with and without the lock; and the sidecar.

For each mode and line size, ``writers`` processes append to one session at once, each fed its
own entries on stdin:

* ``lock``: ``python -m aptmem append --root R SID --sync none --json`` (the writer lock, per
  burst of input);
* ``no_lock``: the same with ``--no-lock``: every line is still one ``os.write`` on an
  ``O_APPEND`` descriptor, but nothing orders the writers (and a writer that opens the log while
  another's line is half written may take that line for a torn tail);
* ``buffered``: a naive logger (:mod:`experiments.measurements.concurrency.writers`, harness only) whose
  buffered file API cuts lines across ``write()`` calls.

Then the same for the working-memory sidecar: ``writers`` processes each ``set`` keys of their
own, with the library (``lock``) or by an unlocked read-modify-write (``no_lock``, harness only).

A fresh reader then classifies every line of the log: good (an entry), damaged, and among the
damaged, *interleaved* (holding pieces of two writers' entries, told apart by a marker repeated
through each entry's content). ``lost`` counts entries (or keys) a writer acknowledged that are not
found whole; ``switches`` counts adjacent good lines from different writers, a measure of how
much the writers actually overlapped (``writers - 1`` means they ran one after another).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from aptmem.entries import decode_line
from aptmem.errors import InvalidEntry
from experiments.core.runinfo import REPO_ROOT, child_env

__all__ = ["LOG_MODES", "SIDECAR_MODES", "entry_line", "measure_log_mode", "measure_sidecar_mode", "analyse_log"]

LOG_MODES = ("lock", "no_lock", "buffered")
SIDECAR_MODES = ("lock", "no_lock")
_MARKER = re.compile(rb'(?:<w|"id":"w)(\d+)-')  # a writer's mark: in the content, or its entry's id
_START_LIMIT_S = 10.0  # the longest wait for the writers to be ready before they are released anyway


def entry_line(writer: int, index: int, size: int) -> bytes:
    """One entry of ``size`` bytes (about) whose content repeats the marker ``<wW-I>`` throughout."""
    marker = f"<w{writer}-{index}>"
    head = b'{"type":"user","id":"w%d-%d","ts":%d,"content":"' % (writer, index, index)
    room = max(len(marker), size - len(head) - 3)
    content = (marker * (room // len(marker) + 1))[:room]
    return head + content.encode() + b'"}\n'


def _wait_until_reading(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait until every writer has started and blocks reading its stdin, so that all start together.

    On Linux a process blocked on a pipe read shows ``pipe`` in ``/proc/PID/wchan``; elsewhere
    (or if that file says nothing) a fixed pause stands in for it.
    """
    deadline = time.monotonic() + _START_LIMIT_S
    waiting = list(procs)
    while waiting and time.monotonic() < deadline:
        try:
            waiting = [p for p in waiting if p.poll() is None and "pipe" not in Path(f"/proc/{p.pid}/wchan").read_text()]
        except OSError:
            time.sleep(1.5)
            return
        time.sleep(0.02)


def log_command(mode: str, root: Path, session: str, buffer_bytes: int, lock_timeout: float) -> list[str]:
    """The command line one writer of ``mode`` runs."""
    if mode == "buffered":
        return [sys.executable, "-m", "experiments.measurements.concurrency.writers", "log-buffered",
                "--path", str(root / f"{session}.jsonl"), "--buffer", str(buffer_bytes)]
    command = [sys.executable, "-m", "aptmem", "append", "--root", str(root), session, "--sync", "none", "--json",
               "--lock-timeout", f"{lock_timeout:g}"]
    return command + (["--no-lock"] if mode == "no_lock" else [])


def _feed(proc: subprocess.Popen[bytes], writer: int, appends: int, size: int, go: threading.Event) -> None:
    """Write this writer's entries to its stdin once ``go`` is set, then close it."""
    go.wait()
    try:
        for index in range(appends):
            proc.stdin.write(entry_line(writer, index, size))  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    except (BrokenPipeError, ValueError):  # the writer died early: its exit code and stderr tell why
        pass


def signal_go(procs: list[subprocess.Popen[Any]]) -> None:
    """Send every waiting writer its start line.

    A writer that already died (it could not even open its store) has closed its stdin: that is
    not the harness's failure; :func:`_collect` reports its exit code and stderr.
    """
    for proc in procs:
        try:
            proc.stdin.write("go\n" if proc.text_mode else b"go\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass


def _collect(procs: list[subprocess.Popen[bytes]], timeout: float) -> tuple[list[int], int, list[str]]:
    """Wait for every writer; return acknowledged counts, how many failed, and their errors."""
    acknowledged, failed, errors = [], 0, []
    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        last = out.decode(errors="replace").strip().splitlines()[-1:] or ["{}"]
        try:
            doc = json.loads(last[0])
        except ValueError:
            doc = {}
        acknowledged.append(int(doc.get("appended", doc.get("acknowledged", 0))))
        if proc.returncode != 0:
            failed += 1
            text = err.decode(errors="replace").strip().splitlines()
            errors.append(text[-1] if text else f"exit {proc.returncode}")
    return acknowledged, failed, errors


def measure_log_mode(mode: str, root: Path, session: str, *, writers: int, appends: int, size: int,
                     buffer_bytes: int, timeout: float) -> dict[str, Any]:
    """Run ``writers`` processes of ``mode`` appending ``appends`` lines of ``size`` bytes each; analyse."""
    root.mkdir(parents=True, exist_ok=True)
    command = log_command(mode, root, session, buffer_bytes, timeout)
    procs = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=child_env(), cwd=REPO_ROOT) for _ in range(writers)]
    go = threading.Event()
    feeders = [threading.Thread(target=_feed, args=(proc, w, appends, size, go), daemon=True)
               for w, proc in enumerate(procs)]
    for feeder in feeders:
        feeder.start()
    _wait_until_reading(procs)
    started = time.perf_counter_ns()
    go.set()
    deadline = time.monotonic() + timeout
    for feeder, proc in zip(feeders, procs):
        feeder.join(timeout=max(0.1, deadline - time.monotonic()))
        if feeder.is_alive():  # a stuck writer stopped reading: kill it, its feeder then ends
            proc.kill()
            feeder.join()
        proc.stdin = None  # closed by its feeder; communicate() must not touch it
    acknowledged, failed, errors = _collect(procs, max(1.0, deadline - time.monotonic()))
    wall = time.perf_counter_ns() - started
    outcome = analyse_log(root / f"{session}.jsonl", acknowledged)
    return {"command": _short_command(command), "writers_failed": failed, "wall_ns": wall,
            "error": "; ".join(sorted(set(errors)))[:300] or None, "expected": writers * appends,
            "acknowledged": sum(acknowledged), **outcome}


def _short_command(command: list[str]) -> str:
    """The command as a person would type it (``python`` for the interpreter, placeholders for paths)."""
    out = []
    for index, part in enumerate(command):
        if index == 0:
            out.append("python")
        elif index > 0 and command[index - 1] in ("--root", "--path"):
            out.append("DIR" if command[index - 1] == "--root" else "DIR/SESSION_ID.jsonl")
        elif re.fullmatch(r"[0-9a-f-]{36}", part):
            out.append("SESSION_ID")
        else:
            out.append(part)
    return " ".join(out)


def analyse_log(path: Path, acknowledged: list[int]) -> dict[str, Any]:
    """Classify every line of the log written by the writers (``acknowledged[w]`` entries each)."""
    data = path.read_bytes() if path.exists() else b""
    ids: Counter[str] = Counter()
    damaged = interleaved = switches = 0
    previous = None
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            entry = decode_line(raw)
        except InvalidEntry:
            damaged += 1
            interleaved += len({m.group(1) for m in _MARKER.finditer(raw)}) > 1
            continue
        ident = entry.id or ""
        ids[ident] += 1
        writer = ident.split("-")[0]
        switches += previous is not None and writer != previous
        previous = writer
    expected = {f"w{w}-{i}" for w, count in enumerate(acknowledged) for i in range(count)}
    found = sum(1 for ident in expected if ids[ident])
    return {"found": found, "lost": len(expected) - found, "duplicated": sum(n - 1 for n in ids.values() if n > 1),
            "damaged_lines": damaged, "interleaved_lines": interleaved, "switches": switches}


def measure_sidecar_mode(mode: str, root: Path, session: str, *, writers: int, sets: int, timeout: float) -> dict[str, Any]:
    """Run ``writers`` processes each setting ``sets`` keys of one sidecar (``lock`` or ``no_lock``); analyse."""
    from aptmem.working_memory import WorkingMemory
    from experiments.measurements.concurrency.writers import sidecar_key

    root.mkdir(parents=True, exist_ok=True)
    WorkingMemory(root, session).create(title="concurrency")
    kind = "sidecar" if mode == "lock" else "sidecar-unlocked"
    base = [sys.executable, "-m", "experiments.measurements.concurrency.writers", kind, "--root", str(root), "--session", session,
            "--sets", str(sets), "--lock-timeout", f"{timeout:g}"]
    procs = [subprocess.Popen([*base, "--writer", str(w)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=child_env(), cwd=REPO_ROOT) for w in range(writers)]
    _wait_until_reading(procs)
    started = time.perf_counter_ns()
    signal_go(procs)
    acknowledged, failed, errors = _collect(procs, timeout)
    wall = time.perf_counter_ns() - started
    try:
        working = WorkingMemory(root, session).load().working
        note = None
    except Exception as exc:  # an unreadable sidecar is the finding, not a harness failure
        working, note = {}, f"{type(exc).__name__}: {exc}"[:300]
    expected = [(w, i) for w, count in enumerate(acknowledged) for i in range(count)]
    found = sum(1 for w, i in expected if working.get(sidecar_key(w, i)) == i)
    error = "; ".join(sorted(set(errors)))[:300] or note
    return {"command": _short_command([*base, "--writer", "W"]), "writers_failed": failed, "wall_ns": wall, "error": error,
            "expected": writers * sets, "acknowledged": sum(acknowledged), "found": found, "lost": len(expected) - found,
            "duplicated": 0, "damaged_lines": int(note is not None), "interleaved_lines": 0, "switches": None}
