"""Judging one crash case: what was lost, what was invented, and whether a promise was broken.

Entries are compared exactly, by the digest of their JSONL line. What the writer meant to write
is ``intended`` (every entry it announced, in order; the first ``acked`` were acknowledged, the
one after them may have been in flight). A correct recovery returns an in-order subsequence of
``intended``: entries may be missing (lost), never reordered, altered or made up. Any recovered
entry that does not fit that order is counted as ``invented``.

Each strategy is judged against its own promise (``capabilities.durability``), never a
stronger one, so a store that promises less is not faulted for delivering what it promised:

======================  ===================================  =================================
durability              process crash (SIGKILL)              power loss (torn, zero, drop),
                                                             server crash (its server SIGKILLed)
======================  ===================================  =================================
``per_append``          every acknowledged entry survives    every acknowledged entry survives
``batch``               every acknowledged entry survives    all but those acknowledged since
                                                             the last sync survive
``process``             every acknowledged entry survives    nothing promised
``none``                nothing promised                     nothing promised
======================  ===================================  =================================

A server crash (``server``: the database server a store writes to, SIGKILLed mid-append and
started again) is judged like a power loss: what the server had not flushed when it died is what a
promise short of ``per_append`` may lose.

A damaged line in the middle (``middle``) is foreign damage, not a crash of the store's own
writer: no strategy promises anything about it (it is reported to compare recovery modes).
Under a promise, an unloadable session counts as losing every acknowledged entry, except when
the recovery mode refuses damage by contract (JSONL's ``strict``: nothing is changed, every
entry is still on disk, and a repairing mode gets them back); that refusal is no violation.
Inventing entries, or a ``read_live`` that disagrees with the history, always is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Verdict", "compare", "allowed_loss", "judge"]

#: Modes whose contract is to refuse any damage and change nothing (when other modes exist).
REFUSING_MODES = ("strict",)


@dataclass(frozen=True)
class Verdict:
    """The judged outcome of one case."""

    recovered: int
    lost: int
    invented: int
    allowed_loss: int | None
    violation: bool
    reason: str


def compare(intended: Sequence[str], acked: int, recovered: Sequence[str]) -> tuple[int, int]:
    """Match ``recovered`` against ``intended`` in order; return (acknowledged lost, invented).

    Digests are unique (each entry has its own id), so a greedy in-order match is exact: each
    recovered entry must appear in ``intended`` after the previous match.
    """
    position = {d: i for i, d in enumerate(intended)}
    matched_acked = invented = 0
    after = -1
    for d in recovered:
        at = position.get(d)
        if at is None or at <= after:
            invented += 1
            continue
        after = at
        matched_acked += at < acked
    return acked - matched_acked, invented


def allowed_loss(durability: str, crash_kind: str, damage: str | None, unsynced_acked: int | None) -> int | None:
    """How many acknowledged entries the strategy's promise lets this crash lose (None: no promise)."""
    if crash_kind == "process":
        return None if durability == "none" else 0
    if damage == "middle":
        return None
    if durability == "per_append":
        return 0
    if durability == "batch":
        return unsynced_acked if unsynced_acked is not None else None
    return None


def judge(*, intended: Sequence[str], acked: int, recovered: Sequence[str] | None, loadable: bool, live_ok: bool | None,
          durability: str, crash_kind: str, damage: str | None, mode: str, modes_offered: int,
          unsynced_acked: int | None) -> Verdict:
    """Judge one case (see the module docstring for the rules)."""
    if loadable and recovered is not None:
        lost, invented = compare(intended, acked, recovered)
        count = len(recovered)
    else:
        lost, invented, count = acked, 0, 0
    allowed = allowed_loss(durability, crash_kind, damage, unsynced_acked)
    refused_by_contract = not loadable and mode in REFUSING_MODES and modes_offered > 1
    reasons = []
    if invented:
        reasons.append(f"{invented} entries not in the order written")
    if loadable and live_ok is False:
        reasons.append("read_live disagrees with the history")
    if allowed is not None and lost > allowed and not refused_by_contract:
        reasons.append(f"lost {lost} acknowledged entries where the promise ({durability}) allows {allowed}")
    return Verdict(count, lost, invented, allowed, bool(reasons), "; ".join(reasons))
