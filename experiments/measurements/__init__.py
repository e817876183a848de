"""The one ordered registry of measurements.

Each entry is a package of its own (``measurements/<name>/``) whose ``__init__`` defines a class
satisfying :class:`experiments.core.measurement.Measurement`; its settings are
``configs/<name>/default.yaml`` over its settings dataclass. The order here is the order of the
report's sections and of the default measure list of the schema; ``configs/config.yaml``'s
``measure:`` says which a run makes, in which order.

A package's ``__init__`` imports only its settings: the job, report and gate modules load when
the app first asks for them, so composing the config loads the settings schemas alone.
"""

from __future__ import annotations

from experiments.core.measurement import Measurement
from experiments.measurements.anatomy import Anatomy
from experiments.measurements.compaction import Compaction
from experiments.measurements.concurrency import Concurrency
from experiments.measurements.crash import Crash
from experiments.measurements.crash_explore import CrashExplore
from experiments.measurements.fuzz import Fuzz
from experiments.measurements.hostile import Hostile
from experiments.measurements.memory import Memory
from experiments.measurements.tokens import Tokens
from experiments.measurements.transcripts import Transcripts
from experiments.measurements.write_cost import WriteCost

__all__ = ["MEASUREMENTS", "by_name"]

#: Every measurement, in report order.
MEASUREMENTS: tuple[Measurement, ...] = (
    WriteCost(),
    Memory(),
    Crash(),
    CrashExplore(),
    Concurrency(),
    Hostile(),
    Anatomy(),
    Fuzz(),
    Tokens(),
    Compaction(),
    Transcripts(),
)


def by_name(measurements: tuple[Measurement, ...] | None = None) -> dict[str, Measurement]:
    """The registry (or ``measurements``) by name."""
    return {m.name: m for m in (MEASUREMENTS if measurements is None else measurements)}
