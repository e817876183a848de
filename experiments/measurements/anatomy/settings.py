"""The anatomy measurement's settings: none (it reads each strategy's code and files as they are)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AnatomySettings"]


@dataclass(kw_only=True)
class AnatomySettings:
    """Readability and complexity take no settings: one small session per strategy, its code as it is."""
