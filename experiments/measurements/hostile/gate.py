"""The hostile-input figures the regression gate holds: every case refused clearly, nothing stored lost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["hostile_metrics"]


def hostile_metrics(run_dir: Path) -> Iterator[Metric]:
    """Cases not as expected, unclear errors and cases that lost stored data: each held at zero."""
    table = read_table(run_dir, "hostile")
    if table is None:
        return
    # Deterministic: a case that stops being refused, clear or harmless is a regression.
    yield Metric("hostile.not_as_expected", float((~table["as_expected"]).sum()), "lower", 0, relative=False)
    yield Metric("hostile.unclear_errors", float((~table["clear"]).sum()), "lower", 0, relative=False)
    yield Metric("hostile.stored_data_lost", float((~table["intact"]).sum()), "lower", 0, relative=False)
