"""Regression tests of the compaction thresholds on deterministic 500-turn sessions.

The number of compactions per window is a golden value in tests/golden/compaction.json,
changed only by ``python -m experiments.measurements.compaction.golden --update`` so it shows in review.
"""

from __future__ import annotations

import functools

import pytest

from experiments.measurements.compaction.golden import SEED, TURNS, WINDOWS, load_golden, replay_window


@functools.cache
def report(window: int, persist: str = "append"):  # type: ignore[no-untyped-def]
    return replay_window(window, persist)


@pytest.mark.parametrize("window", WINDOWS)
def test_thresholds_hold_over_a_500_turn_session(window: int) -> None:
    r = report(window)
    where = f"{TURNS} turns, seed {SEED}, window {window}"
    assert r.entries > 4000 and r.turns == TURNS, where
    assert r.over_window == 0, f"{where}: the context exceeded the window after {r.over_window} appends"
    assert r.max_occupancy <= 0.8, f"{where}: a context stayed at or over the trigger ({r.max_occupancy:.3f})"
    assert r.below_trigger == 0, f"{where}: {r.below_trigger} compactions fired below the trigger"
    assert min(r.pre_compaction_occupancy) >= 0.8, where
    assert r.over_target == r.over_target_explained, f"{where}: a compaction ended over the target without saying why"
    assert r.split_tool_pairs == 0, f"{where}: {r.split_tool_pairs} tool pairs split"
    assert len(r.post_compaction_occupancy) == r.compactions


@pytest.mark.parametrize("window", WINDOWS)
def test_number_of_compactions_matches_the_golden_value(window: int) -> None:
    golden = load_golden()[str(window)]
    assert report(window).compactions == golden, (
        f"window {window}: {report(window).compactions} compactions, golden {golden}; if intended, run "
        "`python -m experiments.measurements.compaction.golden --update` and review the change")


def test_rewrite_and_append_compact_alike() -> None:
    appended, rewritten = report(32_000), report(32_000, "rewrite")
    assert rewritten.compactions == appended.compactions
    assert rewritten.post_compaction_occupancy == appended.post_compaction_occupancy
