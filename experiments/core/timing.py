"""Keeping timed measurements of parallel jobs off each other's machine.

Hydra's local joblib launcher runs several jobs at once. Timings taken while another job is
busy on the same cores are not timings of the code under test, so every timed measurement holds
a machine-wide lock: jobs overlap only in their untimed parts. On a cluster the launcher
configs give each job a node of its own instead (configs/hydra/launcher/).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

__all__ = ["LOCK_PATH", "timing_slot"]

#: One lock per machine (the system's temp folder is per machine, not per checkout).
LOCK_PATH = Path(os.environ.get("APTMEM_TIMING_LOCK", Path(tempfile.gettempdir()) / "aptmem-timing.lock"))


@contextlib.contextmanager
def timing_slot(timed: bool = True) -> Iterator[None]:
    """Hold the machine's timing lock for the block (no lock for an untimed block)."""
    if not timed:
        yield
        return
    with FileLock(str(LOCK_PATH), mode=0o666):
        yield
