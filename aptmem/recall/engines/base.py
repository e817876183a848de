"""The one interface every search engine of the recall index implements, and what it needs installed.

An engine keeps its own tables inside the index's SQLite database, keyed by the ``doc_id`` of the
``docs`` table, and is told about every record added or removed *inside the index's transaction*:
so an engine's tables and the records never disagree, whatever moment a crash picks. Scores are
"higher is better" and comparable only within one engine's answer to one question.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from importlib import metadata
from typing import Protocol, runtime_checkable

import msgspec

from aptmem.recall.records import Doc

__all__ = ["Engine", "Filter", "InstallSize", "install_size"]


class Filter(msgspec.Struct, frozen=True, kw_only=True):
    """Which records a search may return: by level and by kind."""

    levels: tuple[str, ...] = ("l2", "l3")
    kinds: tuple[str, ...] = ("session", "summary", "chunk")


@runtime_checkable
class Engine(Protocol):
    """A search engine over the index's records.

    ``name`` is its registry name; ``requires`` the distributions it needs beyond aptmem's own
    dependencies (installed by the extra ``extra``; empty for the default engine); ``components``
    the registry names of the engines whose tables it keeps (``(name,)`` for a plain engine, its
    parts for a composite one): the index maintains each component once, however many engines
    share it.
    """

    name: str
    components: tuple[str, ...]
    requires: tuple[str, ...]
    extra: str

    def prepare(self, db: sqlite3.Connection) -> None:
        """Create the engine's tables if missing, and fail now (a clear error) if it cannot run."""
        ...

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index new records (``doc_id``, record), inside the caller's transaction."""
        ...

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records, inside the caller's transaction."""
        ...

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """Return up to ``k`` (``doc_id``, score) pairs, best first."""
        ...


class InstallSize(msgspec.Struct, frozen=True, kw_only=True):
    """What an engine adds to an install: the distributions beyond aptmem's own, and their size on disk."""

    engine: str
    distributions: tuple[str, ...]
    bytes: int
    missing: tuple[str, ...] = ()


def _dist_size(name: str) -> int:
    dist = metadata.distribution(name)
    total = 0
    for file in dist.files or ():
        try:
            total += file.locate().stat().st_size
        except OSError:  # a file listed in RECORD but gone: count what is there
            continue
    return total


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(names: Sequence[str], missing: list[str]) -> set[str]:
    """The distributions ``names`` install: themselves and, transitively, what they require (no extras)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [_canonical(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        seen.add(name)
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(_canonical(requirement.name))
    return seen


def install_size(engine: Engine) -> InstallSize:
    """Measure what ``engine`` adds to aptmem's own install: the installed size of the distributions
    it requires, with everything they pull in, less what aptmem's dependencies install anyway.

    The default engine requires nothing (SQLite comes with Python), so its size is 0.
    Distributions that are not installed are listed in ``missing``.
    """
    missing: list[str] = []
    base = _closure(["aptmem"], [])
    added = sorted(_closure(engine.requires, missing) - base)
    total = sum(_dist_size(name) for name in added)
    return InstallSize(engine=engine.name, distributions=tuple(added), bytes=total, missing=tuple(missing))
