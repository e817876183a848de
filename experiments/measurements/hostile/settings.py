"""The hostile-input measurement's settings: none (every case is tried, each in a fresh folder)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HostileSettings"]


@dataclass(kw_only=True)
class HostileSettings:
    """The hostile cases take no settings: the list of cases is the measurement (:mod:`.cases`, :mod:`.inputs`)."""
