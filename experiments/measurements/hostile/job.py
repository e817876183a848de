"""The ``hostile`` measurement: every hostile case tried, one row each (:mod:`experiments.measurements.hostile.cases`).

A row says what was tried and where (``category``, ``case``, ``surface``), what should happen
(``expect``) and what did (``outcome``: refused, accepted, reported, skipped; ``as_expected``),
the error text a user saw, whether it was ``clear`` (aptmem's own error; one line on stderr, no
traceback) and whether everything stored before survived (``intact``). Cases that run commands or
child processes run side by side; the others run one at a time in this process.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from experiments.core.runfolder import RunFolder
from experiments.core.strategy import StrategySpec
from experiments.measurements.hostile.cases import Case, Scratch
from experiments.measurements.hostile.result import CaseResult

__all__ = ["TABLES", "all_cases", "run_case", "run_hostile"]

TABLES = ("hostile",)


def all_cases(strategies: Sequence[StrategySpec] = ()) -> list[Case]:
    """Every hostile case, in report order: the library's and the command line's, then each strategy's store's."""
    from experiments.measurements.hostile.cases import id_cases, permission_cases, symlink_cases
    from experiments.measurements.hostile.inputs import data_cases, io_cases
    from experiments.measurements.hostile.stores import store_cases

    return [*id_cases(), *symlink_cases(), *permission_cases(), *data_cases(), *io_cases(), *store_cases(strategies)]


def run_case(case: Case) -> dict[str, object]:
    """Try one case in a scratch folder of its own; return its row (without run metadata)."""
    with tempfile.TemporaryDirectory(prefix="aptmem-hostile-") as scratch:
        try:
            result = case.run(Scratch(Path(scratch)))
        except Exception as exc:  # noqa: BLE001 - a harness failure is recorded, not fatal to the run
            result = CaseResult(outcome="failed", error=f"{type(exc).__name__}: {exc}", clear=False, intact=False,
                                note="the case itself failed")
    return {"category": case.category, "case": case.case, "surface": case.surface, "expect": case.expect,
            "outcome": result.outcome, "as_expected": result.outcome in (case.expect, "skipped"),
            "clear": result.clear, "intact": result.intact,
            "error": None if result.error is None else str(result.error)[:400], "note": result.note or None}


def run_hostile(out: Path | RunFolder, *, progress: Callable[[int], object] | None = None,
                strategies: Sequence[StrategySpec] = ()) -> dict[str, pl.DataFrame]:
    """Try every case (the per-store ones for each of ``strategies``); write the ``hostile`` table to ``out``."""
    folder = RunFolder.of(out)
    cases = all_cases(strategies)
    rows: list[dict[str, object] | None] = [None] * len(cases)
    serial = [i for i, case in enumerate(cases) if not case.spawns]
    for index in serial:  # first, while no other thread runs: one of these forks
        rows[index] = run_case(cases[index])
        if progress is not None:
            progress(1)
    spawning = [i for i, case in enumerate(cases) if case.spawns]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for index, row in zip(spawning, pool.map(lambda i: run_case(cases[i]), spawning)):
            rows[index] = row
            if progress is not None:
                progress(1)
    table = pl.DataFrame([{**row, "commit": folder.meta.commit, "machine": folder.meta.machine} for row in rows if row],
                         infer_schema_length=None)
    return folder.write("hostile", {"hostile": table}, {"cases": table.height, "uid": os.geteuid()})


def planned_cases(strategies: Sequence[StrategySpec] = ()) -> int:
    """How many cases :func:`run_hostile` tries."""
    return len(all_cases(strategies))
