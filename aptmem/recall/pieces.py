"""A record's text cut into pieces that answer on their own: lines, long lines cut, a JSON record's fields together.

Used where a part of a record is judged rather than the whole: the recall packet's excerpts
(:func:`aptmem.recall.api.excerpt`) and abstention's coverage (:mod:`aptmem.recall.abstain`).
"""

from __future__ import annotations

import re

__all__ = ["PIECE_CHARS", "text_pieces"]

#: Long lines are cut into pieces of about this many characters.
PIECE_CHARS = 240
_BREAK = re.compile(r"[\s,，。;；]")

#: The parent of a flattened JSON line's path (``items[8]`` of ``items[8].ticket: PLAT-1``).
_PARENT = re.compile(r"^([^\s:]+)[.\[][^.\[\s:]*\]?: ")


def text_pieces(text: str) -> list[str]:
    """The lines of ``text``, a long line cut (at a space or punctuation) into pieces of about :data:`PIECE_CHARS`.

    Consecutive flattened JSON lines of one parent object (``items[8].component: x``,
    ``items[8].ticket: y``) are one piece, joined by ``; ``: a record's fields answer together.
    """
    out: list[str] = []
    parent = None
    for line in text.splitlines():
        line = line.strip()
        match = _PARENT.match(line)
        if match and match.group(1) == parent and len(out[-1]) + len(line) < 2 * PIECE_CHARS:
            out[-1] += "; " + line
            continue
        parent = match.group(1) if match else None
        while len(line) > PIECE_CHARS:
            cut = max((m.end() for m in _BREAK.finditer(line, PIECE_CHARS // 2, PIECE_CHARS)), default=PIECE_CHARS)
            out.append(line[:cut].strip())
            line = line[cut:].strip()
            parent = None
        if line:
            out.append(line)
    return out
