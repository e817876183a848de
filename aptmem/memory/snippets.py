"""A fact in few words: the line a memory shows for it (:func:`snippet`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aptmem.memory.facts import Fact

__all__ = ["SNIPPET_CHARS", "snippet"]

#: A fact's statement up to this long is kept whole; a longer one is cut to the words around the value.
SNIPPET_CHARS = 72
#: A cut statement keeps up to this many of its opening characters when no subject is known to name it.
_OPENING_CHARS = 40


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
