"""One colour per strategy family, the same in every figure of every run.

A figure that colours by whatever strategies its own table happens to hold gives a family one
colour here and another there. So colours come from the families of every strategy config in
``configs/strategy/`` (in the order of their sorted file names), which every figure of every run
shares; a family found only in the data (a config given on the command line) comes after them,
in sorted order. Within a family each strategy gets a line style and a marker of its own, again
by the sorted names of the family's strategies.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Style", "family_colours", "strategy_styles"]

#: Ten clearly different hues (matplotlib's tab10), one per family.
_HUES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_LINES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True)
class Style:
    """How one strategy is drawn: its family's colour, and its own line style and marker."""

    color: str
    linestyle: object
    marker: str

    def line(self) -> dict[str, object]:
        """Keyword arguments of ``ax.plot`` / ``ax.errorbar``."""
        return {"color": self.color, "linestyle": self.linestyle, "marker": self.marker}


@functools.cache
def _configured() -> tuple[tuple[str, str], ...]:
    """(strategy, family) of every strategy config, by sorted name."""
    from experiments.core.strategy import load_strategy, strategy_names

    return tuple((name, load_strategy(name).family) for name in strategy_names())


def family_colours(families: Iterable[str] = ()) -> dict[str, str]:
    """The colour of every configured family and of each of ``families`` (unknown ones after, sorted)."""
    order = list(dict.fromkeys(family for _, family in _configured()))
    order += sorted(set(families) - set(order))
    return {family: _HUES[index % len(_HUES)] for index, family in enumerate(order)}


def strategy_styles(pairs: Iterable[tuple[str, str]]) -> dict[str, Style]:
    """The style of each (strategy, family) pair: the family's colour, a line and marker per strategy in it."""
    pairs = list(dict.fromkeys(pairs))
    colours = family_colours(family for _, family in pairs)
    members: dict[str, list[str]] = {}
    for name, family in [*_configured(), *pairs]:
        members.setdefault(family, [])
        if name not in members[family]:
            members[family].append(name)
    styles = {}
    for name, family in pairs:
        rank = sorted(members[family]).index(name)
        styles[name] = Style(colours[family], _LINES[rank % len(_LINES)], _MARKERS[rank % len(_MARKERS)])
    return styles
