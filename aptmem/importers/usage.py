"""Ground truth from the provider: each tier's estimate of the context against the reported input tokens.

Where an imported assistant reply carries the provider's usage, the real size of the request
that produced it is known: Claude Code (Anthropic API) input_tokens + cache_creation_input_tokens
+ cache_read_input_tokens; pi input + cacheRead + cacheWrite. The context that request sent is
the live context just before the reply: every entry before it (from the latest compaction on),
which each tier counts with :func:`aptmem.tokens.count_entry`, as a session would.

What the provider counts and the transcript does not hold, so no estimate of the transcript can
see it: the system prompt, the tool definitions, project files the agent injects (CLAUDE.md),
hook output and reminders added to messages on the way out, the chat format's own tokens. That
part is roughly fixed within a session, so three views are reported per tier:

* ``mape`` / ``median_ratio``: the estimate of the transcript alone against the reported count
  (ratio = estimate / reported): what a memory that ignores the fixed part believes.
* ``mape_overhead`` / ``median_ratio_overhead``: each session's fixed part measured once, at its
  first request (reported - estimate), and added to the estimates of its later requests (the
  first request is left out of this score: it was used). ``median_overhead`` is that part in tokens.
* calibration: ``reported ~ intercept + slope * estimate`` fitted by least squares on some
  sessions and scored (MAPE) on others: leave one session out when a format has several
  sessions, else the first half of the session's requests against the second half (then the
  test is not independent of the training, and the report says so).

Two tiers count what the provider counts (:mod:`aptmem.tokens.context_model`,
:mod:`aptmem.tokens.anchored`), with the provider profile of the format (or one given):

* ``model[:<tier>]``: the context model alone: the profile's fixed part, the entries in the
  provider's tokens, framing and thinking (what a session has before any usage);
* ``anchored[:<tier>]``: the latest reported usage plus the model's estimate of what was
  appended after it (the context model until the first usage, and after a compaction until the
  first usage after it). The tier after the colon counts the reference tokens (default the
  profile's precise tokenizer).

Every tier's figures include ``p95_abs_error`` and ``max_abs_error`` (tokens), overall and per
session (:func:`session_stats`).

Caveats a reader must keep in mind: the precise tier counts with cl100k_base (OpenAI's), not
the provider's tokenizer (Anthropic publishes none), so its "error" mixes two vocabularies (the
profile's ratio is that mix, measured); the plain tiers count what the renderer shows of an entry,
which leaves a reply's thinking out (the context model counts it); and a handful of sessions is a
handful.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from aptmem.entries import Assistant, Entry
from aptmem.tokens import Estimator
from aptmem.tokens.anchored import AnchoredCounter, ModelCounter
from aptmem.tokens.calibration.errors import ErrorFigures, error_figures
from aptmem.tokens.context_model import ContextModel
from aptmem.tokens.live import ContextCounter, TierCounter, reported_requests
from aptmem.tokens.profile import ProviderProfile, load_profile
from aptmem.tokens.tiers import COUNTER_TIERS, build_estimator, parse_tier_spec
from aptmem.tokens.usage_fields import input_side, output_side

__all__ = ["DEFAULT_TIERS", "Calibration", "CounterSpec", "Request", "TierStats", "calibrate", "counter_spec",
           "counted_requests", "input_tokens", "session_requests", "session_stats", "tier_stats"]

#: The tiers compared by default: the cheap tiers, the reference tokenizer, and the two that count what the
#: provider counts (the context model alone, and anchored on the reported usage).
DEFAULT_TIERS = ("rough:bytes", "medium", "precise:cl100k_base", "model", "anchored")


class Request(msgspec.Struct, kw_only=True):
    """One request of a session whose reply reported usage, with every tier's estimate of its context."""

    session: str
    format: str
    #: 0-based among the session's requests with usage
    index: int
    #: 0-based position of the reply's assistant entry among the session's entries
    seq: int
    entry_id: str | None
    ts: int
    model: str | None
    #: the input-side tokens the provider reported
    reported: int
    output: int | None
    #: tier -> tokens of the live context before the reply, by that tier
    estimates: dict[str, int]
    #: entries in the live context before the reply
    context_entries: int


class TierStats(msgspec.Struct, kw_only=True):
    """How one tier's estimates compare with the reported counts (percentages are in %)."""

    tier: str
    requests: int
    mape: float | None
    median_ratio: float | None
    #: requests scored with each session's fixed part added (its first request left out)
    overhead_requests: int
    mape_overhead: float | None
    median_ratio_overhead: float | None
    #: median over sessions of (reported - estimate) at the session's first request, in tokens
    median_overhead: float | None
    #: 95th percentile (nearest rank) and largest |estimate - reported|, in tokens
    p95_abs_error: float | None = None
    max_abs_error: float | None = None


class Calibration(msgspec.Struct, kw_only=True):
    """``reported ~ intercept + slope * estimate``: fitted on all requests, and scored out of sample."""

    tier: str
    #: leave one session out | chronological halves of one session | too few requests
    split: str
    folds: int
    intercept: float | None
    slope: float | None
    train_mape: float | None
    test_mape: float | None
    test_requests: int


def input_tokens(usage: dict[str, Any] | None) -> int | None:
    """The input-side tokens of a usage dict of either format (None when it has none)."""
    return input_side(usage)


class CounterSpec(msgspec.Struct, frozen=True):
    """A tier spec made ready: its name in results and how to start a counter for one session."""

    name: str
    make: Callable[[], ContextCounter]


def counter_spec(spec: str, profile: ProviderProfile | str) -> CounterSpec:
    """The counter a tier spec names; ``model`` and ``anchored`` use ``profile`` (a profile, or its name or file).

    Raises :class:`~aptmem.errors.InvalidTierSpec` for a bad spec (:func:`aptmem.tokens.tiers.parse_tier_spec`),
    :class:`~aptmem.errors.InvalidProfile` for a bad profile and :class:`~aptmem.errors.TokenizerUnavailable`
    for a tokenizer it cannot load.
    """
    parsed = parse_tier_spec(spec, counters=True)
    if parsed.tier not in COUNTER_TIERS:
        estimator = build_estimator(parsed)
        return CounterSpec(estimator.name, lambda: TierCounter(estimator))
    chosen = profile if isinstance(profile, ProviderProfile) else load_profile(profile)
    estimator = build_estimator(parsed.base or f"precise:{chosen.reference}")
    label = f"{parsed.tier}({chosen.name}, {estimator.name})"
    if parsed.tier == "model":
        return CounterSpec(label, lambda: ModelCounter(ContextModel(chosen, estimator)))
    return CounterSpec(label, lambda: AnchoredCounter(ContextModel(chosen, estimator)))


def counted_requests(entries: Iterable[Entry], counters: Mapping[str, ContextCounter], *, session: str,
                     fmt: str) -> tuple[list[Request], int]:
    """Every request with usage of one session, with each counter's estimate; and how many replies had none."""
    requests: list[Request] = []
    without = 0
    for seen in reported_requests(entries, list(counters.values())):
        if isinstance(seen, Assistant):
            without += 1  # an aborted or failed request: the provider reported no input
            continue
        reply = seen.reply
        requests.append(Request(session=session, format=fmt, index=len(requests), seq=seen.seq, entry_id=reply.id,
                                ts=reply.ts, model=reply.model, reported=seen.reported, output=output_side(reply.usage),
                                estimates=dict(zip(counters, seen.estimates, strict=True)),
                                context_entries=seen.live_entries))
    return requests, without


def session_requests(entries: Iterable[Entry], estimators: Mapping[str, Estimator], *, session: str,
                     fmt: str) -> tuple[list[Request], int]:
    """:func:`counted_requests` with one plain counter per estimator (tier name -> estimator)."""
    return counted_requests(entries, {t: TierCounter(e) for t, e in estimators.items()}, session=session, fmt=fmt)


def _ape(estimate: float, reported: int) -> float:
    return abs(estimate - reported) / reported * 100


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _by_session(requests: Sequence[Request]) -> dict[str, list[Request]]:
    out: dict[str, list[Request]] = {}
    for r in requests:
        out.setdefault(r.session, []).append(r)
    return out


def tier_stats(requests: Sequence[Request], tier: str) -> TierStats:
    """Raw and fixed-part-corrected error of one tier over ``requests``; see the module docstring."""
    raw = [(r.estimates[tier], r.reported) for r in requests]
    corrected: list[tuple[float, int]] = []
    overheads: list[float] = []
    for part in _by_session(requests).values():
        first = part[0]
        overhead = first.reported - first.estimates[tier]
        overheads.append(overhead)
        corrected += [(r.estimates[tier] + overhead, r.reported) for r in part[1:]]
    figures = error_figures(raw)
    return TierStats(
        tier=tier, requests=len(raw),
        mape=figures.mape, median_ratio=_median([e / n for e, n in raw]),
        overhead_requests=len(corrected),
        mape_overhead=_mean([_ape(e, n) for e, n in corrected]),
        median_ratio_overhead=_median([e / n for e, n in corrected]),
        median_overhead=_median(overheads), p95_abs_error=figures.p95_abs_error, max_abs_error=figures.max_abs_error,
    )


def session_stats(requests: Sequence[Request], tiers: Sequence[str]) -> dict[str, dict[str, ErrorFigures]]:
    """Per session and tier: MAPE, p95 and largest absolute error of the estimates."""
    return {session: {t: error_figures([(r.estimates[t], r.reported) for r in part]) for t in tiers}
            for session, part in _by_session(requests).items()}


def _fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least squares ``y ~ a + b x``; with one point or no spread in x, slope 1 and the mean difference."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if len(points) < 2 or var == 0:
        return my - mx, 1.0
    slope = sum((x - mx) * (y - my) for x, y in points) / var
    return my - slope * mx, slope


def _score(points: Sequence[tuple[float, float]], fit: tuple[float, float]) -> list[float]:
    a, b = fit
    return [_ape(a + b * x, int(y)) for x, y in points]


def calibrate(requests: Sequence[Request], tier: str) -> Calibration:
    """Fit ``reported ~ intercept + slope * estimate`` and score it out of sample; see the module docstring."""
    points = {name: [(float(r.estimates[tier]), float(r.reported)) for r in part]
              for name, part in _by_session(requests).items()}
    everything = [p for part in points.values() for p in part]
    if len(everything) < 2:
        return Calibration(tier=tier, split="too few requests", folds=0, intercept=None, slope=None,
                           train_mape=None, test_mape=None, test_requests=0)
    fit = _fit(everything)
    train_mape = _mean(_score(everything, fit))
    tested: list[float] = []
    if len(points) >= 2:
        split = "leave one session out"
        for name, part in points.items():
            train = [p for other, rest in points.items() if other != name for p in rest]
            tested += _score(part, _fit(train))
        folds = len(points)
    else:
        split = "chronological halves of one session"
        half = len(everything) // 2
        fit = _fit(everything[:half])  # the factor reported is the one the test scores
        train_mape = _mean(_score(everything[:half], fit))
        tested = _score(everything[half:], fit)
        folds = 1
    return Calibration(tier=tier, split=split, folds=folds, intercept=fit[0], slope=fit[1], train_mape=train_mape,
                       test_mape=_mean(tested), test_requests=len(tested))
