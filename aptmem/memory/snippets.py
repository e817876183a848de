"""A fact in few words: the line a memory shows for it (:func:`snippet`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aptmem.memory.facts import Fact

__all__ = ["CHAT_CLOCK", "SNIPPET_CHARS", "snippet", "unclocked"]

#: A fact's statement up to this long is kept whole; a longer one is cut to the words around the value.
SNIPPET_CHARS = 72
#: A cut statement keeps up to this many of its opening characters when no subject is known to name it.
_OPENING_CHARS = 40
#: A change's old side ("from X", "von X", "de X") and its new one (" to Y", " auf Y", " à Y"), or "X -> Y".
_FROM_TO = re.compile(r"\b(?:from|von|de|desde|da)\s+[^\s;]+\s+(?:to|auf|zu|à|a|hasta|para)\s+[^\s;]+(?:\s[^\s,;.]+)?"
                      r"|[^\s;]+\s*(?:->|→|=>)\s*[^\s;]+", re.IGNORECASE)
#: The clock a pasted chat line opens with ("14:17: jonas: ...", "[09:02] <kim> ..."), as a pattern's text (the fact
#: finder's speaker pattern starts with it too).
CHAT_CLOCK = r"^\s*\[?\d{1,2}:\d{2}(?::\d{2})?\]?:?\s+"
#: That clock before a speaker: a memory shows a fact under the day it became true, so the minute it was typed only
#: takes room every line pays for.
_CLOCK = re.compile(CHAT_CLOCK + r"(?=<[\w.@-]{1,32}>|@?[\w.-]{1,32}:\s)")


def unclocked(fact: Fact) -> str:
    """:func:`snippet` without a pasted chat line's clock before its speaker (a record shows the day it became true).

    kv_dict's records use it; the salient summary keeps the clock (without it, the hier_summary leaves of one
    development set lost three decisions at 32k: lines said at two moments read as one)."""
    text = snippet(fact)
    clock = _CLOCK.match(text)
    return text[clock.end():] if clock and fact.value not in clock.group(0) else text


def snippet(fact: Fact) -> str:
    """The fact in few words: its statement if short, else the words around its value, the subject first.

    Preferences and decisions are their statement (their value is the whole of it).
    """
    text = fact.text
    if len(text) <= SNIPPET_CHARS or fact.shape in ("preference", "decision"):
        return text
    at = text.find(fact.value)
    if at < 0:
        return text
    start = max(0, at - 44)
    if start <= _OPENING_CHARS // 2:
        start = 0  # a few words more say what the statement is about: not worth an ellipsis
    end = min(len(text), at + len(fact.value) + 16)
    # A cut right after a change's old value ("... from 757,820…") would show the stale value as the statement's
    # whole news: the cut goes on to the new one ("from 757,820 to 247,561"), whichever value the snippet is for.
    end = _past_change(text, end)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < at else start
    if end < len(text):
        space = text.rfind(" ", at + len(fact.value), end)
        end = space if space > 0 else end
    core = text[start:end].strip(" ,;:")
    missing = [s for s in fact.subject if s not in core.casefold()]
    head = (" ".join(missing[:2]) + ": ") if missing else ""
    if not missing and start > 0:
        # Nothing names what the words around the value are about: the statement's opening words usually do
        # ("Wartungsfenster für driftwood verschoben: … sondern Mo 01:00-02:00 UTC").
        opening = text.rfind(" ", 0, min(start, _OPENING_CHARS))
        head = text[:opening].rstrip(" ,;:") + " " if opening > 0 else ""
    return f"{head}{'…' if start > 0 else ''}{core}{'…' if end < len(text) else ''}"


def _past_change(text: str, end: int) -> int:
    """Where a cut at ``end`` should fall: past the new value of a change whose old value it would end with, so a
    snippet never shows "... from 757,820…" without the "to 247,561" after it."""
    for match in _FROM_TO.finditer(text):
        if match.start() < end < match.end():
            return match.end()
    return end
