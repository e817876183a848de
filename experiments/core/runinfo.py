"""Where a measurement came from: the commit and the machine, stamped on every result row."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

__all__ = ["REPO_ROOT", "child_env", "commit", "machine"]

REPO_ROOT = Path(__file__).resolve().parents[2]


def commit(root: str | os.PathLike[str] = REPO_ROOT) -> str:
    """The checked-out commit (full hash), with ``+dirty`` when the work tree has changes; ``unknown`` outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line naming the machine: host, CPU model and count, OS and kernel, Python version."""
    return (f"{platform.node()}; {_cpu_model()} x{os.cpu_count()}; "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}")


def child_env() -> dict[str, str]:
    """The environment of a child ``python`` started by the harness: this checkout first on ``PYTHONPATH``,
    so the child imports this checkout's code however the harness itself was started."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    return env
