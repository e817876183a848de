"""Shortening an oversized entry with a visible marker, the same way every time.

A compaction never shortens an entry on disk, whichever way it is persisted: it records which
kept entries to show shortened (their position -> characters kept, ``truncated_at``) and this
function makes the view from the stored entry, the same way every time.
"""

from __future__ import annotations

import re

import msgspec

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User

__all__ = ["shorten_text", "shortenable_text", "shorten_entry", "SHORTEN_ORDER"]

#: Which entries are shortened first when a compaction cannot otherwise reach its target: tool
#: output is the usual culprit and the cheapest to lose; what people said comes last.
SHORTEN_ORDER = {ToolResult: 0, ToolCall: 0, Assistant: 1, User: 2}


_MARKER = re.compile(r"\n\[\.\.\. (\d+) characters cut by aptmem compaction \.\.\.\]\n")


def shorten_text(text: str, keep: int) -> str:
    """Keep about ``keep`` characters of ``text``: the head, a marker, and the tail.

    Shortening composes: a text this function already shortened is shortened as its original
    would be (the same head, tail and count of characters cut), so a rewrite compaction, which
    shortens the stored copy again, and an append compaction, which shortens the original once
    by the smaller of the two cuts, show the same text.
    """
    if keep >= len(text):
        return text
    keep = max(keep, 0)
    found = list(_MARKER.finditer(text))
    if len(found) == 1:
        before, after = text[: found[0].start()], text[found[0].end() :]
        if keep >= len(before) + len(after):
            return text  # already no longer than asked
        original = len(before) + int(found[0].group(1)) + len(after)
    else:
        before = after = text
        original = len(text)
    head = keep * 2 // 3
    tail = keep - head
    if head > len(before) or tail > len(after):  # a cut the earlier one does not contain
        before = after = text
        original = len(text)
    cut = original - head - tail
    marker = f"\n[... {cut} characters cut by aptmem compaction ...]\n"
    return before[:head] + marker + (after[-tail:] if tail else "")


def shortenable_text(entry: Entry) -> str | None:
    """The text of an entry that may be shortened, or None if it has none."""
    if isinstance(entry, (User, Assistant, ToolResult)):
        return entry.content
    if isinstance(entry, ToolCall):
        return entry.result
    return None


def shorten_entry(entry: Entry, keep: int) -> Entry:
    """Return a copy of ``entry`` with its text shortened to about ``keep`` characters."""
    if isinstance(entry, (User, Assistant, ToolResult)):
        return msgspec.structs.replace(entry, content=shorten_text(entry.content, keep))
    if isinstance(entry, ToolCall) and entry.result is not None:
        return msgspec.structs.replace(entry, result=shorten_text(entry.result, keep))
    return entry
