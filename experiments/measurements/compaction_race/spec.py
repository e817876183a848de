"""The typed records of the compaction race: what one cell runs, and the rows it returns."""

from __future__ import annotations

from typing import Literal

import msgspec

from experiments.core.strategy import StoreSpec

__all__ = ["CompactorSpec", "RaceCell", "RaceRow", "RaceSize", "WriterSpec", "SIZES"]

#: Writers: ``library`` one long-lived store (sync as the strategy says), ``library_fresh`` a new
#: store for every append, ``cli_each`` one ``aptmem append`` process per entry, ``cli_stream`` one
#: long-lived ``aptmem append`` fed a line at a time (JSONL strategies only, the two ``cli_*``).
WriterKind = Literal["library", "library_fresh", "cli_each", "cli_stream"]
#: Compactors: ``library`` one Session compacting in a loop, ``cli`` one ``aptmem compact
#: --force`` process per compaction (JSONL strategies only).
CompactorKind = Literal["library", "cli"]


class WriterSpec(msgspec.Struct, frozen=True):
    """One appending process: how it appends, at least how many entries, whether they carry ids."""

    name: str
    kind: WriterKind
    appends: int
    with_ids: bool
    pause_ms: float = 0.0


class CompactorSpec(msgspec.Struct, frozen=True):
    """One compacting process: how it compacts and at least how many compactions that change something."""

    name: str
    kind: CompactorKind
    compactions: int
    pause_ms: float = 0.0


class RaceCell(msgspec.Struct, frozen=True, kw_only=True):
    """One (strategy, persist mode) of the race: its store, its processes, the policy, the seed."""

    strategy: str
    store: StoreSpec
    persist: Literal["append", "rewrite"]
    writers: list[WriterSpec]
    compactors: list[CompactorSpec]
    window: int = 2000
    keep_turns: int = 3
    seed: int = 0
    timeout_s: float = 600.0


class RaceSize(msgspec.Struct, frozen=True, kw_only=True):
    """How large each cell is: appends per writer kind and compactions per compactor kind."""

    library: int
    library_fresh: int
    cli_each: int
    cli_stream: int
    library_compactions: int
    cli_compactions: int
    timeout_s: float
    #: milliseconds a library writer pauses between appends: enough for the compactors to get
    #: the lock in turn (SQLite's busy handler and the JSONL lock's waiters poll), not a rate limit
    writer_pause_ms: float = 0.0


#: ``ci``: a few seconds a cell. ``full``: at least 1,000 compactions racing at least 10,000 appends (the two library
#: writers alone append 10,000, so a strategy without command-line writers reaches it too).
SIZES = {
    "ci": RaceSize(library=120, library_fresh=30, cli_each=2, cli_stream=30, library_compactions=12, cli_compactions=1,
                   timeout_s=120.0),
    "full": RaceSize(library=8000, library_fresh=2000, cli_each=25, cli_stream=2000, library_compactions=1000,
                     cli_compactions=25, timeout_s=1800.0, writer_pause_ms=2.0),
}


class RaceRow(msgspec.Struct, kw_only=True):
    """One participant of one cell and what the check found (tidy: one row per participant).

    Writer rows: ``acknowledged`` entries, of which ``lost`` are neither in the session at the
    end nor summarized by a compaction that committed (see :mod:`.oracle`), ``duplicated`` found
    twice, ``errors`` appends that found the lock busy past the store's timeout (not
    acknowledged, tried again). Compactor rows: ``compactions`` that changed the session,
    ``noop`` ones that had nothing to summarize, ``errors`` (lock timeouts and the like: nothing
    written). The cell's totals are on every row (``cell_*``).
    """

    strategy: str
    persist: str
    seed: int
    role: Literal["writer", "compactor"]
    name: str
    kind: str
    with_ids: bool | None = None
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    compactions: int = 0
    noop: int = 0
    errors: int = 0
    summarized: int = 0
    cell_acknowledged: int = 0
    cell_lost: int = 0
    cell_compactions: int = 0
    cell_entries_at_end: int = 0
    #: what a compaction summarized must not leave an appended session: such entries (append mode)
    cell_left_append_log: int = 0
    #: read_live equals select_live of every entry at the end
    cell_live_consistent: bool = True
    seconds: float = 0.0
    error: str | None = None
