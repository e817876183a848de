"""Crash images on disk: a state a crash left, laid out as a store root, and snapshots kept for later.

Shared by the crash measurement (power-loss images built from a writer's snapshots) and the
crash-state explorer (every state it enumerates is written out and recovered).
"""

from __future__ import annotations

import os
from pathlib import Path

from experiments.core.crashsim.fs_model import FileImage

__all__ = ["load_images", "save_images", "write_image"]


def write_image(root: Path, image: dict[str, bytes | None]) -> None:
    """Lay an image out as a store root: each present file written (0600), absent ones left out."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, data in image.items():
        if data is not None:
            path = root / name
            path.write_bytes(data)
            os.chmod(path, 0o600)


def save_images(folder: Path, files: dict[str, FileImage]) -> None:
    """Store a snapshot's files under ``folder/current`` and ``folder/durable``."""
    for part in ("current", "durable"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    for name, image in files.items():
        if image.current is not None:
            (folder / "current" / name).write_bytes(image.current)
        if image.durable is not None:
            (folder / "durable" / name).write_bytes(image.durable)


def load_images(folder: Path, names: list[str]) -> dict[str, FileImage]:
    """Read back what :func:`save_images` stored."""
    def read(part: str, name: str) -> bytes | None:
        path = folder / part / name
        return path.read_bytes() if path.exists() else None

    return {name: FileImage(read("current", name), read("durable", name)) for name in names}
