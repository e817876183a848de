"""A Session that remembers every compaction it makes: the replays of the compaction and transcripts measurements."""

from __future__ import annotations

from typing import Any

from aptmem.compaction.compactor import CompactionResult
from aptmem.session import Session

__all__ = ["ObservedSession"]


class ObservedSession(Session):
    """A :class:`~aptmem.session.Session` that keeps every :class:`CompactionResult` it makes, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compactions: list[CompactionResult] = []

    def compact(self) -> CompactionResult:
        """Compact as a Session does, and remember the result."""
        result = super().compact()
        self.compactions.append(result)
        return result
