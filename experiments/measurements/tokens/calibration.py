"""Fit the ``medium`` tier's weights to a reference tokenizer on the generated corpus.

The model is linear: ``tokens ~ sum(w[f] * features(text)[f])`` over the eight character
classes of :mod:`aptmem.tokens.medium`. The fit minimises the squared *relative* error,
``sum(((X w - y) / y) ** 2)`` -- what the goal (mean absolute percentage error per content
kind) is about -- so a short text weighs as much as a long one. Weights are kept >= 0 (a class
never makes a text cheaper): a feature whose weight comes out negative is pinned to 0 and the
rest refitted, until none is negative.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from aptmem.tokens.medium import features
from aptmem.tokens.medium_constants import FEATURES, MediumConstants
from experiments.measurements.tokens.corpus import Sample

__all__ = ["constants_from_fit", "feature_matrix", "fit_weights", "per_kind_error"]


def feature_matrix(samples: Sequence[Sample]) -> np.ndarray:
    """One row of :data:`FEATURES` per sample (float64)."""
    return np.array([features(s.text) for s in samples], dtype=np.float64).reshape(len(samples), len(FEATURES))


def fit_weights(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares on relative error; see the module docstring."""
    if np.any(y <= 0):
        raise ValueError("every calibration text must have at least one token")
    absent = [FEATURES[i] for i in range(x.shape[1]) if not x[:, i].any()]
    if absent:
        raise ValueError(f"the corpus has no {', '.join(absent)}: their weights cannot be fitted")
    scaled = x / y[:, None]
    target = np.ones_like(y)
    free = list(range(x.shape[1]))
    weights = np.zeros(x.shape[1])
    while free:
        solution, *_ = np.linalg.lstsq(scaled[:, free], target, rcond=None)
        if (solution >= 0).all():
            weights[free] = solution
            break
        free.pop(int(np.argmin(solution)))  # pin the most negative weight to 0, refit the rest
    return weights


def per_kind_error(samples: Sequence[Sample], estimates: Sequence[int], exact: Sequence[int]) -> pl.DataFrame:
    """Per content kind: texts, mean absolute percentage error, mean signed error (both in %)."""
    df = pl.DataFrame({"kind": [s.kind for s in samples], "estimate": list(estimates), "exact": list(exact)})
    df = df.with_columns(((pl.col("estimate") - pl.col("exact")) / pl.col("exact") * 100).alias("signed_pct"))
    return (df.group_by("kind", maintain_order=True)
              .agg(pl.len().alias("texts"), pl.col("signed_pct").abs().mean().alias("mape_pct"),
                   pl.col("signed_pct").mean().alias("mean_signed_pct")))


def constants_from_fit(weights: np.ndarray, reference: str, calibration: dict[str, object]) -> MediumConstants:
    """Wrap fitted weights (rounded to 5 decimals, so a rerun gives the same file) as constants."""
    return MediumConstants(reference=reference, weights={f: round(float(w), 5) for f, w in zip(FEATURES, weights, strict=True)},
                           calibration=calibration)
