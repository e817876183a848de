"""Hostile input through every strategy of the run: the cases a store itself must refuse.

Each strategy's store gets each hostile session id (:func:`~experiments.measurements.hostile.cases.hostile_ids`),
an entry holding an integer no JSON reader takes back (10,000 digits), and an append whose
``fsync``/``fdatasync`` fails with EIO (Python's ``os`` functions replaced for that one call, in
this process, while no other thread runs), through its own ``append``: it must refuse them with
one of aptmem's errors and keep everything stored. The fsync case applies only to a store that
syncs every append through Python's ``os`` module; the others say why not in their YAML. A case
category a strategy declares ``not_applicable`` in its YAML is recorded as ``skipped`` with the
declared reason, so the report says what was not tried and why, and no harness code names a strategy.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Sequence
from unittest import mock

from aptmem.entries import ToolCall, User
from experiments.core.strategy import StrategySpec, build_store
from experiments.measurements.hostile.cases import SID, SID2, Case, Scratch, hostile_ids, library
from experiments.measurements.hostile.result import CaseResult

__all__ = ["CATEGORIES", "store_cases"]

#: The categories of the per-store cases (what a YAML's ``not_applicable`` may name).
CATEGORIES = ("session id", "long number", "fsync error")


def _skipped(reason: str) -> Callable[[Scratch], CaseResult]:
    def run(s: Scratch) -> CaseResult:
        return CaseResult(outcome="skipped", error=None, clear=True, intact=s.intact(), note=f"not applicable: {reason}")

    return run


def _through(strategy: StrategySpec, action: Callable[[object, Scratch], object]) -> Callable[[Scratch], CaseResult]:
    """A case run against a fresh store of ``strategy`` under the scratch root."""
    def run(s: Scratch) -> CaseResult:
        store = build_store(strategy, s.root)
        try:
            return library(s, lambda: action(store, s))
        finally:
            store.close()

    return run


def store_cases(strategies: Sequence[StrategySpec]) -> Iterator[Case]:
    """The per-store cases of every strategy, in the run's order."""
    for strategy in strategies:
        surface = f"library: {strategy.name} append"
        skip = strategy.not_applicable
        for what, template in hostile_ids("{base}"):
            def hostile_append(store: object, s: Scratch, template: str = template) -> object:
                return store.append(template.replace("{base}", str(s.base)), User(content="x", ts=1))  # type: ignore[attr-defined]

            run = _skipped(skip["session id"]) if "session id" in skip else _through(strategy, hostile_append)
            yield Case("session id", what, surface, "refused", run)

        def big(store: object, s: Scratch) -> object:
            return store.append(SID, ToolCall(name="calc", args={"n": 10**10_000}, ts=7))  # type: ignore[attr-defined]

        run = _skipped(skip["long number"]) if "long number" in skip else _through(strategy, big)
        yield Case("long number", "integer of 10,000 digits", surface, "refused", run)

        run = _skipped(skip["fsync error"]) if "fsync error" in skip else _through(strategy, _append_fsync_eio)
        yield Case("fsync error", "fsync and fdatasync raise EIO during an append", surface, "refused", run)


def _eio(*_args: object) -> None:
    raise OSError(errno.EIO, os.strerror(errno.EIO))


def _append_fsync_eio(store: object, s: Scratch) -> object:
    """One append to a session of its own, then one whose syncs fail (the case's finding is what it raises)."""
    store.append(SID2, User(content="kept", ts=1, id="k1"))  # type: ignore[attr-defined]
    with mock.patch.object(os, "fsync", _eio), mock.patch.object(os, "fdatasync", _eio):
        return store.append(SID2, User(content="not synced", ts=2, id="k2"))  # type: ignore[attr-defined]
