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

from aptmem.memory.facts import tokens
from aptmem.recall.headings import headings, shape
from aptmem.session import Session

__all__ = ["UNIT_CHARS", "Judged", "Unit", "judge", "packet", "present", "rendered", "searched", "units", "where"]

#: A line longer than this is cut into pieces of about this many characters (at a space or a comma).
UNIT_CHARS = 320
_BREAK = re.compile(r"[\s,，。;]")
_INDEX_WORD = re.compile(r"[^\W_]+")


class Unit(msgspec.Struct, frozen=True):
    """A line (or piece of one) of the rendering: its text, its place, the message role it is in.

    ``message`` numbers the message it is in; ``context`` is the heading it belongs to in that
    message (:func:`headings`), "" if none: the reader searches and shows it with the line
    (:attr:`shown`), the judge reads only ``text``.
    """

    text: str
    position: int
    role: str
    message: int = 0
    context: str = ""

    @property
    def shown(self) -> str:
        """The unit as a packet shows it: its heading, then the line."""
        return f"{self.context} › {self.text}" if self.context else self.text


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
    """The rendering cut into units, in context order, each with the heading it belongs to."""
    out: list[Unit] = []
    for number, (role, text) in enumerate(messages):
        lines = text.splitlines()
        for line, context in zip(lines, headings(lines), strict=True):
            for piece in _pieces(line.strip()):
                if piece:
                    out.append(Unit(piece, len(out), role, number, context))
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
           cost_of: Callable[[int], int], query: str = "") -> list[Unit]:
    """The units a reader takes within ``budget`` tokens (None: every one), best first.

    ``ranked`` is :meth:`Ranker.rank` of the question over ``all_units``' search texts
    (:func:`searched`); ``cost_of(i)`` the tokens unit ``i`` takes in a packet (its
    :attr:`Unit.shown`). With ``query``, the reader skips a line it has already taken (the
    newest copy is taken: ties rank the later unit first), and a unit that matches the same of the
    query's terms (with its heading) as a line of the same :func:`~aptmem.recall.headings.shape`
    already taken waits until every other unit was tried: the rows of a listing that all name the
    subject (in one output, or in the same command's output run again) say it once, and the budget
    goes to lines of other forms (the lines of one YAML block differ in form: they are not held back).
    """
    terms = _words(query)
    chosen: list[Unit] = []
    waiting: list[int] = []
    taken: set[tuple[frozenset[str], str]] = set()
    seen: set[str] = set()
    left = budget
    for index in ranked:
        unit = all_units[index]
        if terms and left is not None:
            if unit.shown in seen:  # the same line again says nothing new
                continue
            key = (terms.intersection(_words(searched(unit))), shape(unit.text))
            if key in taken:
                waiting.append(index)
                continue
        if left is not None:
            cost = cost_of(index)
            if cost > left:
                continue
            left -= cost
            if terms:
                taken.add(key)
                seen.add(unit.shown)
        chosen.append(unit)
    for index in waiting:
        assert left is not None
        cost = cost_of(index)
        if cost <= left:
            left -= cost
            chosen.append(all_units[index])
    return chosen


def _words(text: str) -> frozenset[str]:
    """The words the ranker's index holds for ``text`` (FTS5's unicode61 splits a term at marks: ``kiwi-`` is ``kiwi``)."""
    return frozenset(_INDEX_WORD.findall(" ".join(tokens(text))))


def searched(unit: Unit) -> str:
    """The text a reader matches a question against: the unit's heading and line."""
    return f"{unit.context} {unit.text}" if unit.context else unit.text


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
