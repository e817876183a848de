"""The disk under a store in the state-machine tests, and what a crash leaves of it.

A :class:`Disk` owns a store's root folder and knows, for stores whose I/O is Python's (JSONL,
full JSON), what a power loss would keep: an :class:`~experiments.core.crashsim.fs_model.FsModel` follows
every write, sync, rename and folder sync the store makes, exactly as in the crash experiment.
SQLite's I/O is C code below that layer, so for SQLite in WAL mode the WAL file is torn beyond
what SQLite documents as synced (every commit with ``synchronous=FULL``; with NORMAL and OFF
only what was on disk at the last reboot), and SQLite must reject the torn frames by their
checksums. SQLite's rollback-journal mode (``DELETE``) writes pages of the database in place;
a power loss there is not modelled, and it crashes as a process does.

A crash never asks the store: the files are copied, as the kernel holds them, into a fresh
root (the store object is abandoned with its descriptors, locks and connection still open,
exactly as a killed process leaves them to the kernel), and, for a power loss, the unsynced
parts are torn, zero-filled or dropped (:func:`experiments.measurements.crash.power_loss.damage_file`).

Syncs are real calls into the model but not to the disk (the roots live on tmpfs when there is
one, and the model's ``fsync`` does nothing): what is durable is decided by the model, so the
tests need not pay a disk's sync latency to check it.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from experiments.core.crashsim.fs_model import FileImage, FsModel
from experiments.measurements.crash.power_loss import damage_file, wal_state

__all__ = ["Disk", "POWER_LOSSES", "scratch_base"]

#: The power-loss damage kinds (experiments.measurements.crash.power_loss): the unsynced tail torn, zeroed, dropped.
POWER_LOSSES = ("torn", "zero", "drop")


def scratch_base(fallback: Path) -> Path:
    """A folder for store roots: under ``/dev/shm`` when it is a writable tmpfs, else ``fallback``."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return Path(shm)
    return fallback


def _no_sync(fd: int) -> None:
    """The model's stand-in for a real sync: durability is the model's to decide."""


class Disk:
    """One store's files across crashes: the current root and, where traced, its durable state."""

    def __init__(self, base: Path, *, traced: bool, wal_full: bool = False) -> None:
        self.base = base
        #: every file operation goes through Python's ``os`` (so FsModel sees it)
        self.traced = traced
        self.wal_full = wal_full
        self.generation = 0
        self.root = self._fresh_root()
        self.model: FsModel | None = None
        #: bytes of the SQLite WAL on disk at the last reboot: durable whatever the sync setting
        self.wal_durable = 0
        if self.traced:
            self._install(FsModel(self.root))

    def _fresh_root(self) -> Path:
        self.generation += 1
        root = self.base / f"root-{self.generation}"
        root.mkdir(mode=0o700)
        return root

    def _install(self, model: FsModel) -> None:
        model.install()
        model._real["fsync"] = model._real["fdatasync"] = _no_sync  # see the module docstring
        self.model = model

    def close(self) -> None:
        """Put the real ``os`` functions back (always call this, also after a failure)."""
        if self.model is not None:
            self.model.uninstall()
            self.model = None

    # -- the files as they are and as a power loss leaves them ------------------------------------

    def files(self) -> dict[str, FileImage]:
        """Every file of the root: current bytes and durable bytes (None: the name would be gone)."""
        if self.model is not None:
            return self.model.snapshot()
        out = {}
        for name in sorted(os.listdir(self.root)):
            if name.endswith("-shm"):
                continue  # SQLite's shared-memory index: rebuilt from the WAL, not data
            data = (self.root / name).read_bytes()
            durable = data
            if name.endswith("-wal"):
                durable = data[: self._wal_synced(data)]
            out[name] = FileImage(data, durable)
        return out

    def _wal_synced(self, data: bytes) -> int:
        """How much of a WAL file SQLite has synced: every commit under FULL, else what a reboot left."""
        if self.wal_full:
            return max(wal_state(data).end, self.wal_durable)
        return min(self.wal_durable, len(data))

    # -- crashes ----------------------------------------------------------------------------------

    def process_crash(self) -> dict[str, bytes | None]:
        """Move to a fresh root holding what the kernel holds now; return the new root's files.

        The durable state carries over: a killed process syncs nothing.
        """
        files = self.files()
        image = {name: img.current for name, img in files.items()}
        self._move(image, files)
        return image

    def power_loss(self, damage: str, rng: random.Random) -> dict[str, bytes | None]:
        """Move to a fresh root holding what a power loss of kind ``damage`` leaves; return its files.

        After the reboot everything on the disk is durable.
        """
        image = {name: damage_file(img, damage, rng) for name, img in self.files().items()}
        self._move(image, {name: FileImage(data, data) for name, data in image.items() if data is not None})
        wal = [data for name, data in image.items() if name.endswith("-wal") and data is not None]
        self.wal_durable = len(wal[0]) if wal else 0
        return image

    def _move(self, image: dict[str, bytes | None], durable: dict[str, FileImage]) -> None:
        """Lay ``image`` out in a fresh root and go on modelling it with the ``durable`` state.

        The old root stays until :meth:`cleanup`: the abandoned store still holds files in it.
        """
        self.close()
        self.root = self._fresh_root()
        for name, data in image.items():
            if data is not None:
                path = self.root / name
                path.write_bytes(data)
                os.chmod(path, 0o600)
        if self.traced:
            model = FsModel(self.root)
            _seed(model, durable)
            self._install(model)

    def cleanup(self) -> None:
        """Remove every root this disk made (after the stores are closed)."""
        self.close()
        for child in self.base.glob("root-*"):
            shutil.rmtree(child, ignore_errors=True)


def _seed(model: FsModel, files: dict[str, FileImage]) -> None:
    """Tell a fresh model the durable state of files copied from an older root.

    A file the model has not seen is otherwise taken as wholly durable; after a process crash
    only what was synced before it is.
    """
    for name, image in files.items():
        ino = model._new_inode()
        # bytes: "the durable data, copied" in the model's terms; None: no data ever synced.
        model.inodes[ino].synced = image.durable if image.durable is not None else None
        if image.current is not None:
            model.names[name] = ino
        if image.durable is not None:
            model.bound[name] = ino
