"""Pieces every peer store shares: its recovery report and its one recovery mode.

The peers are libraries agent builders use as they are; none of them can repair a damaged
session, so each offers ``strict`` only: recovery reads the whole session and says whether it
loads, changing nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from aptmem.entries import Entry
from aptmem.errors import CorruptLogError, InvalidEntry
from aptmem.store import RecoveryReport

__all__ = ["RECOVERY_MODES", "check_mode", "strict_report"]

RECOVERY_MODES = ("strict",)


def check_mode(store: str, mode: str | None) -> str:
    """Return the recovery mode to use, refusing one the peer does not offer with ``ValueError``."""
    mode = mode or "strict"
    if mode not in RECOVERY_MODES:
        raise ValueError(f"{store} offers recovery modes {', '.join(RECOVERY_MODES)}, not {mode!r}")
    return mode


def strict_report(path: str, mode: str, read: Callable[[], Iterable[Entry]], what: str) -> RecoveryReport:
    """Read a whole session with ``read``; report it loadable, or the first damage, changing nothing.

    ``what`` says what the check did, for the report's ``actions``.
    """
    try:
        count = sum(1 for _ in read())
    except (CorruptLogError, InvalidEntry) as exc:
        line = exc.line if isinstance(exc, CorruptLogError) else None
        return RecoveryReport(path=path, mode=mode, loadable=False, error=str(exc), damage_reasons=[str(exc)],
                              damaged_lines=[line] if line else [], refused_line=line,
                              actions=[what, "nothing changed: the library has no way to repair a session"])
    return RecoveryReport(path=path, mode=mode, entries=count, good_lines=count, actions=[what + ": ok"])
