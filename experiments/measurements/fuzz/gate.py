"""The fuzz figures the regression gate holds: every kind of finding, at zero."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table

__all__ = ["fuzz_metrics"]


def fuzz_metrics(run_dir: Path) -> Iterator[Metric]:
    """Per target: unexpected exceptions, good lines lost, entries invented, oracle violations."""
    table = read_table(run_dir, "fuzz")
    if table is None:
        return
    for (name,), part in table.group_by("target", maintain_order=True):
        target = name.replace(":", ".")  # big_line:scan -> big_line.scan
        # Any of these is a bug the fuzzer found, whatever the machine: held at zero.
        yield Metric(f"fuzz.{target}.unexpected_exceptions", float(part["unexpected_exceptions"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.lost_good_lines", float(part["lost_good_lines"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.invented_entries", float(part["invented_entries"].sum()), "lower", 0, relative=False)
        yield Metric(f"fuzz.{target}.violations", float(part["violations"].sum()), "lower", 0, relative=False)
