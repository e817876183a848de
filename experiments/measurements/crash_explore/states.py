"""Every state a power loss could leave, enumerated from an operation log (ALICE-style).

A crash strikes after ``point`` operations of the log (``0 .. len(ops)``). What the disk then
holds follows the POSIX rules, as :mod:`experiments.core.crashsim.fs_model` models them:

* a file's data operation (write, truncate) is durable once a later ``fsync``/``fdatasync`` of
  that file was issued; until then it may or may not have reached the disk, in any subset (a
  later write may land while an earlier one is lost: a *reordering*), and a write may land torn
  or as NUL bytes (its size recorded, its data not: ext4's delayed allocation);
* an operation on the folder's names (create, rename, unlink) is durable once a later fsync of
  the folder was issued; until then it may be undone. Name operations reach the disk in the order
  they were issued (every journaling file system commits them in order; POSIX does not promise
  even that, but no careful program survives without it), so the ones that survive are a prefix
  of the pending ones;
* data and names are independent: a renamed file may be on disk under its new name without its
  data, or its data without the name.

For each crash point the states are (the *kind* names the table rows):

* ``prefix``: every operation issued reached the disk;
* ``torn`` / ``torn_zero``: the last operation is a write, and only its first ``b`` bytes reached
  the disk (the rest absent / the rest NUL bytes), for every ``b`` in ``1 .. len - 1``, or
  ``torn_max`` seeded values of ``b`` for a longer write;
* ``zero``: one pending write (each in turn) reached the disk as NUL bytes, the rest whole;
* ``dropped`` / ``reordered`` / ``undone``: a subset of the pending operations reached the disk,
  the rest did not: ``dropped`` when the surviving data writes are the earliest pending ones,
  ``reordered`` when a later one survived an earlier one, ``undone`` when a pending name operation
  (a rename not yet synced, say) is undone. Every subset (``2^data x (names + 1) - 1`` of them,
  the one equal to ``prefix`` left out) when there are at most ``max_subsets``, else
  ``max_subsets`` seeded distinct ones (always including "nothing pending survived").

No two states of one crash point have the same recipe, so the counts are exact and can be
worked out by hand for a small log (``tests/test_crash_explore.py`` does).

A budget (:func:`choose`) can cap how many of them are recovered: torn writes get at least half of
it (when there are that many), the other states the rest, and each side is drawn with a seed when it
has more than its share; one side's unused share goes to the other. A long log of page-sized writes
(SQLite) then costs a bounded time and still has its torn writes and its reorderings explored.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from experiments.core.crashsim.oplog import Disk, OpLog, Write, describe

__all__ = ["KINDS", "Limits", "StateSpec", "choose", "enumerate_states", "materialize", "torn_positions"]

#: The kinds of crash state, in report order.
KINDS = ("prefix", "torn", "torn_zero", "zero", "dropped", "reordered", "undone")


@dataclass(frozen=True)
class Limits:
    """How far the enumeration goes: ``torn_max`` torn bytes per write, ``max_subsets`` per point."""

    torn_max: int = 64
    max_subsets: int = 16
    seed: str = "0"


@dataclass(frozen=True)
class StateSpec:
    """The recipe of one crash state: which issued operations did not reach the disk, and which
    write reached it only in part (``altered``: op index, ``torn`` | ``torn_zero`` | ``zero``, bytes kept)."""

    point: int
    kind: str
    dropped: tuple[int, ...] = ()
    altered: tuple[int, str, int] | None = None

    def detail(self, log: OpLog) -> str:
        """Where the crash struck and what the disk lost, in words."""
        where = f"after op {self.point}/{len(log.ops)}" + (f" ({describe(log, self.point - 1)})" if self.point else "")
        parts = [where]
        if self.altered is not None:
            index, how, kept = self.altered
            size = len(log.ops[index].data)  # type: ignore[union-attr]
            parts.append({"torn": f"op {index + 1} torn after {kept} of {size} B",
                          "torn_zero": f"op {index + 1}: {kept} of {size} B, then NUL bytes",
                          "zero": f"op {index + 1} ({size} B) reached the disk as NUL bytes"}[how])
        if self.dropped:
            lost = ", ".join(str(i + 1) for i in self.dropped[:8]) + (" ..." if len(self.dropped) > 8 else "")
            parts.append(f"ops not on disk: {lost}")
        return "; ".join(parts)


def torn_positions(length: int, limit: int, rng: random.Random) -> list[int]:
    """Where a write of ``length`` bytes can be torn: every byte ``1 .. length - 1``, or ``limit``
    seeded ones (sorted) when there are more."""
    if length - 1 <= limit:
        return list(range(1, length))
    return sorted(rng.sample(range(1, length), limit))


def _subsets(data: list[int], names: list[int], limit: int, rng: random.Random) -> list[tuple[frozenset[int], int]]:
    """(surviving data ops, surviving name ops count) pairs, the all-surviving one left out."""
    total = (1 << len(data)) * (len(names) + 1) - 1
    everything = (frozenset(data), len(names))
    if total <= limit:
        out = []
        for mask in range(1 << len(data)):
            kept = frozenset(op for bit, op in enumerate(data) if mask >> bit & 1)
            for count in range(len(names) + 1):
                if (kept, count) != everything:
                    out.append((kept, count))
        return out
    chosen: list[tuple[frozenset[int], int]] = []
    seen = {everything}

    def add(choice: tuple[frozenset[int], int]) -> None:
        if choice not in seen and len(chosen) < limit:
            seen.add(choice)
            chosen.append(choice)

    add((frozenset(), 0))  # nothing pending survived
    tries = 0
    while len(chosen) < limit and tries < limit * 50:
        tries += 1
        bits = rng.getrandbits(len(data)) if data else 0
        add((frozenset(op for bit, op in enumerate(data) if bits >> bit & 1), rng.randint(0, len(names))))
    return chosen


def _subset_kind(data: list[int], kept: frozenset[int], names: list[int], count: int) -> str:
    if count < len(names):
        return "undone"
    return "dropped" if kept == frozenset(data[: len(kept)]) else "reordered"


def enumerate_states(log: OpLog, limits: Limits) -> Iterator[StateSpec]:
    """Every crash state of ``log`` under ``limits`` (see the module docstring), crash point by point."""
    for point in range(len(log.ops) + 1):
        data, names = log.pending(point)
        yield StateSpec(point, "prefix")
        last = log.ops[point - 1] if point else None
        if isinstance(last, Write) and len(last.data) >= 2:
            spots = torn_positions(len(last.data), limits.torn_max, random.Random(f"{limits.seed}:torn:{point}"))
            for how in ("torn", "torn_zero"):
                for kept in spots:
                    yield StateSpec(point, how, altered=(point - 1, how, kept))
        for index in data:
            if isinstance(log.ops[index], Write):
                yield StateSpec(point, "zero", altered=(index, "zero", 0))
        rng = random.Random(f"{limits.seed}:subsets:{point}")
        for kept, count in _subsets(data, names, limits.max_subsets, rng):
            dropped = tuple(sorted({*(op for op in data if op not in kept), *names[count:]}))
            yield StateSpec(point, _subset_kind(data, kept, names, count), dropped=dropped)


def choose(specs: list[StateSpec], budget: int, rng: random.Random) -> list[StateSpec]:
    """At most ``budget`` of ``specs`` (0: all), in their order: torn states get at least half the
    budget when there are that many, the others the rest; a side with more than its share is drawn
    with ``rng`` (see the module docstring)."""
    if budget <= 0 or len(specs) <= budget:
        return specs
    torn = [i for i, spec in enumerate(specs) if spec.kind in ("torn", "torn_zero")]
    other = [i for i, spec in enumerate(specs) if spec.kind not in ("torn", "torn_zero")]
    torn_share = max(budget - len(other), min(len(torn), budget // 2))
    keep = set(rng.sample(torn, torn_share)) | set(rng.sample(other, min(len(other), budget - torn_share)))
    return [spec for i, spec in enumerate(specs) if i in keep]


def materialize(log: OpLog, spec: StateSpec) -> dict[str, bytes]:
    """The files a crash state leaves: every name and its bytes."""
    disk = Disk.initial(log)
    skip = set(spec.dropped)
    altered_index = spec.altered[0] if spec.altered is not None else -1
    for index, op in enumerate(log.ops[: spec.point]):
        if index in skip:
            continue
        if index == altered_index and isinstance(op, Write):
            _, how, kept = spec.altered  # type: ignore[misc]
            if how == "torn":
                op = Write(op.ino, op.offset, op.data[:kept])
            else:  # torn_zero, zero: the size was recorded, the data from ``kept`` on was not
                op = Write(op.ino, op.offset, op.data[:kept] + bytes(len(op.data) - kept))
        disk.apply(op)
    return disk.files()
