"""The one ordered registry of measurements: :data:`MEASUREMENTS`.

Each entry is a package of its own (``measurements/<name>/``) whose ``__init__`` defines a class
satisfying :class:`experiments.core.measurement.Measurement`; its settings are
``configs/measurements/<name>/default.yaml`` over its settings dataclass. The order of :func:`_registry` is the
order of the report's sections and of the schema's default measure list; ``configs/config.yaml``'s
``measure:`` says which a run makes, in which order.

The registry is built on first use (a module ``__getattr__``): a measurement's child process
imports its own package, and must not load every other measurement with it. Likewise a
package's ``__init__`` imports only its settings; its job, report and gate modules load when the
app first asks for them, so composing the config loads the settings schemas alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from experiments.core.measurement import Measurement

__all__ = ["MEASUREMENTS", "by_name"]


def _registry() -> tuple[Measurement, ...]:
    """Every measurement, in report order: one line each."""
    from experiments.measurements.anatomy import Anatomy
    from experiments.measurements.compaction import Compaction
    from experiments.measurements.compaction_race import CompactionRace
    from experiments.measurements.concurrency import Concurrency
    from experiments.measurements.crash import Crash
    from experiments.measurements.crash_explore import CrashExplore
    from experiments.measurements.fuzz import Fuzz
    from experiments.measurements.hostile import Hostile
    from experiments.measurements.memory import Memory
    from experiments.measurements.memory_quality import MemoryQuality
    from experiments.measurements.tokens import Tokens
    from experiments.measurements.transcripts import Transcripts
    from experiments.measurements.write_cost import WriteCost

    return (
        WriteCost(),
        Memory(),
        Crash(),
        CrashExplore(),
        Concurrency(),
        CompactionRace(),
        Hostile(),
        Anatomy(),
        Fuzz(),
        Tokens(),
        Compaction(),
        MemoryQuality(),
        Transcripts(),
    )


def __getattr__(name: str) -> object:
    """``MEASUREMENTS``, built once on first use (then an ordinary attribute a test may replace)."""
    if name == "MEASUREMENTS":
        global MEASUREMENTS
        MEASUREMENTS = _registry()
        return MEASUREMENTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def by_name(measurements: tuple[Measurement, ...] | None = None) -> dict[str, Measurement]:
    """The registry (or ``measurements``) by name."""
    built = globals().get("MEASUREMENTS")
    registry = built if built is not None else __getattr__("MEASUREMENTS")
    return {m.name: m for m in (registry if measurements is None else measurements)}  # type: ignore[union-attr]
