"""Judging one crash state: recover it as an agent would, and hold the result to the strategy's promise.

Recovery is :func:`experiments.core.crashsim.recovery.recover_case` (open the store, ``recover()`` in a
mode, then ``iter_entries`` and ``read_live``), run in the explorer's worker process on a folder
of its own per state, with an alarm so a hang counts as not loadable instead of stopping the run.

The operation's *versions* are the histories a correct recovery may return: for ``append``, the
session before it plus the first ``j`` appended entries (``j = 0 .. appends``); for a compaction,
the session before it (``old``) or after it (``new``), nothing in between; for a compaction amid
appends, the session before plus the first ``j`` entries of the first half, then the compacted
session plus the first ``j`` of the second half (each acknowledgement moves one version on). Entries are compared
exactly (digest of the JSONL line). What the promise (``capabilities.durability``) requires at a
crash point (:func:`promised_version`):

* ``per_append``: the session before the operation, every append acknowledged, a compaction once
  it returned (amid appends: the version of every acknowledgement so far);
* ``batch``: the session before the operation, and what a sync covered (everything once the store
  was closed, which syncs; amid appends, the session before until then);
* ``process`` / ``none``: nothing: a power loss is outside the promise; losses are reported
  (``lost_acked``) but are not violations.

Violations (any one makes a state a violation):

* ``lost_durable``: an entry the promise covers is not read back;
* ``invented``: an entry read back that was never written, or out of the order written;
* ``altered``: an entry read back with a known id but other content;
* ``not_loadable``: under a promise, recovery failed or the session cannot be read (JSONL's
  ``strict`` and ``truncate_tail`` refuse damage by contract and change nothing: *refused*, not a
  violation);
* ``mixed_compaction``: entries of the old session and of the compacted one together;
* ``live_mismatch``: ``read_live`` disagrees with the live context of the history read.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from experiments.core.crashsim.judge import compare
from experiments.core.crashsim.recovery import RecoveryOutcome, recover_case
from experiments.core.strategy import StoreSpec

__all__ = ["VIOLATIONS", "REFUSING_MODES", "Expectation", "Outcome", "promised_version", "judge_state",
           "recover_state"]

#: Violation kinds, in report order.
VIOLATIONS = ("lost_durable", "invented", "altered", "not_loadable", "mixed_compaction", "live_mismatch")
#: JSONL modes whose contract is to refuse damage and change nothing (a repairing mode gets the data back).
REFUSING_MODES = ("strict", "truncate_tail")


@dataclass(frozen=True)
class Expectation:
    """What one recorded operation meant: its versions (digests), the ids it knows, its promise."""

    operation: str
    durability: str
    versions: tuple[tuple[str, ...], ...]
    known_ids: frozenset[str]
    prefix: int
    appends: int
    modes_offered: int

    @classmethod
    def build(cls, operation: str, durability: str, old: Sequence[Sequence[Any]], new: Sequence[Sequence[Any]],
              intended: Sequence[Sequence[Any]], modes_offered: int) -> "Expectation":
        """From the child's histories (``[digest, id]`` pairs)."""
        before, after = tuple(d for d, _ in old), tuple(d for d, _ in new)
        extra = tuple(d for d, _ in intended)
        if operation == "append":
            versions = tuple(before + extra[:j] for j in range(len(extra) + 1))
            if versions[-1] != after:
                raise RuntimeError("the session after the appends is not the one before plus the entries appended")
        elif operation == "compaction_amid_appends":
            first, second = extra[: len(extra) // 2], extra[len(extra) // 2 :]
            compacted = after[: len(after) - len(second)]
            if after[len(compacted) :] != second:
                raise RuntimeError("the session after the compaction does not end with the entries appended after it")
            versions = (*(before + first[:j] for j in range(len(first) + 1)),
                        *(compacted + second[:j] for j in range(len(second) + 1)))
        else:
            versions = (before, after)
        ids = frozenset(i for pairs in (old, new, intended) for _, i in pairs if i is not None)
        return cls(operation, durability, versions, ids, len(before), len(intended), modes_offered)


@dataclass(frozen=True)
class Outcome:
    """The judged result of one recovered state."""

    loadable: bool
    refused: bool
    violations: tuple[str, ...]
    lost_acked: int
    good_lines_discarded: int
    matched: str  # the version read back exactly ("old", "new", "+j"), or "other", or "-" (not loadable)
    error: str | None


def promised_version(exp: Expectation, acked: int, synced: int) -> int | None:
    """The earliest version the promise lets a crash here leave (None: power loss not promised).

    ``acked``: acknowledgements before the crash (appends, then the close; or the compaction,
    then the close); ``synced``: the most entries a sync before the crash covered.
    """
    if exp.durability not in ("per_append", "batch"):
        return None
    if exp.operation == "compaction_amid_appends":
        last = len(exp.versions) - 1
        return min(acked, last) if exp.durability == "per_append" or acked > last else 0
    if exp.operation == "append":
        done = min(acked, exp.appends)
        if exp.durability == "per_append" or acked > exp.appends:  # closed: a batch store synced
            return done
        return max(0, min(done, synced - exp.prefix))
    if exp.durability == "per_append":
        return 1 if acked >= 1 else 0
    return 1 if acked >= 2 or (acked >= 1 and synced > exp.prefix) else 0


def _acked_version(exp: Expectation, acked: int) -> int:
    return min(acked, len(exp.versions) - 1)


def _label(exp: Expectation, index: int) -> str:
    if exp.operation == "compaction_amid_appends":
        half = exp.appends // 2
        return f"old+{index}" if index <= half else f"new+{index - half - 1}"
    if exp.operation != "append":
        return ("old", "new")[index]
    return "old" if index == 0 else f"+{index}"


def judge_state(exp: Expectation, result: RecoveryOutcome, *, acked: int, synced: int, mode: str) -> Outcome:
    """Judge what :func:`recover_case` read back from a state a crash left (module docstring)."""
    floor = promised_version(exp, acked, synced)
    seen = _acked_version(exp, acked)
    if not result.loadable or result.recovered is None:
        refused = mode in REFUSING_MODES and exp.modes_offered > 1
        kinds = ("not_loadable",) if floor is not None and not refused else ()
        return Outcome(False, refused, kinds, len(exp.versions[seen]), 0, "-", result.error)
    recovered = result.recovered
    ids = result.ids or [None] * len(recovered)
    known = {d for version in exp.versions for d in version}
    kinds: list[str] = []
    unknown = [i for i, d in enumerate(recovered) if d not in known]
    if any(ids[i] in exp.known_ids for i in unknown):
        kinds.append("altered")
    if any(ids[i] not in exp.known_ids for i in unknown):
        kinds.append("invented")
    kept = [d for d in recovered if d in known]
    scores = [compare(version, len(version), kept) for version in exp.versions]  # (missing, out of order)
    if all(out_of_order for _, out_of_order in scores):
        old, new = set(exp.versions[0]), set(exp.versions[-1])
        mixed = exp.operation != "append" and any(d in old - new for d in kept) and any(d in new - old for d in kept)
        kinds.append("mixed_compaction" if mixed else "invented")
    if floor is not None and min(missing for missing, _ in scores[floor:]) > 0:
        kinds.append("lost_durable")
    if result.live_ok is False:
        kinds.append("live_mismatch")
    exact = [i for i, version in enumerate(exp.versions) if tuple(recovered) == version]
    matched = _label(exp, exact[-1]) if exact else "other"
    lost = min(missing for missing, _ in scores[seen:])
    ordered = tuple(k for k in VIOLATIONS if k in kinds)
    return Outcome(True, False, ordered, lost, result.good_lines_discarded, matched, result.error)


class _Hung(BaseException):
    """Raised by the alarm inside a recovery that overran its time (a BaseException: recover_case
    catches Exception, and a hang must not be mistaken for an ordinary failure)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Hung


def recover_state(store: StoreSpec, session_id: str, root: str, mode: str, timeout: float) -> RecoveryOutcome:
    """:func:`recover_case` on ``root`` in this process, given up after ``timeout`` seconds (not loadable)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return recover_case(store, session_id, root, mode)
    except _Hung:
        return RecoveryOutcome(mode=mode, error=f"hung: recovery gave no answer in {timeout} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
