"""The summarizer seam: what turns the old part of a history into a summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from aptmem.entries import Entry

__all__ = ["Summarizer"]


@runtime_checkable
class Summarizer(Protocol):
    """Summarize ``entries`` (oldest first), folding in the ``previous`` summary if any.

    The result must fit ``budget`` tokens as measured by ``count``; a summarizer that cannot
    make it fit raises :class:`~aptmem.errors.SummarizerError` rather than return more.
    """

    name: str

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int, count: Callable[[str], int]) -> str:
        """Return the summary text."""
        ...
