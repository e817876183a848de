"""The figures a run is judged by: ratios and counts read from its stored tables, never raw times.

Each measurement yields its own (:meth:`Measurement.metrics`, in its package's ``gate`` module):
a name (``measurement.subject.figure``), a value, and how it may move. Timing figures enter only
as ratios measured side by side in one run, so a slower or busier machine does not move them
much; counts and error rates are deterministic for a seed and are held tightly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from experiments import measurements as registry
from experiments.core.measurement import Measurement
from experiments.core.metric import Metric

__all__ = ["Metric", "collect_metrics"]


def collect_metrics(run_dir: Path, measurements: Sequence[Measurement] | None = None) -> dict[str, Metric]:
    """Every metric of the run in ``run_dir`` (of the registry's measurements, or ``measurements``), by name."""
    if measurements is None:
        measurements = registry.MEASUREMENTS  # read at call time: a test may add a measurement
    return {m.name: m for measurement in measurements for m in measurement.metrics(Path(run_dir))}
