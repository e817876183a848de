"""Fitting the ``medium`` tier's weights to a reference tokenizer, and checking them on what they never saw.

The model is linear, ``tokens ~ sum(w[f] * features(text)[f])`` (:mod:`aptmem.tokens.medium`). The
fit minimises the squared *relative* error ``sum(((X w - y) / y) ** 2)``, what the goal (mean
absolute percentage error per kind of text) is about, so a short text weighs as much as a long
one; every weight is kept >= 0 (a feature never makes a text cheaper), by Lawson and Hanson's
active-set method for non-negative least squares.

Two checks say how the weights do on text they were not fitted on:

* leave one kind out (:func:`leave_one_kind_out`): for every kind, fit on all the other kinds and
  score that kind: the error on a kind of text the corpus does not have;
* held-out files (:func:`held_out_files`): fit on the texts of some files, score the texts of the
  others (a seeded fifth of the files): the error on unseen text of known kinds.

numpy is imported here only: fitting is not on any hot path.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from aptmem.tokens.calibration.corpus import Sample, held_out_file
from aptmem.tokens.medium import CharCosts, MediumEstimator, PieceVocab, features
from aptmem.tokens.medium_constants import FEATURES, MediumConstants

__all__ = ["KindError", "constants_from_fit", "feature_matrix", "fit_weights", "held_out_files", "kind_errors",
           "leave_one_kind_out", "nnls"]


class KindError(msgspec.Struct, kw_only=True):
    """The error of estimates on one kind of text (percentages in %)."""

    kind: str
    texts: int
    mape_pct: float
    mean_signed_pct: float


def feature_matrix(samples: Sequence[Sample], costs: CharCosts, vocab: PieceVocab) -> np.ndarray:
    """One row of :data:`FEATURES` per sample (float64), with the reference tokenizer's character ``costs`` and ``vocab``."""
    return np.array([features(s.text, costs, vocab) for s in samples], dtype=np.float64).reshape(len(samples), len(FEATURES))


def nnls(a: np.ndarray, b: np.ndarray, *, tolerance: float = 1e-10, max_rounds: int = 500) -> np.ndarray:
    """``argmin ||a x - b||`` subject to ``x >= 0`` (Lawson and Hanson's active-set method)."""
    n = a.shape[1]
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    gradient = a.T @ (b - a @ x)
    for _ in range(max_rounds):
        if passive.all() or gradient[~passive].max(initial=-np.inf) <= tolerance:
            break
        candidates = np.where(~passive, gradient, -np.inf)
        passive[int(np.argmax(candidates))] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > tolerance).all():
                x = z
                break
            # Step back towards x until the first passive weight reaches 0; make it active again.
            blocked = passive & (z <= tolerance)
            steps = x[blocked] / (x[blocked] - z[blocked])
            alpha = float(steps.min()) if steps.size else 0.0
            x = x + alpha * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
        gradient = a.T @ (b - a @ x)
    return x


def fit_weights(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares on relative error; see the module docstring."""
    if np.any(y <= 0):
        raise ValueError("every calibration text must have at least one token")
    return nnls(x / y[:, None], np.ones_like(y))


def constants_from_fit(weights: np.ndarray, reference: str, costs: CharCosts, vocab: PieceVocab,
                       calibration: dict[str, object]) -> MediumConstants:
    """Wrap fitted weights (rounded to 5 decimals, so a rerun gives the same file), ``costs`` and ``vocab`` as constants."""
    return MediumConstants(reference=reference, weights={f: round(float(w), 5) for f, w in zip(FEATURES, weights, strict=True)},
                           char_costs=costs.encode(), pieces=vocab.encode(), calibration=calibration)


def kind_errors(samples: Sequence[Sample], estimates: Sequence[int], exact: Sequence[int]) -> list[KindError]:
    """Per kind (in the samples' order of kinds): texts, MAPE and mean signed error."""
    by_kind: dict[str, list[float]] = {}
    for sample, est, ref in zip(samples, estimates, exact, strict=True):
        by_kind.setdefault(sample.kind, []).append((est - ref) / ref * 100)
    return [KindError(kind=k, texts=len(v), mape_pct=float(np.mean(np.abs(v))), mean_signed_pct=float(np.mean(v)))
            for k, v in by_kind.items()]


def _estimates(weights: np.ndarray, reference: str, costs: CharCosts, vocab: PieceVocab, samples: Sequence[Sample]) -> list[int]:
    medium = MediumEstimator(constants_from_fit(weights, reference, costs, vocab, {}))
    return [medium.count(s.text) for s in samples]


def leave_one_kind_out(samples: Sequence[Sample], exact: Sequence[int], x: np.ndarray, reference: str,
                       costs: CharCosts, vocab: PieceVocab, check: Sequence[Sample] | None = None, check_exact: Sequence[int] | None = None) -> list[KindError]:
    """For every kind: fit on the other kinds (of ``samples``), score that kind (of ``check``, default ``samples``)."""
    y = np.asarray(exact, dtype=np.float64)
    scored, scored_exact = (check, check_exact) if check is not None and check_exact is not None else (samples, exact)
    kinds = np.array([s.kind for s in samples])
    out = []
    for kind in dict.fromkeys(s.kind for s in scored):
        keep = kinds != kind
        weights = fit_weights(x[keep], y[keep])
        part = [i for i, s in enumerate(scored) if s.kind == kind]
        errors = kind_errors([scored[i] for i in part], _estimates(weights, reference, costs, vocab, [scored[i] for i in part]),
                             [scored_exact[i] for i in part])
        out += errors
    return out


def held_out_files(samples: Sequence[Sample], exact: Sequence[int], x: np.ndarray, reference: str,
                   costs: CharCosts, vocab: PieceVocab, seed: int) -> tuple[list[KindError], int, int]:
    """Fit on the texts of four files in five, score the others'; return the per-kind errors and both sizes."""
    held = np.array([held_out_file(s.source, seed) for s in samples])
    y = np.asarray(exact, dtype=np.float64)
    weights = fit_weights(x[~held], y[~held])
    test = [s for s, h in zip(samples, held) if h]
    test_exact = [e for e, h in zip(exact, held) if h]
    return kind_errors(test, _estimates(weights, reference, costs, vocab, test), test_exact), int((~held).sum()), int(held.sum())
