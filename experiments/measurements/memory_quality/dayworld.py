"""The skeleton of the generators that write a team's working days (:mod:`.mobilerelease`, :mod:`.gamestudio`,
:mod:`.firmware`): what each plants and how a day's turns are written, with what differs in a :class:`DayWorld`.

A day-world generator is its text module (kinds, phrasings, sets, ordered events, remarks, ``fill`` and
``language_of``), its filler (the chat, tool output and replies around the statements) and a
:class:`DayWorld` naming them; :func:`build_day_world` plants the items and writes the sessions. The
planner's draws and the writer's consume two random streams named after the generator in one fixed
order, so a generator's workload stays the same for a seed whatever else is written here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from aptmem.entries import Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.planner import Planner
from experiments.measurements.memory_quality.planting import (DrawnKind, PlacedStatement, agent_reply, placed_items,
                                                              tool_jobs)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["DayFiller", "DayKind", "DayWorld", "build_day_world"]

#: (carrier, format, template) of one way a statement is said
Said = tuple[str, str, str]
#: a set's kind, how one member is drawn, how a member is said, and the question's three wordings ({t}: the topic)
Aggregate = tuple[str, Callable[[random.Random], str], tuple[Said, ...], tuple[str, str, str]]
#: how an ordered event's value is drawn and how it is said ({s}: the subject, {v}: the value)
OrderEvent = tuple[Callable[[random.Random], str], Said]


@dataclass(frozen=True)
class DayKind(DrawnKind):
    """One relation a day-world generator plants; ``family`` is the subjects it is said of."""

    family: tuple[str, ...] = ()
    #: a decision's reason (the second part of its answer)
    why: Callable[[random.Random], str] | None = None


class DayFiller(Protocol):
    """The text around the planted statements: the team's chat, the agent's tool output and its replies."""

    def opening(self, lines: int) -> list[str]:
        """``lines`` lines of the team's chat the user pastes before their own."""
        ...

    def reply(self) -> str:
        """The agent's reply around what it says."""
        ...

    def tool(self, fmt: str, size: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call of format ``fmt``: its name, arguments, and output blocks of about ``size`` bytes."""
        ...

    def assemble(self, fmt: str, blocks: list[str]) -> str:
        """The tool output of format ``fmt`` made of ``blocks``."""
        ...


@dataclass(frozen=True)
class DayWorld:
    """What one day-world generator is made of: its text, its filler and the names its workload carries."""

    #: the generator's name (``generator=...``); it seeds the random streams
    name: str
    #: what opens item and entry ids (``mr`` gives ``mr_000``), and the generator in the planner's errors
    prefix: str
    title: str
    kinds: Sequence[DayKind]
    aggregates: Sequence[Aggregate]
    set_topics: Sequence[str]
    #: the subjects two ordered events are drawn from, the two events and the question's wordings ({a}, {b})
    order_subjects: Sequence[str]
    order_events: Sequence[OrderEvent]
    order_questions: Sequence[str]
    fill: Callable[..., str]
    language_of: Callable[[str], str]
    noise_statement: Callable[[random.Random], str]
    filler: Callable[[random.Random], DayFiller]
    tool_formats: Sequence[str]
    #: the first entry's time (epoch milliseconds)
    start_ms: int
    #: how the user's own line sits in the pasted chat ({}: the statement)
    user_line: str
    #: the model the agent's replies name
    model: str


class _Plan(Planner):
    """Draws the items and their statements (facts, updates, sets, orders, absent facts, distractors)."""

    def __init__(self, world: DayWorld, shape: WorkloadShape, rng: random.Random) -> None:
        super().__init__(shape, rng, prefix=world.prefix, name=world.title, fill=world.fill)
        self.world = world

    def _drawn(self, kind: DayKind, subject: str) -> tuple[str, str] | None:
        """A fresh value of ``kind`` for ``subject`` and, for a decision, a fresh reason (None: none is left)."""
        try:
            return self._fresh(kind.value, subject), self._fresh(lambda r: kind.why(r)) if kind.why else ""
        except ValueError:
            return None

    def plan(self) -> None:
        """Draw every item and distractor of the shape."""
        shape, rng, world = self.shape, self.rng, self.world
        updatable = [k for k in world.kinds if k.update]
        for _ in range(shape.updates):
            pair = self._pair(updatable)
            if pair is None:
                break
            self._plant_update(*pair)
        for _ in range(shape.facts):
            pair = self._pair(list(world.kinds))
            if pair is None:
                break
            kind, subject = pair
            drawn = self._drawn(kind, subject)
            if drawn is None:  # this kind's values are used up; the next draw takes another
                continue
            value, why = drawn
            ident = self._add(type="fact", kind=kind, subject=subject, answers=(value, why) if why else (value,), ask=kind.ask)
            self._state(kind, subject, value, self._turn(), ident, why=why)
            self._near_miss(kind, subject)
        for n, topic in enumerate(rng.sample(world.set_topics, min(shape.aggregates, len(world.set_topics)))):
            self._aggregate(world.aggregates[n % len(world.aggregates)], topic)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        remarks: set[str] = set()
        for turn in range(self.turns):
            for _ in range(int(shape.noise) + (rng.random() < shape.noise % 1)):
                remark = next((r for r in (world.noise_statement(rng) for _ in range(50)) if r not in remarks), "")
                if remark:  # each remark once: a distractor said twice would be one the reader can skip
                    remarks.add(remark)
                    self._say(turn, *self._voice(), remark)

    def _near_miss(self, kind: DayKind, subject: str) -> None:
        """The same kind of another subject, or another kind of the same subject (said, never asked)."""
        for _ in range(int(self.shape.near_misses) + (self.rng.random() < self.shape.near_misses % 1)):
            siblings = [k for k in self.world.kinds if k.family is kind.family and k is not kind]
            if self.rng.random() < 0.5 or not siblings:
                pair = self._pair([kind])
            else:
                pair = self._pair(siblings, subject)
            if pair is None:
                continue
            other_kind, other = pair
            drawn = self._drawn(other_kind, other)
            if drawn is not None:  # (no distinct value left for a near miss: it is left out)
                self._state(other_kind, other, drawn[0], self._turn(), why=drawn[1])

    def _order(self) -> None:
        """Two events of two subjects in different sessions, asked in time order."""
        rng, shape, world = self.rng, self.shape, self.world
        a, b = rng.sample(world.order_subjects, 2)
        events = [(make, said, subject) for (make, said), subject in zip(world.order_events, (a, b))]
        rng.shuffle(events)
        early = rng.randrange(shape.sessions - 1)
        turns = (self._turn(early * shape.turns, (early + 1) * shape.turns), self._turn((early + 1) * shape.turns))
        values = [self._fresh(lambda r, m=make: m(r)) for make, _, _ in events]
        ident = self._add(type="order", kind=f"{world.prefix}_event_order", subject=f"{a} / {b}", answers=tuple(values),
                          questions=tuple(q.replace("{a}", a).replace("{b}", b) for q in world.order_questions))
        for (_, (carrier, fmt, template), subject), value, turn in zip(events, values, turns):
            self._say(turn, carrier, fmt, world.fill(template, subject, value), ident)

    def _absent(self) -> None:
        """A kind (with a pattern) and a subject of its family never planted together, each planted with something else."""
        planted_kinds = {name for name, _ in self.taken}
        planted_subjects = {s for _, s in self.taken}
        candidates = [(k, s) for k in self.world.kinds if k.pattern and k.name in planted_kinds
                      for s in k.family if s in planted_subjects and (k.name, s) not in self.taken]
        if candidates:
            kind, subject = self.rng.choice(candidates)
            self.taken.add((kind.name, subject))
            self._add(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern, ask=kind.ask)


class _Writer:
    """Writes a day's turns: the user's request and pasted chat, the agent's tool calls, its reply."""

    def __init__(self, world: DayWorld, shape: WorkloadShape, rng: random.Random) -> None:
        self.world, self.shape, self.rng = world, shape, rng
        self.filler = world.filler(rng)
        self.clock = EntryClock(rng, world.start_ms, prefix=world.prefix, spread=0.6)

    def turn(self, said: list[PlacedStatement]) -> list[Entry]:
        """One turn with ``said`` placed in it (each gets its entry's id)."""
        rng, filler = self.rng, self.filler
        users = [s for s in said if s.carrier == "user"]
        # The user's own lines sit in the pasted chat under their handle, among teammates' lines.
        lines = filler.opening(rng.randrange(0, 3)) + [self.world.user_line.format(s.text) for s in users]
        user = User(ts=self.clock.tick(120_000), id=self.clock.next_id("u"), content="\n".join(lines))
        entries: list[Entry] = [user]
        for s in users:
            s.entry_id = user.id or ""
        for fmt, planted in tool_jobs(said, self.world.tool_formats, (1, 3), rng):
            entries += self._tool(fmt, planted)
        return [*entries, agent_reply(said, self.clock.tick(9_000), self.clock.next_id("a"), self.world.model, filler.reply())]

    def _tool(self, fmt: str, planted: list[PlacedStatement]) -> list[Entry]:
        size = max(300, min(16_000, int(self.rng.lognormvariate(math.log(self.shape.tool_median_bytes), 0.8))))
        name, args, blocks = self.filler.tool(fmt, size)
        for s in planted:
            blocks.insert(self.rng.randrange(len(blocks) + 1), s.text)
        call = ToolCall(ts=self.clock.tick(700), id=self.clock.next_id("c"), name=name, args=args)
        result = ToolResult(ts=self.clock.tick(2_000), id=self.clock.next_id("r"), call_id=call.id or "", name=name,
                            content=self.filler.assemble(fmt, blocks))
        for s in planted:
            s.entry_id = result.id or ""
        return [call, result]


def build_day_world(world: DayWorld, shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` days of ``shape.turns`` turns of ``world`` with the shape's items planted, unambiguous only."""
    plan = _Plan(world, shape, random.Random(f"aptmem-memory-{world.name}:{seed}:items"))
    plan.plan()
    writer = _Writer(world, shape, random.Random(f"aptmem-memory-{world.name}:{seed}:text"))
    by_turn: dict[int, list[PlacedStatement]] = {}
    for s in plan.said:
        by_turn.setdefault(s.turn, []).append(s)

    sessions, turn_of = lay_out(shape, lambda turn: writer.turn(by_turn.get(turn, [])), writer.clock)
    kept, dropped = unambiguous(placed_items(plan.items, plan.said, turn_of, shape, world.fill, world.language_of),
                                sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for s in plan.said if not s.items))
