"""What the workloads written apart from :mod:`.workload` share: kinds of facts, turns with plants, the build.

:mod:`.independent` and :mod:`.fieldnotes` each bring their own kinds, subjects and filler (a
:class:`Filler`); this module places the planted statements in turns and builds the
:class:`~.workload.Workload` the replay scores (facts and updates, asked for the current value and
for the one before, one near miss per kind), so both are scored alike.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.workload import Item, Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["DrawnKind", "Filler", "PlacedStatement", "PlantKind", "TurnWriter", "agent_reply", "build_planted", "hex_digits",
           "placed_items", "tool_jobs"]


def hex_digits(rng: random.Random, n: int) -> str:
    """``n`` random lowercase hex digits."""
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


@dataclass(frozen=True)
class PlantKind:
    """A kind of fact: how a value is drawn (given its subject), how it is said and updated, how it is asked."""

    name: str
    value: Callable[[random.Random, str], str]
    #: (carrier, format, template with {s}, {S} and {v})
    said: tuple[tuple[str, str, str], ...]
    #: update templates with {s}, {S}, {old} and {v}
    update: tuple[str, ...]
    ask: tuple[str, str, str]
    ask_before: tuple[str, str, str] = ("", "", "")
    lang: str = "english"


@dataclass(frozen=True)
class DrawnKind:
    """A relation of a generator that draws each kind's subjects itself (:mod:`.oncall`, :mod:`.dataplatform`): how
    its subject and value are drawn, how it is said, updated and asked; each generator adds what only it needs."""

    name: str
    subject: Callable[[random.Random], str]
    value: Callable[[random.Random, str], str]
    #: (carrier, format, template)
    said: tuple[tuple[str, str, str], ...]
    #: the question: template, paraphrase without the relation words, other language
    ask: tuple[str, str, str]
    #: a regular expression every value of the kind matches ("" when none can be written: no absent items)
    pattern: str = ""
    #: update templates ({old} and {v}); with ``ask_before`` the kind can be updated
    update: tuple[str, ...] = ()
    ask_before: tuple[str, str, str] = ("", "", "")


@dataclass
class PlacedStatement:
    """A statement to place in a turn: its turn, carrier, format and text, the items it is evidence of,
    and the id of the entry it lands in (set when the turn is written)."""

    turn: int
    carrier: str
    fmt: str
    text: str
    items: tuple[str, ...] = ()
    entry_id: str = ""


class Filler(Protocol):
    """A workload's own filler: what the user opens a turn with, the reply, and a tool's output."""

    def opening(self, rng: random.Random) -> str:
        """The first lines of the user's message."""
        ...

    def reply(self, rng: random.Random) -> str:
        """The assistant's reply, before the statements it plants."""
        ...

    def tool_text(self, rng: random.Random) -> tuple[str, dict[str, object], str]:
        """A tool call's name and arguments, and its output."""
        ...


class TurnWriter:
    """Writes turns of filler with the planted statements placed in them (user, tool output, reply)."""

    def __init__(self, rng: random.Random, filler: Filler, *, prefix: str, model: str, ts: int,
                 ticks: tuple[int, int, int, int]) -> None:
        self.rng, self.filler, self.model = rng, filler, model
        self.clock = EntryClock(rng, ts, prefix=prefix)
        #: mean milliseconds before the user message, a tool call, its result and the reply
        self.ticks = ticks
    def turn(self, plants: list[list[str]]) -> list[Entry]:
        """One turn; each plant is [carrier, text, id slot] and gets its entry's id in slot 2."""
        rng, (user_ms, call_ms, result_ms, reply_ms) = self.rng, self.ticks
        by = {c: [p for p in plants if p[0] == c] for c in ("user", "assistant", "tool")}
        user = User(ts=self.clock.tick(user_ms), id=self.clock.next_id("u"),
                    content="\n".join([self.filler.opening(rng), *(p[1] for p in by["user"])]))
        entries: list[Entry] = [user]
        for p in by["user"]:
            p[2] = user.id or ""
        tools = by["tool"] + [None] * rng.randrange(1, 3)  # type: ignore[list-item]
        rng.shuffle(tools)
        for plant in tools:
            name, args, text = self.filler.tool_text(rng)
            if plant is not None:
                lines = text.split("\n")
                lines.insert(rng.randrange(1, len(lines) + 1), plant[1])
                text = "\n".join(lines)
            call = ToolCall(ts=self.clock.tick(call_ms), id=self.clock.next_id("c"), name=name, args=args)
            result = ToolResult(ts=self.clock.tick(result_ms), id=self.clock.next_id("r"), call_id=call.id or "", name=name, content=text)
            if plant is not None:
                plant[2] = result.id or ""
            entries += [call, result]
        reply = Assistant(ts=self.clock.tick(reply_ms), id=self.clock.next_id("a"), model=self.model,
                          content="\n\n".join([self.filler.reply(rng), *(p[1] for p in by["assistant"])]))
        for p in by["assistant"]:
            p[2] = reply.id or ""
        return [*entries, reply]


def build_planted(shape: WorkloadShape, rng: random.Random, kinds: Sequence[PlantKind], subjects: Sequence[str],
                  writer: Callable[[], TurnWriter], *, item_prefix: str, spare: int = 0) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` turns with ``shape.facts`` facts and ``shape.updates`` updates
    of ``kinds`` about ``subjects`` planted, and one near miss per kind (its ``spare``-th unused subject).

    ``writer()`` is called once the plants are drawn (it draws from the same ``rng``).
    """
    turns = shape.sessions * shape.turns
    pairs = [(k, s) for k in kinds for s in subjects]
    rng.shuffle(pairs)
    plants: dict[int, list[list[str]]] = {}
    raw: list[tuple[dict[str, object], list[list[str]]]] = []
    used: set[tuple[str, str]] = set()

    def say(turn: int, carrier: str, text: str) -> list[str]:
        plant = [carrier, text, ""]
        plants.setdefault(turn, []).append(plant)
        return plant

    def fill(template: str, subject: str, **values: str) -> str:
        return template.format(s=subject, S=subject.upper(), **values)

    for kind, subject in [(k, s) for k, s in pairs if k.update][: shape.updates]:
        used.add((kind.name, subject))
        old = kind.value(rng, subject)
        new = next((v for v in (kind.value(rng, subject) for _ in range(50)) if v != old), old)
        first = rng.randrange(0, turns - shape.turns)
        later = rng.randrange((first // shape.turns + 1) * shape.turns, turns)
        carrier, fmt, template = rng.choice(kind.said)
        a = say(first, carrier, fill(template, subject, v=old))
        b = say(later, "user", fill(rng.choice(kind.update), subject, v=new, old=old))
        base = {"kind": kind.name, "lang": kind.lang, "format": fmt, "subject": subject}
        raw.append(({**base, "type": "update", "answers": (new,), "stale": old,
                     "questions": tuple(fill(q, subject) for q in kind.ask)}, [a, b]))
        raw.append(({**base, "type": "update_before", "answers": (old,),
                     "questions": tuple(fill(q, subject) for q in kind.ask_before)}, [a, b]))
    for kind, subject in [(k, s) for k, s in pairs if (k.name, s) not in used][: shape.facts]:
        used.add((kind.name, subject))
        carrier, fmt, template = rng.choice(kind.said)
        value = kind.value(rng, subject)
        plant = say(rng.randrange(turns), carrier, fill(template, subject, v=value))
        raw.append(({"kind": kind.name, "lang": kind.lang, "format": fmt, "subject": subject, "type": "fact",
                     "answers": (value,), "questions": tuple(fill(q, subject) for q in kind.ask)}, [plant]))
    # Near misses: each kind said once more of a subject nobody asks about (same kind, other subject).
    for kind in kinds:
        unused = [s for s in subjects if (kind.name, s) not in used]
        if unused:
            carrier, _, template = rng.choice(kind.said)
            subject = unused[spare]
            say(rng.randrange(turns), carrier, fill(template, subject, v=kind.value(rng, subject)))
    turn_writer = writer()

    sessions, turn_of = lay_out(shape, lambda turn: turn_writer.turn(plants.get(turn, [])), turn_writer.clock)
    items = []
    for number, (fields, evidence) in enumerate(raw):
        ordered = sorted(evidence, key=lambda p: turn_of[p[2]])
        items.append(Item(id=f"{item_prefix}{number:03d}", carrier=ordered[-1][0],
                          evidence=tuple(dict.fromkeys(p[2] for p in ordered)),
                          session=turn_of[ordered[-1][2]] // shape.turns, turn=turn_of[ordered[-1][2]],
                          first_turn=turn_of[ordered[0][2]], **fields))  # type: ignore[arg-type]
    kept, dropped = unambiguous(items, sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped, distractors=0)


def placed_items(raw: Iterable[Mapping[str, object]], said: Sequence[PlacedStatement], turn_of: dict[str, int],
                 shape: WorkloadShape, fill: Callable[[str, str], str], language_of: Callable[[str], str]) -> list[Item]:
    """A generator's drawn items as :class:`~.workload.Item`, with their evidence ids, carrier, format, language and turns.

    ``raw`` are the item fields a generator drew; one with ``ask`` (its question templates) holds its kind object,
    whose ``name`` is the item's kind and whose templates ``fill`` completes with the subject. The evidence of an item
    is every placed statement naming it, in turn order; its carrier, format and language are those of the last one
    (what a reader meets most recently), ``language_of`` the question's when nothing states it (an absent item).
    """
    evidence: dict[str, list[PlacedStatement]] = {}
    for s in said:
        for ident in s.items:
            evidence.setdefault(ident, []).append(s)
    out: list[Item] = []
    for drawn in raw:
        fields = dict(drawn)
        kind, ask = fields.pop("kind"), fields.pop("ask", None)
        if ask is not None:
            fields["questions"] = tuple(fill(q, str(fields["subject"])) for q in ask)  # type: ignore[attr-defined]
            kind = kind.name  # type: ignore[attr-defined]
        stated = sorted(evidence.get(str(fields["id"]), []), key=lambda s: turn_of[s.entry_id])
        last = stated[-1] if stated else None
        fields.setdefault("lang", language_of(last.text) if last else language_of(str(fields["questions"][0])))  # type: ignore[index]
        out.append(Item(**fields, kind=kind,  # type: ignore[arg-type]
                        carrier=last.carrier if last else "", format=last.fmt if last else "",
                        evidence=tuple(dict.fromkeys(s.entry_id for s in stated)),
                        session=turn_of[last.entry_id] // shape.turns if last else -1,
                        turn=turn_of[last.entry_id] if last else -1,
                        first_turn=turn_of[stated[0].entry_id] if stated else -1))
    return out


def tool_jobs(said: Sequence[PlacedStatement], formats: Sequence[str], fillers: tuple[int, int],
              rng: random.Random) -> list[tuple[str, list[PlacedStatement]]]:
    """The tool outputs of a turn, in a drawn order: one per format that carries planted statements of ``said``, and
    ``rng.randrange(*fillers)`` outputs of a format drawn from ``formats`` that carry none."""
    by_format: dict[str, list[PlacedStatement]] = {}
    for s in said:
        if s.carrier == "tool":
            by_format.setdefault(s.fmt, []).append(s)
    jobs = list(by_format.items()) + [(rng.choice(formats), []) for _ in range(rng.randrange(*fillers))]
    rng.shuffle(jobs)
    return jobs


def agent_reply(said: Sequence[PlacedStatement], ts: int, ident: str, model: str, opening: str) -> Assistant:
    """The agent's reply of a turn: ``opening``, then the remarks of ``said`` the assistant carries (each told the
    reply's id, the entry it is evidence in)."""
    remarks = [s for s in said if s.carrier == "assistant"]
    reply = Assistant(ts=ts, id=ident, model=model, content="\n\n".join([opening, *(s.text for s in remarks)]))
    for s in remarks:
        s.entry_id = reply.id or ""
    return reply
