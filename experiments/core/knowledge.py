"""The one scorer of what an agent still knows: exact answers in what its memory puts in context.

Shared by the measurements that score planted knowledge: ``memory_quality`` (everything below)
and ``compaction`` (its planted facts, judged by :func:`present` on a compaction's summary and
kept entries).

Everything is judged on the rendering a model would be sent (:func:`rendered`, today
``Session.context()``; switching to the provider renderer is that one function). The rendering
is cut into :class:`Unit` s (lines; a long line in pieces of about :data:`UNIT_CHARS`), and:

* *present*: every answer of an item occurs in the rendering (in-context retention);
* a *packet* of B tokens for a question is what one fixed reader would take from the rendering:
  the units ranked by BM25 against the question (:class:`~aptmem.memory.lexical.Ranker`), best
  first, as many as fit B (a unit that does not fit is skipped, the next tried). The same reader
  serves every strategy, so a packet measures whether the fact is there *and* findable by its
  question among near misses, in that wording;
* *answerable* in a packet (:func:`judge`), by item type:

  - ``fact``, ``update_before``, ``aggregate``: every answer is in the packet;
  - ``update``: the current value is in the packet, and no unit holding the stale value without
    it comes after the last unit holding it in reading (context) order: the last word a model
    reads is the current value. (A unit that names both, "40001, before: 31234", states the
    update.) This is how "no stale value above it" is read here: a packet is shown in context
    order, so the stale value may stand before the current one, as history does, never after.
  - ``order``: both events are in the packet, and the earlier one is first in context order;
  - ``absent`` (never planted): abstained, i.e. no unit of the packet names the subject beside a
    value of the asked kind (the workload checks the full history holds no such unit).

"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import msgspec

from aptmem.session import Session

__all__ = ["UNIT_CHARS", "Judged", "Unit", "judge", "packet", "present", "rendered", "units", "where"]

#: A line longer than this is cut into pieces of about this many characters (at a space or a comma).
UNIT_CHARS = 320
_BREAK = re.compile(r"[\s,，。;]")


class Unit(msgspec.Struct, frozen=True):
    """A line (or piece of one) of the rendering: its text, its place, the message role it is in."""

    text: str
    position: int
    role: str


class Judged(msgspec.Struct, frozen=True, kw_only=True):
    """What the scorer needs of an item (the workload's items carry these fields)."""

    type: str
    subject: str
    answers: tuple[str, ...]
    stale: str = ""
    pattern: str = ""


def rendered(session: Session, query: str | None = None) -> list[tuple[str, str]]:
    """(role, text) of every message ``session`` would send the model now (for ``query``).

    The text is what the provider rendering carries (:mod:`aptmem.context.render`): the system
    message, each message's text and the name and arguments of each tool call it makes.
    """
    context = session.context(query).rendered
    out = [("system", context.system_text)] if context.system else []
    for message in context.messages:
        parts = [message.text] if message.text else []
        parts.extend(f"{call.name} {call.arguments}" for call in message.calls)
        out.append((message.role, "\n".join(parts)))
    return out


def _pieces(line: str) -> list[str]:
    if len(line) <= UNIT_CHARS:
        return [line]
    out, start = [], 0
    while start < len(line):
        end = start + UNIT_CHARS
        if end < len(line):
            match = None
            for match in _BREAK.finditer(line, start + UNIT_CHARS // 2, end):
                pass
            end = match.end() if match else end
        out.append(line[start:end])
        start = end
    return out


def units(messages: Sequence[tuple[str, str]]) -> list[Unit]:
    """The rendering cut into units, in context order."""
    out: list[Unit] = []
    for role, text in messages:
        for line in text.splitlines():
            for piece in _pieces(line.strip()):
                if piece:
                    out.append(Unit(piece, len(out), role))
    return out


def present(item: Judged, text: str) -> bool:
    """Whether every answer of ``item`` occurs in ``text`` (an absent item: whether it is abstained)."""
    if item.type == "absent":
        return not _names_one(item, text)
    return all(answer in text for answer in item.answers)


def where(item: Judged, messages: Sequence[tuple[str, str]]) -> str:
    """Which part of the rendering holds the item's first answer: memory (system), summary, kept, or lost."""
    answer = item.answers[0] if item.answers else ""
    for role, text in messages:
        if answer and answer in text:
            if role == "system":
                return "summary" if text.startswith("summary\n") else "memory"
            return "kept"
    return "lost"


def packet(ranked: Sequence[int], all_units: Sequence[Unit], budget: int | None,
           cost_of: Callable[[int], int]) -> list[Unit]:
    """The units a reader takes within ``budget`` tokens (None: every one), best first.

    ``ranked`` is :meth:`Ranker.rank` of the question over ``all_units``' texts; ``cost_of(i)``
    the tokens unit ``i`` takes in a packet.
    """
    chosen: list[Unit] = []
    left = budget
    for index in ranked:
        unit = all_units[index]
        if left is not None:
            cost = cost_of(index)
            if cost > left:
                continue
            left -= cost
        chosen.append(unit)
    return chosen


def _names_one(item: Judged, text: str) -> bool:
    """Whether ``text`` names the item's subject beside a value of its kind."""
    return item.subject.casefold() in text.casefold() and re.search(item.pattern, text) is not None


def judge(item: Judged, chosen: Sequence[Unit]) -> bool:
    """Whether ``item`` is answered right from the packet ``chosen`` (best first); see the module docstring."""
    if item.type == "absent":
        return not any(_names_one(item, u.text) for u in chosen)
    if item.type == "update":
        current = item.answers[0]
        last_current = max((u.position for u in chosen if current in u.text), default=None)
        if last_current is None:
            return False
        return not any(u.position > last_current and item.stale in u.text for u in chosen) if item.stale else True
    if item.type == "order":
        first = [min((u.position for u in chosen if answer in u.text), default=None) for answer in item.answers]
        return None not in first and first == sorted(first)  # type: ignore[type-var]
    joined = "\n".join(u.text for u in chosen)
    return all(answer in joined for answer in item.answers)
