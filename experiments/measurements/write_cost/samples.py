"""Write cost: time every append of a strategy beside raw writes of the same bytes, in one run.

For each entry ``i`` the harness times, back to back:

* ``strategy``: ``store.append(session, entry)`` (encoding included: that is part of its cost);
* ``raw_write``: one ``os.write`` of the entry's JSONL line to an ``O_APPEND`` file;
* ``raw_write_fdatasync``: the same ``os.write`` to a second ``O_APPEND`` file, then
  ``os.fdatasync`` -- only beside strategies that sync every append themselves (see below);
* ``encode``: aptmem's encoding of another fresh copy of the entry into a new line
  (:func:`aptmem.entries.encode_line`): the serialization every strategy storing aptmem's JSON
  pays, so an append can be read as encode + write + the strategy's own overhead.

Why interleave per entry: on a shared, noisy machine the background load drifts over seconds
(other jobs, page-cache writeback, CPU frequency). Timing the operations for the same entry
within microseconds of each other makes them see the same conditions, so the ratio of a strategy
to the raw write is a paired comparison, not a comparison of two different minutes; blocks (all
appends, then all raw writes) would let a noisy minute land on one side only.

Why a random order per entry (seeded; the ``slot`` column records it): the operation that runs
right after an ``fdatasync`` (or first, with colder caches) pays a wake-up cost. A fixed rotation
S-R-F, R-F-S, F-S-R does not spread that evenly -- concatenated, the append follows the sync in
two entries out of three. A uniformly random permutation gives the append and the raw write the
same chances of every position and every predecessor.

Why the fdatasync baseline only beside strategies that sync per append (by default): its journal
commits disturb everything near them. Measured here (ext4 on a 2-core VM, 5,000 entries):
``jsonl_none`` appends have a median of ~6.4 us alone and 15-18 us with a raw fdatasync
interleaved, the raw write ~2.2 us against ~4.5 us. A strategy that never syncs would be
charged for a neighbour it does not have, and its ratio to the raw write would be taken in a
state it never runs in. A strategy that syncs per append lives with those commits anyway, so
for it the three are timed together; ``sync_baseline="all"`` restores the baseline everywhere.

Also: the appended entries are fresh copies decoded from the lines the raw writes use, and the
GC is told to ignore the harness's own objects (``gc.freeze``); see the code for why.

Why strategies take turns (rounds) rather than run one after another: see
:func:`measure_strategies`.

Every sample is kept (one row per timed operation); :mod:`experiments.measurements.write_cost.summary`
turns them into percentiles and ratios.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import os
import random
import shutil
import tempfile
import uuid
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from time import perf_counter_ns

import polars as pl

from aptmem.entries import Entry, decode_line, encode_line
from experiments.core.strategy import StrategySpec, build_store, capabilities

__all__ = ["KINDS", "SAMPLE_SCHEMA", "measure_strategies", "measure_write_cost", "replayed"]

#: the ``kind`` of a sample.
KINDS = ("strategy", "raw_write", "encode", "raw_write_fdatasync")

#: the columns of the samples table, in order.
SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "strategy": pl.String(),  # config name, e.g. jsonl_none
    "family": pl.String(),  # the strategy config's family
    "durable": pl.Boolean(),  # the config's promise: acknowledged appends survive a power loss
    "durability": pl.String(),  # the store's declared capabilities.durability
    "variant": pl.String(),  # the store's settings, "key=value;..." in config order
    "seq": pl.Int64(),  # 1-based index of the entry in the session
    "bytes": pl.Int64(),  # bytes of the entry's JSONL line (what the raw writes write)
    "kind": pl.String(),  # strategy | raw_write | encode | raw_write_fdatasync
    "slot": pl.Int8(),  # position of this operation among the entry's timed operations (0-based)
    "latency_ns": pl.Int64(),  # perf_counter_ns around the one operation
}


def _session_id(name: str) -> str:
    # A fixed id per strategy, so reruns touch the same file names; shaped as a UUID v4.
    digest = hashlib.sha256(f"aptmem-write-cost:{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


@contextlib.contextmanager
def _harness_frozen() -> Iterator[None]:
    """Hide every object alive now from the GC while the appends are timed.

    The entries are harness data, not the strategies': frozen out of the GC's view, a full
    collection does not spend time (charged to whichever operation triggers it) walking
    thousands of entries no strategy allocated. Once for the whole replay, not per round: a
    full collection with the peers' libraries imported takes a fifth of a second, and a hundred
    of them had tripled the measurement's wall time.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Timer:
    """One strategy's store, baseline files and preallocated sample arrays, advanced a slice at a time.

    :func:`measure_strategies` keeps one per strategy open at once and moves them forward in turns
    (see its docstring); :func:`measure_write_cost` drives one alone.
    """

    def __init__(self, strategy: StrategySpec, entries: Sequence[Entry], *, base_dir: str | os.PathLike[str] | None,
                 sync_baseline: bool, order_seed: int) -> None:
        self.strategy = strategy
        self.kinds = 4 if sync_baseline else 3
        self.lines = [encode_line(e) for e in entries]  # the raw writes get exactly these bytes, pre-encoded
        # The strategy appends fresh copies decoded from those bytes, as an agent appends objects it
        # just built: encoding the caller's own objects above could have left CPython caches (the
        # per-string UTF-8 form) warm and given the strategy's encode a discount it never gets.
        # The encode baseline gets fresh copies of its own, for the same reason.
        self.fresh = [decode_line(line[:-1]) for line in self.lines]
        self.fresh_for_encode = [decode_line(line[:-1]) for line in self.lines]
        n = len(self.lines)
        self.latency = array("q", bytes(8 * self.kinds * n))  # preallocated: nothing is allocated while timing
        self.slots = array("b", bytes(self.kinds * n))
        perms = list(itertools.permutations(range(self.kinds)))
        order_rng = random.Random(order_seed)
        self.orders = [perms[order_rng.randrange(len(perms))] for _ in range(n)]
        self.done = 0
        self.short = 0
        self.session = _session_id(strategy.name)
        self.root = Path(tempfile.mkdtemp(prefix=f"write-cost-{strategy.name}-", dir=base_dir))
        self.fds: list[int] = []
        self.store = None
        try:
            self.store = build_store(strategy, self.root / "store")
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self.fds.append(os.open(self.root / "raw.jsonl", flags, 0o600))
            self.fds.append(os.open(self.root / "raw_fdatasync.jsonl", flags, 0o600))
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.lines)

    def advance(self, upto: int, progress: Callable[[int], object] | None = None) -> None:
        """Time the entries up to index ``upto`` (exclusive) not timed yet."""
        append, write, fdatasync, encode = self.store.append, os.write, os.fdatasync, encode_line
        raw_fd, sync_fd = self.fds
        kinds, latency, slots, session = self.kinds, self.latency, self.slots, self.session
        start, upto = self.done, min(upto, len(self.lines))
        # The GC is held frozen by the caller (see _harness_frozen).
        for i in range(start, upto):
            entry, line = self.fresh[i], self.lines[i]
            for slot, kind in enumerate(self.orders[i]):
                if kind == 0:
                    t0 = perf_counter_ns()
                    append(session, entry)
                    t1 = perf_counter_ns()
                elif kind == 1:
                    t0 = perf_counter_ns()
                    written = write(raw_fd, line)
                    t1 = perf_counter_ns()
                    self.short += written != len(line)
                elif kind == 2:
                    copy = self.fresh_for_encode[i]
                    t0 = perf_counter_ns()
                    encode(copy)
                    t1 = perf_counter_ns()
                else:
                    t0 = perf_counter_ns()
                    written = write(sync_fd, line)
                    fdatasync(sync_fd)
                    t1 = perf_counter_ns()
                    self.short += written != len(line)
                latency[i * kinds + kind] = t1 - t0
                slots[i * kinds + kind] = slot
            if progress is not None and (i + 1 - start) % 64 == 0:
                progress(64)
        if progress is not None and (upto - start) % 64:
            progress((upto - start) % 64)
        self.done = upto

    def finish(self) -> pl.DataFrame:
        """Check the store holds every entry; close it; return the samples. Raises ``RuntimeError`` otherwise."""
        n = len(self.lines)
        if self.short:
            raise RuntimeError(f"{self.short} raw writes were short; the baseline is void")
        stored = self.store.stats(self.session).entries if n else 0
        self.store.close()
        if stored != n:
            raise RuntimeError(f"{self.strategy.name}: appended {n} entries but the store holds {stored}")
        durability = str(self.store.capabilities.durability)
        return _table(self.strategy, durability, self.lines, self.latency, self.slots, self.kinds)

    def close(self) -> None:
        """Close the store (again, after a failure: closing twice is allowed by every store) and remove its folder."""
        if self.store is not None:
            self.store.close()
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        shutil.rmtree(self.root, ignore_errors=True)


def measure_write_cost(
    strategy: StrategySpec,
    entries: Sequence[Entry],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    sync_baseline: bool = True,
    order_seed: int = 0,
    progress: Callable[[int], object] | None = None,
) -> pl.DataFrame:
    """Append ``entries`` to a fresh store of ``strategy`` and return every timed sample.

    The store lives in a new temporary folder under ``base_dir`` (the system's by default),
    removed afterwards; the raw baseline files sit beside it on the same file system.
    ``sync_baseline`` False leaves out the ``raw_write_fdatasync`` samples (their journal
    commits disturb a non-syncing strategy's neighbourhood; see the module docstring).
    ``order_seed`` seeds the random order of the operations timed for each entry.
    ``progress`` is called with the number of entries done since its last call.

    Returns one row per sample with the columns of :data:`SAMPLE_SCHEMA`; ``len(entries)``
    times the number of kinds measured rows. Raises ``RuntimeError`` if the store does not hold
    exactly the appended entries afterwards.
    """
    timer = _Timer(strategy, entries, base_dir=base_dir, sync_baseline=sync_baseline, order_seed=order_seed)
    try:
        with _harness_frozen():
            timer.advance(len(timer), progress)
        return timer.finish()
    finally:
        timer.close()


def _table(strategy: StrategySpec, durability: str, lines: list[bytes], latency: array, slots: array,
           kinds: int) -> pl.DataFrame:
    """Lay the samples out as the tidy table of :data:`SAMPLE_SCHEMA`."""
    n = len(lines)
    sizes = [len(line) for line in lines]
    return pl.DataFrame(
        {
            "strategy": [strategy.name] * (kinds * n),
            "family": [strategy.family] * (kinds * n),
            "durable": [strategy.durable] * (kinds * n),
            "durability": [durability] * (kinds * n),
            "variant": [strategy.variant] * (kinds * n),
            "seq": [i + 1 for i in range(n) for _ in range(kinds)],
            "bytes": [s for s in sizes for _ in range(kinds)],
            "kind": list(KINDS[:kinds]) * n,
            "slot": slots.tolist(),
            "latency_ns": latency.tolist(),
        },
        schema=SAMPLE_SCHEMA,
    )


def measure_strategies(
    strategies: Sequence[StrategySpec],
    entries: Sequence[Entry],
    *,
    quadratic_entries: int = 0,
    base_dir: str | os.PathLike[str] | None = None,
    sync_baseline: str = "per_append",
    order_seed: int = 0,
    rounds: int = 1,
    progress: Callable[[int], object] | None = None,
) -> pl.DataFrame:
    """Measure the strategies on (a prefix of) ``entries``, taking turns; return all samples in one table.

    A strategy that declares ``quadratic_appends`` (each append rewrites the whole history, so the
    replay is quadratic in total) replays only its first ``quadratic_entries`` entries (0: all).
    ``sync_baseline`` is ``"per_append"`` (time ``os.write`` + ``fdatasync`` only beside
    strategies that declare per-append durability, the ones it is compared with; the others run
    without fdatasyncs beside them, see the module docstring) or ``"all"`` (beside every one).

    Why turns: strategies measured one after another each get a different minute of a shared
    machine, and a disk that turns slow for a minute (another job's writeback: measured here, the
    fdatasync step went from about 0.1 to 4 ms) lands on whichever strategy ran then, so two runs
    ranked the durable stores in opposite orders. All stores are open at once and the replay is cut
    into ``rounds``: in each round every strategy, in a seeded random order, appends its next
    ``1/rounds`` of the entries. A slow minute then falls on all of them alike, and the rounds are
    the blocks of the median's bootstrap (``summarize(blocks=rounds)``), so drift within the run
    widens the intervals instead of tilting the ranking.
    """
    if sync_baseline not in ("all", "per_append"):
        raise ValueError("sync_baseline must be 'all' or 'per_append'")
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    timers: list[_Timer] = []
    try:
        for strategy in strategies:
            count = replayed(strategy, len(entries), quadratic_entries)
            with_sync = sync_baseline == "all" or capabilities(strategy).durability == "per_append"
            timers.append(_Timer(strategy, entries[:count], base_dir=base_dir, sync_baseline=with_sync,
                                 order_seed=order_seed))
        turn_rng = random.Random(order_seed)
        with _harness_frozen():
            for r in range(1, rounds + 1):
                for timer in turn_rng.sample(timers, len(timers)):
                    timer.advance(-(-len(timer) * r // rounds), progress)  # ceil: the last round ends at the end
        tables = [timer.finish() for timer in timers]
    finally:
        for timer in timers:
            timer.close()
    return pl.concat(tables) if tables else pl.DataFrame(schema=SAMPLE_SCHEMA)


def replayed(strategy: StrategySpec, entries: int, quadratic_entries: int) -> int:
    """How many of ``entries`` the strategy replays: all, or at most ``quadratic_entries`` (when not 0)
    of a strategy whose appends rewrite the whole history."""
    if strategy.quadratic_appends and quadratic_entries:
        return min(entries, quadratic_entries)
    return entries
