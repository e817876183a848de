"""Extracted facts: the variant of L3 that indexes single statements instead of whole chunks.

A chunk of several hundred characters dilutes the one line that matters; a fact is one sentence or
one line that states something specific, small enough to be a precise search target and cheap to
carry in a packet. Extraction is deterministic and needs no model: a candidate is a line (or a
sentence of a prose line) of the chunk's evidence text, and it is kept as a fact when it

* has the shape of an assignment or a field (``KEY=value``, ``key: value``, ``path.to.key: value``),
* or names something specific: a number, an identifier with digits, underscores, dots, slashes
  or dashes inside it, a quoted string, or a decision word (decided, chose, because, 决定, 因为...).

Each fact keeps the chunk's session, entry and position, so its evidence is the same entry.
"""

from __future__ import annotations

import re

from aptmem.recall.records import Doc

__all__ = ["extract_facts", "MAX_FACT_CHARS"]

#: A statement longer than this is cut to it: a fact is meant to be short.
MAX_FACT_CHARS = 300
_SENTENCE = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])")
_FIELD = re.compile(r"^\s*[\w.\[\]\-/]{2,80}\s*[:=]\s*\S")
_SPECIFIC = re.compile(r"\d|[A-Za-z]\w*[_./\-]\w|[\"'`].+?[\"'`]")
_DECISION = re.compile(r"\b(decid\w*|chose|choose|prefer\w*|because|since|so that|instead|agreed)\b|决定|选择|因为|偏好|倾向|改用", re.IGNORECASE)


def _statements(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if _FIELD.match(line) or len(line) <= MAX_FACT_CHARS:
            out.append(line[:MAX_FACT_CHARS])
            continue
        out.extend(s.strip()[:MAX_FACT_CHARS] for s in _SENTENCE.split(line) if s.strip())
    return out


def extract_facts(chunk: Doc) -> list[Doc]:
    """The facts stated in one chunk, as ``fact`` records of the same level, session and entry."""
    facts: list[Doc] = []
    seen: set[str] = set()
    for statement in _statements(chunk.text):
        if statement in seen or len(statement) < 6:
            continue
        if not (_FIELD.match(statement) or _SPECIFIC.search(statement) or _DECISION.search(statement)):
            continue
        seen.add(statement)
        facts.append(Doc(session_id=chunk.session_id, level=chunk.level, kind="fact", entry_id=chunk.entry_id,
                         position=chunk.position, ts=chunk.ts, text=statement, search=statement))
    return facts
