"""Measuring a provider profile from real sessions whose replies carry the provider's usage.

Between two consecutive requests of a session (no compaction between them) the provider's count
grows by what was appended: the reply to the first (its text, thinking and tool calls) and what
followed it (tool results, the next user message). So each such pair gives one equation

    reported[k] - reported[k-1]  ~  ratio * reference_tokens(appended) + framing * messages(appended)

where ``reference_tokens`` counts the rendered text with the reference tokenizer. ``ratio`` and
``framing`` are fitted by least absolute deviations over every pair of every session: the fit
follows the typical step and is not pulled by the steps no transcript can explain (a reply
whose thinking the provider hid and billed, an aborted reply the agent never sent again).
Then, with those two figures:

* ``fixed``: per session, the first request's count minus the model's count of the entries
  before it; the profile keeps the median over sessions;
* ``reattached``: per compaction, the first request after it minus the session's fixed part and
  the model's count of the live context (summary and kept entries); the median, 0 when no
  session compacted (or if the median is negative).

Held out: with several sessions, each one is scored with a profile fitted on the others (leave
one session out); with one session, the profile is fitted on the first half of its requests and
scored on the second half (the fixed part then comes from the same session: say so).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import msgspec

from aptmem.entries import Assistant, Compaction, Entry
from aptmem.tokens.anchored import AnchoredCounter, ModelCounter
from aptmem.tokens.base import Estimator
from aptmem.tokens.calibration.errors import ErrorFigures, error_figures
from aptmem.tokens.context_model import ContextModel, sent_parts
from aptmem.tokens.live import LiveCounts, reported_requests
from aptmem.tokens.profile import ProviderProfile
from aptmem.tokens.usage_fields import input_side

__all__ = ["HeldOut", "Observation", "calibrate_profile", "fit_profile", "held_out", "observe", "score_session"]

#: what the fit minimises, as written into the profile
FIT = "least absolute deviations of the increments between consecutive requests (no compaction between)"


class Observation(msgspec.Struct, kw_only=True, frozen=True):
    """One request with usage, with what the transcript shows of it in reference tokens and messages."""

    reported: int
    #: reference tokens and messages appended since the previous request with usage (its reply included)
    since_tokens: int
    since_messages: int
    #: whether a compaction came between the previous request and this one
    compacted: bool
    #: reference tokens and messages of the live context before this request's reply
    live_tokens: int
    live_messages: int


def observe(entries: Sequence[Entry], estimator: Estimator) -> list[Observation]:
    """Every request with usage of a session, in order (see :class:`Observation`)."""
    tokens, messages = LiveCounts(), LiveCounts()
    out: list[Observation] = []
    since_tokens = since_messages = 0
    compacted = False
    for entry in entries:
        reported = input_side(entry.usage) if isinstance(entry, Assistant) else None
        if reported:
            out.append(Observation(reported=reported, since_tokens=since_tokens, since_messages=since_messages,
                                   compacted=compacted, live_tokens=tokens.total, live_messages=messages.total))
            since_tokens = since_messages = 0
            compacted = False
        text, thinking, n = sent_parts(entry)
        count = (estimator.count(text) + (estimator.count(thinking) if thinking else 0)) if n else 0
        tokens.add(entry, count)
        messages.add(entry, n)
        since_tokens += count
        since_messages += n
        compacted |= isinstance(entry, Compaction)
    return out


def _lad(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """Least absolute deviations of ``y ~ a*x1 + b*x2`` (no intercept, ``b >= 0``), by reweighted least squares."""
    a, b = 1.0, 0.0
    weights = [1.0] * len(rows)
    for _ in range(100):
        sxx = sum(w * x1 * x1 for w, (_, x1, _) in zip(weights, rows))
        sxz = sum(w * x1 * x2 for w, (_, x1, x2) in zip(weights, rows))
        szz = sum(w * x2 * x2 for w, (_, _, x2) in zip(weights, rows))
        sxy = sum(w * x1 * y for w, (y, x1, _) in zip(weights, rows))
        szy = sum(w * x2 * y for w, (y, _, x2) in zip(weights, rows))
        det = sxx * szz - sxz * sxz
        if det > 0:
            na, nb = (sxy * szz - szy * sxz) / det, (sxx * szy - sxz * sxy) / det
        else:
            na, nb = (sxy / sxx if sxx else 1.0), 0.0
        if nb < 0:  # framing never makes a message cheaper: pin it to 0, refit the ratio
            na, nb = (sxy / sxx if sxx else 1.0), 0.0
        done = abs(na - a) < 1e-9 and abs(nb - b) < 1e-9
        a, b = na, nb
        if done:
            break
        weights = [1.0 / max(abs(y - a * x1 - b * x2), 1.0) for y, x1, x2 in rows]
    return a, b


def _steps(observations: Sequence[Observation]) -> list[tuple[float, float, float]]:
    return [(float(cur.reported - prev.reported), float(cur.since_tokens), float(cur.since_messages))
            for prev, cur in zip(observations, observations[1:]) if not cur.compacted]


def _model_count(ratio: float, framing: float, tokens: int, messages: int) -> float:
    return ratio * tokens + framing * messages


def fit_profile(name: str, reference: str, sessions: Mapping[str, Sequence[Observation]],
                calibration: dict[str, object] | None = None) -> ProviderProfile:
    """Fit a profile on the observations of ``sessions`` (name -> observations); see the module docstring."""
    steps = [row for obs in sessions.values() for row in _steps(obs)]
    if not steps:
        raise ValueError("no two consecutive requests with usage: nothing to fit a profile on")
    ratio, framing = _lad(steps)
    fixed_of: dict[str, float] = {}
    reattached: list[float] = []
    for session, obs in sessions.items():
        if not obs:
            continue
        first = obs[0]
        fixed = first.reported - _model_count(ratio, framing, first.live_tokens, first.live_messages)
        fixed_of[session] = fixed
        reattached += [o.reported - fixed - _model_count(ratio, framing, o.live_tokens, o.live_messages)
                       for o in obs[1:] if o.compacted]
    about = dict(calibration or {})
    about.update(fit=FIT, steps=len(steps), sessions={s: len(o) for s, o in sessions.items()},
                 fixed_per_session={s: round(v) for s, v in fixed_of.items()},
                 reattached_per_compaction=[round(v) for v in reattached])
    return ProviderProfile(name=name, reference=reference, ratio=round(ratio, 4), framing=round(framing, 2),
                           fixed=max(0, round(statistics.median(fixed_of.values()))),
                           reattached=max(0, round(statistics.median(reattached))) if reattached else 0,
                           calibration=about)


class HeldOut(msgspec.Struct, kw_only=True):
    """One session scored with a profile it was not fitted on."""

    session: str
    #: leave one session out | second half of one session
    split: str
    anchored: ErrorFigures
    #: the context model alone, with the profile's fixed part (what a session without usage gets)
    model: ErrorFigures
    #: the first scored request's error by the context model, in % (the anchored tier's own there)
    first_request_pct: float | None


def score_session(entries: Sequence[Entry], profile: ProviderProfile, estimator: Estimator,
                  skip: int = 0) -> tuple[ErrorFigures, ErrorFigures, float | None]:
    """The anchored tier's and the context model's figures on one session's requests (after the first ``skip``)."""
    anchored = AnchoredCounter(ContextModel(profile, estimator))
    model = ModelCounter(ContextModel(profile, estimator))
    pairs_a: list[tuple[float, float]] = []
    pairs_m: list[tuple[float, float]] = []
    index = 0
    for request in reported_requests(entries, [anchored, model]):
        if isinstance(request, Assistant):
            continue
        if index >= skip:
            pairs_a.append((request.estimates[0], request.reported))
            pairs_m.append((request.estimates[1], request.reported))
        index += 1
    first = (pairs_m[0][0] - pairs_m[0][1]) / pairs_m[0][1] * 100 if pairs_m else None
    return error_figures(pairs_a), error_figures(pairs_m), first


def held_out(name: str, reference: str, sessions: Mapping[str, Sequence[Entry]], estimator: Estimator) -> list[HeldOut]:
    """Score every session with a profile fitted without it (or one session's second half); see the module docstring."""
    observed = {s: observe(entries, estimator) for s, entries in sessions.items()}
    out: list[HeldOut] = []
    if len(sessions) >= 2:
        for session, entries in sessions.items():
            others = {s: o for s, o in observed.items() if s != session}
            if not any(_steps(o) for o in others.values()):
                continue
            profile = fit_profile(name, reference, others)
            anchored, model, first = score_session(entries, profile, estimator)
            out.append(HeldOut(session=session, split="leave one session out", anchored=anchored, model=model,
                               first_request_pct=first))
        return out
    for session, entries in sessions.items():
        obs = observed[session]
        half = len(obs) // 2
        if half < 2:
            continue
        profile = fit_profile(name, reference, {session: obs[:half]})
        anchored, model, first = score_session(entries, profile, estimator, skip=half)
        out.append(HeldOut(session=session, split="second half of one session", anchored=anchored, model=model,
                           first_request_pct=first))
    return out


def calibrate_profile(name: str, sessions: Mapping[str, Sequence[Entry]], estimator: Estimator, *,
                      command: str | None = None) -> tuple[ProviderProfile, list[HeldOut]]:
    """A profile fitted on every session, with each session's held-out figures recorded in it and returned."""
    reference = estimator.tokenizer
    scored = held_out(name, reference, sessions, estimator)
    about: dict[str, object] = {"command": command or f"aptmem usage-check SRC --from {name} --calibrate-profile OUT",
                                "estimator": estimator.name,
                                "held_out": {h.session: {"split": h.split, "requests": h.anchored.requests,
                                                         "anchored_mape_pct": _round(h.anchored.mape, 3),
                                                         "anchored_p95_abs_error": _round(h.anchored.p95_abs_error, 0),
                                                         "anchored_max_abs_error": _round(h.anchored.max_abs_error, 0),
                                                         "model_mape_pct": _round(h.model.mape, 2),
                                                         "first_request_pct": _round(h.first_request_pct, 2)}
                                             for h in scored}}
    observed = {s: observe(entries, estimator) for s, entries in sessions.items()}
    return fit_profile(name, reference, observed, about), scored


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
