"""The check of a compaction race: was any acknowledged entry lost?

An acknowledged entry is **not lost** when, at the end, it is in the session (``iter_entries``
of a fresh store finds it), or a compaction that committed summarized it: the compactor read it
from the live context under the writer lock and the store wrote that compaction (the
compactor records the digests of what each committed compaction summarized; a compaction that
failed or wrote nothing records none). In the ``append`` way nothing may leave the session at
all, summarized or not: a summarized entry missing from an appended session counts too
(``cell_left_append_log``). Every other acknowledged entry is lost.

Also checked: no entry is in the session twice, and ``read_live`` equals ``select_live`` of
every entry (the live context the compactions left is the one their positions name).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Findings", "check"]


@dataclass
class Findings:
    """What the check found, per participant and for the cell."""

    acknowledged: dict[str, list[str]]
    #: appends that found the lock busy past the store's timeout and were tried again
    waits: dict[str, int]
    lost: dict[str, int]
    duplicated: dict[str, int]
    compactions: dict[str, list[dict[str, Any]]]
    entries_at_end: int
    left_append_log: int
    live_consistent: bool
    summarized: set[str] = field(default_factory=set)


def check(store: Any, session_id: str, persist: str, acks: dict[str, Path], logs: dict[str, Path]) -> Findings:
    """Hold the session in ``store`` to the writers' acknowledgements and the compactors' records."""
    from aptmem.store import select_live
    from experiments.measurements.compaction_race.child import digest

    written = {name: path.read_text(encoding="ascii").split() for name, path in acks.items()}
    acknowledged = {name: [d for d in lines if d != "wait"] for name, lines in written.items()}
    waits = {name: lines.count("wait") for name, lines in written.items()}
    compactions = {name: [json.loads(line) for line in path.read_text(encoding="ascii").splitlines() if line]
                   for name, path in logs.items()}
    summarized = {d for records in compactions.values() for r in records if r["changed"] for d in r["digests"]}
    entries = list(store.iter_entries(session_id)) if store.exists(session_id) else []
    present = Counter(digest(e) for e in entries)
    lost = {name: sum(1 for d in digests if d not in present and d not in summarized) for name, digests in acknowledged.items()}
    duplicated = {name: sum(1 for d in digests if present[d] > 1) for name, digests in acknowledged.items()}
    left = sum(1 for d in summarized if d not in present) if persist == "append" else 0
    live = store.read_live(session_id) if entries else []
    return Findings(acknowledged=acknowledged, waits=waits, lost=lost, duplicated=duplicated, compactions=compactions,
                    entries_at_end=len(entries), left_append_log=left, live_consistent=live == select_live(entries),
                    summarized=summarized)
