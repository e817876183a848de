"""The frontier with intervals (ties named, not flipped), one colour per family, and the recommendation's pick."""

from __future__ import annotations

import polars as pl

from experiments.core.palette import family_colours, strategy_styles
from experiments.report.frontier import dominates, frontier_points, ties
from experiments.report.recommend import _pick


def _summary(rows: list[tuple[str, str, bool, float, float, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["strategy", "family", "durable", "p50_ns", "p50_lo_ns", "p50_hi_ns"], orient="row")


def _recovery(losses: dict[str, list[int]]) -> pl.DataFrame:
    rows = [(name, "power_loss", "torn", lost) for name, values in losses.items() for lost in values]
    rows.append(("a", "process", None, 0))  # a process kill does not count on the storage-crash axis
    return pl.DataFrame(rows, schema=["strategy", "crash_kind", "damage", "lost"], orient="row")


def test_overlapping_intervals_at_the_same_loss_are_a_tie_not_a_ranking() -> None:
    summary = _summary([("a", "x", True, 150, 140, 160), ("b", "y", True, 138, 130, 152), ("c", "x", False, 5, 4, 6),
                        ("d", "y", True, 400, 380, 420)])
    points = frontier_points(summary, _recovery({"a": [0, 0], "b": [0, 0], "c": [30, 10], "d": [0]}))
    assert points is not None
    front = dict(points.select("strategy", "frontier").rows())
    assert front == {"c": True, "b": True, "a": True, "d": False}  # d: surely slower at the same loss
    assert ties(points) == [["b", "a"]]
    # the same two with the medians swapped (the next run): the same frontier, the same tie
    swapped = _summary([("a", "x", True, 138, 130, 152), ("b", "y", True, 150, 140, 160), ("c", "x", False, 5, 4, 6),
                        ("d", "y", True, 400, 380, 420)])
    again = frontier_points(swapped, _recovery({"a": [0, 0], "b": [0, 0], "c": [30, 10], "d": [0]}))
    assert again is not None and dict(again.select("strategy", "frontier").rows()) == front
    assert sorted(ties(again)[0]) == ["a", "b"]


def test_dominance_needs_a_sure_difference() -> None:
    a = {"lost": 0.0, "p50_lo_ns": 100.0, "p50_hi_ns": 110.0}
    assert not dominates(a, {"lost": 0.0, "p50_lo_ns": 105.0, "p50_hi_ns": 120.0})  # overlapping: no one wins
    assert dominates(a, {"lost": 0.0, "p50_lo_ns": 115.0, "p50_hi_ns": 120.0})  # surely faster
    assert dominates(a, {"lost": 2.0, "p50_lo_ns": 105.0, "p50_hi_ns": 120.0})  # loses less, not slower beyond noise
    assert not dominates(a, {"lost": 2.0, "p50_lo_ns": 10.0, "p50_hi_ns": 20.0})  # the other is surely faster


def test_one_colour_per_family_whatever_else_a_figure_holds() -> None:
    one = strategy_styles([("jsonl_none", "jsonl"), ("sqlite_wal_full", "sqlite")])
    two = strategy_styles([("sqlite_wal_full", "sqlite"), ("jsonl_always", "jsonl"), ("jsonl_none", "jsonl")])
    assert one["jsonl_none"] == two["jsonl_none"] and one["sqlite_wal_full"] == two["sqlite_wal_full"]
    assert two["jsonl_always"].color == two["jsonl_none"].color
    assert (two["jsonl_always"].linestyle, two["jsonl_always"].marker) != (two["jsonl_none"].linestyle, two["jsonl_none"].marker)
    colours = family_colours(["toy"])
    assert len(set(colours.values())) == len(colours) and "toy" in colours


def test_the_pick_names_ties_beside_the_fastest() -> None:
    summary = _summary([("a", "x", True, 150, 140, 160), ("b", "y", True, 138, 130, 152), ("d", "y", True, 400, 380, 420)])
    best, tied = _pick(summary, ["a", "b", "d"])
    assert best is not None and best["strategy"] == "b" and tied == ["a"]
    assert _pick(summary, []) == (None, [])
