"""Forking a child that runs one function and leaves without touching what it inherited."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

__all__ = ["fork_running"]

#: The exit status of a forked child whose function raised (its traceback is on stderr).
FAILED = 3


def fork_running(body: Callable[[], object]) -> int:
    """Fork; the child runs ``body`` and exits 0, or :data:`FAILED` after printing the traceback.

    Returns the child's pid (in the parent only). Output buffers are flushed before the fork so
    the child does not print them again, and the child leaves with ``os._exit``: no atexit
    handlers, no flushing of buffers it inherited.
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
