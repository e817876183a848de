"""Stateful property tests: every strategy, driven by hypothesis, against an in-memory model.

Rules: append, append_many, compact (a compaction appended naming a kept entry, or the history
rewritten with ``replace``), crash, recover, reopen. A crash never asks the store (see
:mod:`crash_disk`): a process crash keeps what the kernel holds; a power loss also tears, zero-
fills or drops what the store had not synced; a crash in the middle of an append leaves part of
the unacknowledged write behind.

What must hold, each strategy judged by its own promise (``capabilities.durability``):

* after every step, the store reads back exactly the acknowledged history, ``read_live`` equals
  ``select_live`` of it, and ``stats`` counts it;
* after a crash, what is read is a prefix of an acknowledged history, nothing invented or
  altered (the unacknowledged entry of a torn append may follow it, whole). A process crash
  loses nothing acknowledged (except where the promise is ``none``). A power loss loses nothing
  acknowledged-durable: everything for ``per_append``, all but the entries since the last sync
  for ``batch``; for ``process`` and ``none`` the loss is counted, not judged;
* recovery loses nothing a read had already returned, and a mode that refuses damage (JSONL's
  ``strict``) changes nothing.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from state_machine_model import EntryMaker, Model, entry_specs

from aptmem.entries import Compaction, encode_line
from aptmem.errors import CorruptLogError
from aptmem.store import select_live
from conftest import require_available
from crash_disk import POWER_LOSSES, Disk, scratch_base
from experiments.core.strategy import build_store, load_strategy, strategy_names
from strategies.json_array import encode_array_into

STRATEGIES = strategy_names()
CRASHES = ("process", *POWER_LOSSES, "torn_append")


def machine_for(strategy: str, base: Path) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one strategy config, its roots under ``base``."""
    cfg = load_strategy(strategy)
    # Only a strategy whose file operations are Python's ``os`` calls is traced (its unsynced bytes
    # known); a SQLite WAL synced at every commit loses at most the commit in flight.
    traced = cfg.power_loss.model == "trace"
    wal_full = cfg.power_loss.model == "sqlite_wal" and cfg.power_loss.region == "last_commit"

    class StoreMachine(RuleBasedStateMachine):
        """One session of ``strategy`` under append / compact / crash / recover / reopen."""

        def __init__(self) -> None:
            super().__init__()
            folder = Path(tempfile.mkdtemp(prefix="aptmem-sm-", dir=base))
            self.disk = Disk(folder, traced=traced, wal_full=wal_full)
            self.stores: list[Any] = []
            self.store = self._open()
            caps = self.store.capabilities
            batch = int(cfg.store.settings.get("batch_size", 1)) if caps.durability == "batch" else 1
            self.model = Model(caps.durability, batch)
            self.modes = caps.recovery_modes
            self.make = EntryMaker()
            self.sid = "0b0c2c3e-5d7a-4e4f-9a1b-2c3d4e5f6a7b"

        def _open(self) -> Any:
            """Build a new store of the strategy on the disk's current root."""
            store = build_store(cfg, self.disk.root)
            self.stores.append(store)
            return store

        def teardown(self) -> None:
            """Close every store built (abandoned ones too), put ``os`` back, remove the roots."""
            try:
                for store in reversed(self.stores):
                    try:
                        store.close()
                    except Exception:  # noqa: BLE001 - an abandoned store may fail to close: it crashed
                        pass
            finally:
                self.disk.cleanup()
                shutil.rmtree(self.disk.base, ignore_errors=True)

        # -- reading --------------------------------------------------------------------------

        def read(self) -> list[Any] | None:
            """The session as the store reads it now ([] when it does not exist; None: not loadable)."""
            if not self.store.exists(self.sid):
                return []
            try:
                return list(self.store.iter_entries(self.sid))
            except CorruptLogError:
                return None

        # -- rules ----------------------------------------------------------------------------

        @rule(spec=entry_specs())
        def append(self, spec: tuple) -> None:
            """One entry appended and acknowledged."""
            entry = self.make.entry(spec)
            self.store.append(self.sid, entry)
            self.model.acknowledged([entry])

        @rule(specs=st.lists(entry_specs(), max_size=4))
        def append_many(self, specs: list[tuple]) -> None:
            """A batch (possibly empty) appended and acknowledged."""
            entries = [self.make.entry(spec) for spec in specs]
            self.store.append_many(self.sid, entries)
            self.model.acknowledged(entries)

        @rule(pick=st.integers(0, 1000), named=st.sampled_from(["kept", "none", "missing"]), legacy=st.booleans())
        def compact_append(self, pick: int, named: str, legacy: bool) -> None:
            """An appended compaction naming an entry it keeps (or none, or an id nobody has)."""
            marker = self.make.compaction(self.model.acked, pick, named, legacy)
            self.store.append(self.sid, marker)
            self.model.acknowledged([marker])

        @rule(pick=st.integers(0, 1000))
        def compact_rewrite(self, pick: int) -> None:
            """The ``rewrite`` way: the history becomes a compaction and the entries it keeps."""
            acked = self.model.acked
            kept = acked[pick % (len(acked) + 1):]
            marker = self.make.compaction(kept, 0, "kept" if kept else "none", False)
            history = [marker, *kept]
            self.store.replace(self.sid, history)
            self.model.rewritten(history)

        @rule(kind=st.sampled_from(CRASHES), seed=st.integers(0, 2**32 - 1), spec=entry_specs())
        def crash(self, kind: str, seed: int, spec: tuple) -> None:
            """Crash without the store's cooperation, start a new store on what is left, judge it."""
            rng = random.Random(seed)
            inflight = None
            if kind in POWER_LOSSES:
                self.disk.power_loss(kind, rng)
            else:
                if kind == "torn_append" and traced:
                    inflight = self.make.entry(spec)
                    self._append_killed(inflight, rng)  # the crash happens inside the write
                else:
                    self.disk.process_crash()
            self.store = self._open()
            got = self.read()
            lost_before = self.model.lost
            self.model.judge_crash(kind, got, inflight, seed, self.store.exists(self.sid))
            # Shown by ``pytest --hypothesis-show-statistics``: which crashes ran and what they cost.
            event(f"crash {kind}: " + ("not loadable" if got is None else "lost entries" if self.model.lost > lost_before else "nothing lost"))
            if got is None:
                # Not loadable and allowed to be (no promise): start the session over, as a user must.
                self.store.replace(self.sid, [])
                self.model.rewritten([])

        def _append_killed(self, entry: Any, rng: random.Random) -> None:
            """Append ``entry`` through the store, killing it in the middle of writing the entry's bytes.

            The store does all it does before that write (heal a torn tail, open its writer, truncate
            the file in place); the write of the line (JSONL) or of the whole array (full JSON) gets
            only some of its bytes to the kernel, and the files are taken as they are at that moment
            (the store's own cleanup as the exception unwinds, e.g. removing a temp file, comes too
            late to count). Only the families whose writes go through Python's ``os`` are cut so
            (``power_loss.model: trace`` in its YAML): SQLite's writes are C code, and the peers write through
            ``io`` or a server, so for them a torn append is a plain process crash.
            """
            if cfg.power_loss.lines:  # one entry a line (JSONL); else the whole array
                target = encode_line(entry)
            else:
                buffer = bytearray()
                encode_array_into([*self.model.acked, entry], buffer)
                target = bytes(buffer)
            write = os.write

            def cut(fd: int, data: Any) -> int:
                if bytes(data) != target:
                    return write(fd, data)
                write(fd, bytes(data)[: rng.randrange(1, len(target))])
                self.disk.process_crash()  # swaps the traced os functions for a new model's
                raise _Killed

            os.write = cut
            try:
                self.store.append(self.sid, entry)
                raise AssertionError(f"{strategy}: the append never wrote the entry's bytes in one write")
            except _Killed:
                pass
            finally:
                if os.write is cut:
                    os.write = write

        @rule(mode_pick=st.integers(0, 3))
        def recover(self, mode_pick: int) -> None:
            """Recover in one of the store's modes: nothing read before is lost; a refusal changes nothing."""
            if not self.store.exists(self.sid):
                return
            mode = self.modes[mode_pick % len(self.modes)]
            before = self.read()
            report = self.store.recover(self.sid, mode)
            after = self.read()
            if not report.loadable:
                assert mode == "strict" and len(self.modes) > 1, f"{strategy}: recover({mode}) refused: {report.error}"
                assert after == before, f"{strategy}: a refusing recovery changed the session"
            else:
                assert after == before, f"{strategy}: recover({mode}) changed what is read: {before} -> {after}"
            self.model.recovered()

        @rule()
        def reopen(self) -> None:
            """Close the store (it syncs as its policy promises) and open a new one on the same files."""
            self.store.close()
            self.store = self._open()
            self.model.closed()

        # -- invariants ---------------------------------------------------------------------------

        @invariant()
        def reads_back_what_was_acknowledged(self) -> None:
            """The store reads exactly the acknowledged history; read_live and stats agree with it."""
            if not self.model.exists:
                return
            got = self.read()
            assert got == self.model.acked, f"{strategy}: read {got!r}\n expected {self.model.acked!r}"
            assert self.store.read_live(self.sid) == select_live(self.model.acked), f"{strategy}: read_live"
            stats = self.store.stats(self.sid)
            assert stats.entries == len(self.model.acked)
            assert stats.compactions == sum(isinstance(e, Compaction) for e in self.model.acked)

    StoreMachine.__name__ = f"StoreMachine_{strategy}"
    return StoreMachine


class _Killed(BaseException):
    """The writing process was killed (raised from inside a write, so nothing after it runs)."""


def _run(strategy: str, tmp_path: Path, config: settings) -> None:
    """Run the machine of ``strategy``; on failure, say which settings to reproduce it with."""
    require_available(strategy, tmp_path / "probe")  # a server strategy without its server: skipped, saying why
    base = Path(tempfile.mkdtemp(prefix="aptmem-sm-", dir=scratch_base(tmp_path)))
    try:
        run_state_machine_as_test(machine_for(strategy, base), settings=config)
    except Exception as exc:
        where = (f"strategy={strategy} max_examples={config.max_examples} stateful_step_count={config.stateful_step_count} "
                 f"derandomize={config.derandomize} suppressed health checks={list(config.suppress_health_check)} "
                 f"(hypothesis prints the failing steps and a reproduce blob above)")
        raise AssertionError(where) from exc
    finally:
        shutil.rmtree(base, ignore_errors=True)


#: The default run: few examples, derandomized (a fixed seed from the test's name) so CI is stable.
FAST = settings(max_examples=20, stateful_step_count=25, deadline=None, derandomize=True, database=None,
                print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
#: The slow run: many more examples, a fresh random seed each time (printed with any failure).
SLOW = settings(max_examples=150, stateful_step_count=40, deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_store_state_machine(strategy: str, tmp_path: Path) -> None:
    """Every strategy keeps its promise under random appends, compactions, crashes and recoveries."""
    _run(strategy, tmp_path, FAST)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_store_state_machine_long(strategy: str, tmp_path: Path) -> None:
    """The same machine with many more examples and steps (``pytest -m slow``)."""
    _run(strategy, tmp_path, SLOW)
