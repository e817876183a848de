"""One figure a run is judged by, and how far it may move (the regression gate's unit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Metric"]


@dataclass(frozen=True)
class Metric:
    """One figure of a run and its tolerance.

    Its name reads ``measurement.subject.figure``. ``better`` is ``lower``, ``higher`` or
    ``equal``. A regression is a move the wrong way by more than ``tolerance``, which is
    relative (a fraction of the baseline) when ``relative`` is True, else absolute (in the
    metric's own unit).
    """

    name: str
    value: float
    better: Literal["lower", "higher", "equal"]
    tolerance: float
    relative: bool = True
