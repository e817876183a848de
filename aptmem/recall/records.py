"""The typed records of recall: what is indexed (:class:`Doc`) and what a search returns (:class:`Hit`).

Evidence names the entry it came from. An entry with an ``id`` is named by it; an entry without
one (the original design's lines carry none) is named ``@N``, N its 0-based position among the
good entries of the session's log as the store streams them. A position is stable while the log
only grows; a rewrite renumbers it, and the index, which detects the rewrite, re-indexes the
session. Records from the working-memory sidecar are named ``meta``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Doc", "Hit", "Level", "Kind", "LEVELS", "KINDS", "META_ENTRY", "entry_ref"]

#: ``l2``: a session's latest summary and working memory; ``l3``: chunks and facts of the history.
Level = Literal["l2", "l3"]
LEVELS: tuple[str, ...] = ("l2", "l3")
#: ``session``: title, times, working memory; ``summary``: a compaction summary; ``chunk``: a piece
#: of an entry; ``fact``: one statement extracted from a chunk.
Kind = Literal["session", "summary", "chunk", "fact"]
KINDS: tuple[str, ...] = ("session", "summary", "chunk", "fact")
#: The entry name of records that come from the sidecar, not the log.
META_ENTRY = "meta"


def entry_ref(entry_id: str | None, position: int) -> str:
    """Name an entry for evidence: its id, else ``@<position>`` (see the module docstring)."""
    return entry_id if entry_id else f"@{position}"


class Doc(msgspec.Struct, kw_only=True, frozen=True):
    """One retrievable record.

    ``text`` is the evidence as returned (the entry's own text, or for structured content the
    ``path: value`` lines of this chunk); ``search`` is the text engines index (the entry's header and,
    for JSON inside the text, its ``path: value`` lines, so a value deep in minified JSON is findable).
    """

    session_id: str
    level: Level
    kind: Kind
    entry_id: str
    position: int  # the entry's position in the log; -1 for sidecar records
    ts: int | None
    text: str
    search: str


class Hit(msgspec.Struct, kw_only=True):
    """One result of a search: the record's evidence and its score (higher is better)."""

    session_id: str
    entry_id: str
    level: Level
    kind: Kind
    score: float
    text: str
    ts: int | None = None
    doc_id: int = 0
