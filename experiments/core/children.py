"""Child processes of the harness: a fresh interpreter running a module, or a fork running one function.

A fresh interpreter (:func:`run_module`) measures memory and start-up honestly; a fork
(:func:`fork_running`, :func:`in_fork`) is cheap when hundreds of children share what the parent
imported. A forked child leaves with ``os._exit``: no atexit handlers, no flushing of buffers it
inherited.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec

from experiments.core.runinfo import REPO_ROOT, child_env

__all__ = ["FAILED", "ForkFailed", "fork_running", "in_fork", "readable", "run_module"]

_T = TypeVar("_T")

#: The exit status of a forked child whose function raised (its traceback is on stderr).
FAILED = 3


class ForkFailed(RuntimeError):
    """A forked helper exited with an error, died, or overran its time."""


def fork_running(body: Callable[[], object]) -> int:
    """Fork; the child runs ``body`` and exits 0, or :data:`FAILED` after printing the traceback.

    Returns the child's pid (in the parent only). Output buffers are flushed before the fork so
    the child does not print them again.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            body()
        except BaseException:  # noqa: BLE001 - any failure of the child is reported by its status
            traceback.print_exc()
            code = FAILED
        finally:
            sys.stderr.flush()
            os._exit(code)
    return pid


def readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` has something to read (or its end) within ``timeout`` seconds.

    ``poll``, not ``select.select``: select() refuses descriptors above 1023, which a long-lived
    process (a test session, a large run) may well hand out; a poll object costs no descriptor.
    """
    if timeout <= 0:
        return False
    waiting = select.poll()
    waiting.register(fd, select.POLLIN)
    return bool(waiting.poll(timeout * 1000))


def _read_all(fd: int, deadline: float) -> bytes:
    """Read ``fd`` to end-of-file, raising ``TimeoutError`` past ``deadline`` (monotonic)."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if not readable(fd, left):
            raise TimeoutError
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def in_fork(fn: Callable[[], Any], timeout: float, result_type: type[_T] = Any) -> _T:  # type: ignore[assignment]
    """Run ``fn()`` in a forked process; return its result, msgspec-JSON round-tripped as ``result_type``.

    Raises :class:`ForkFailed` if the child fails, is killed, or takes longer than ``timeout``
    seconds (it is then SIGKILLed).
    """
    read_fd, write_fd = os.pipe()

    def child() -> None:
        os.close(read_fd)
        view = memoryview(msgspec.json.encode(fn()))
        while view:
            view = view[os.write(write_fd, view):]

    pid = fork_running(child)
    os.close(write_fd)
    try:
        data = _read_all(read_fd, time.monotonic() + timeout)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise ForkFailed(f"timed out after {timeout} s") from None
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise ForkFailed(f"the forked process ended with status {status:#x}")
    return msgspec.json.decode(data, type=result_type)


def run_module(module: str, args: Sequence[str], *, timeout: float = 900) -> bytes:
    """Run ``python -m module *args`` in a fresh interpreter; return the last line it printed.

    The child runs from the repository root with it on ``PYTHONPATH``, so it imports this
    checkout's code however the harness was started. A non-zero exit raises ``RuntimeError``
    with the end of the child's stderr.
    """
    cmd = [sys.executable, "-m", module, *args]
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=child_env(), capture_output=True, timeout=timeout)
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {stderr}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{' '.join(cmd)} printed nothing")
    return lines[-1]
