"""The one interface every measurement implements, and what a run hands it.

A measurement is a package under ``experiments/measurements/`` whose ``__init__`` defines a class
satisfying :class:`Measurement`, plus one line in the registry
(:data:`experiments.measurements.MEASUREMENTS`) and one YAML file (``configs/measurements/<name>/default.yaml``).
The Hydra app (:mod:`experiments.app`) composes its settings (typed by :attr:`Measurement.settings`),
asks it for a plan (for the progress bar), runs it into the run folder, and later the report and
the gate ask it for its section and its metrics, which it reads back from its tables alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from experiments.core.metric import Metric

if TYPE_CHECKING:  # types only: a measurement's child processes import its package, and they stay light
    from experiments.core.runfolder import RunFolder
    from experiments.core.strategy import Service, StrategySpec

__all__ = ["Measurement", "Progress", "RunContext"]

#: Called with the number of units of work done since the last call.
Progress = Callable[[int], object]


@dataclass(frozen=True)
class RunContext:
    """What a measurement runs on: the run's strategies (services started) and workload, and its folder."""

    strategies: tuple[StrategySpec, ...]
    #: the workload group's choice: a WorkloadConfig (synthetic) or a TranscriptWorkload
    workload: Any
    folder: RunFolder
    #: the running service of each strategy that declares one, by strategy name (a crash measurement kills it)
    services: Mapping[str, Service] = field(default_factory=dict)


@runtime_checkable
class Measurement(Protocol):
    """One measurement of the harness. Every member is mandatory."""

    #: what ``measure: [...]`` lists; also its config key and group (``configs/measurements/<name>/``)
    name: str
    #: the dataclass typing its settings (registered in Hydra's ConfigStore: a typo fails at load)
    settings: type
    #: whether it times anything: a timed measurement holds the machine's timing lock while it runs
    timed: bool
    #: what one step of its progress bar is (append, process, case, ...)
    unit: str
    #: the tables it writes into the run folder (parquet and CSV each)
    tables: tuple[str, ...]

    def plan(self, settings: Any, ctx: RunContext) -> int:
        """How many units of work :meth:`run` will report (for the progress bar)."""
        ...

    def run(self, settings: Any, ctx: RunContext, progress: Progress) -> None:
        """Measure, and write the tables and the notes into ``ctx.folder``."""
        ...

    def section(self, run_dir: Path) -> str | None:
        """Its section of ``report.md`` from its stored tables alone (None: not measured in this run)."""
        ...

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """The figures the regression gate holds it to, from its stored tables (none when not measured)."""
        ...
