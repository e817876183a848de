"""Error figures of estimates against reported counts: MAPE, p95 and largest absolute error."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import msgspec

__all__ = ["ErrorFigures", "error_figures", "nearest_rank"]


class ErrorFigures(msgspec.Struct, kw_only=True):
    """How estimates compare with reported counts (percentages in %, errors in tokens)."""

    requests: int
    mape: float | None
    #: 95th percentile of |estimate - reported| (nearest rank)
    p95_abs_error: float | None
    max_abs_error: float | None
    #: mean of (estimate - reported): below 0, the estimates undercount
    mean_signed_error: float | None


def nearest_rank(values: Sequence[float], share: float) -> float:
    """The ``share`` percentile of ``values`` by nearest rank (the smallest value with that share at or below it)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def error_figures(pairs: Sequence[tuple[float, float]]) -> ErrorFigures:
    """Figures of ``(estimate, reported)`` pairs; reported counts must be > 0."""
    if not pairs:
        return ErrorFigures(requests=0, mape=None, p95_abs_error=None, max_abs_error=None, mean_signed_error=None)
    errors = [e - r for e, r in pairs]
    absolute = [abs(x) for x in errors]
    return ErrorFigures(requests=len(pairs), mape=statistics.fmean(abs(e - r) / r * 100 for e, r in pairs),
                        p95_abs_error=nearest_rank(absolute, 0.95), max_abs_error=max(absolute),
                        mean_signed_error=statistics.fmean(errors))
