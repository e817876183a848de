"""A seventh held-out workload: a data-platform team's days with an agent (``generator=dataplatform``).

Each session is one working day of a data engineer: requests in English, Japanese or French, Slack
threads pasted in, and the agent's tools: ``dbt build`` output, Airflow task logs, model SQL,
``terraform plan``, a Jira CSV export, a Confluence runbook, the warehouse settings YAML, Kafka
consumer-group listings, an email thread and NDJSON from an observability API. Kinds, phrasings
and questions are in :mod:`.dataplatform_text`, the filler in :mod:`.dataplatform_filler`.

Planted, with the shape's counts: facts of eighteen kinds about tables, DAGs, source connectors,
topics and packages (said by the user, by the agent, or as one line of a tool's output), updates
said in a later day that name the old and the new value (asked for both), sets gathered one value
per day (merged pull requests, cleared DAG runs, cancelled queries), two events on different days
asked in time order, absent facts (a kind and a subject never said together, each said with
something else), and distractors: near misses of each fact (the same kind of another subject, or
another kind of the same subject), some values said again from memory in words in another turn
("somewhere around six hundred thousand messages"), and fact-shaped remarks about filler tables in
every turn.

Written blind in phase 9: without reading the fact finder, the recall code or the memory
strategies, and with only ``none`` and ``full_history`` run on it. Items an answer of which
occurs outside their evidence are dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

import math
import random

from aptmem.entries import Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.dataplatform_filler import TOOL_FORMATS, DataFiller
from experiments.measurements.memory_quality.dataplatform_text import (AGGREGATES, INCIDENTS, KINDS, MODELS, ORDER_EVENTS,
                                                                       ORDER_QUESTIONS, PIPELINES, PlatformKind, fill,
                                                                       language_of, rough)
from experiments.measurements.memory_quality.planner import Planner
from experiments.measurements.memory_quality.planting import PlacedStatement, agent_reply, placed_items, tool_jobs
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["build_dataplatform"]

#: the user's handle in the Slack threads they paste
_ME = "me"
#: the name under which every generator written apart exposes its kinds (the others' phrasing checks read it)
_KINDS = KINDS


class _Draw(Planner):
    """Draws the items and every statement: facts, updates, sets, orders, absent facts and distractors."""

    def __init__(self, shape: WorkloadShape, rng: random.Random, filler: DataFiller) -> None:
        super().__init__(shape, rng, prefix="dp", name="data-platform", fill=fill)
        self.filler = filler

    def run(self) -> None:
        """Draw every item and distractor of the shape."""
        shape, rng = self.shape, self.rng
        for _ in range(shape.updates):
            self._update()
        for _ in range(shape.facts):
            self._fact()
        for n, incident in enumerate(rng.sample(INCIDENTS, min(shape.aggregates, len(INCIDENTS)))):
            self._set(AGGREGATES[n % len(AGGREGATES)], incident)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        for turn in range(self.turns):
            for _ in range(int(shape.noise) + (rng.random() < shape.noise % 1)):
                carrier = rng.choice(("user", "assistant"))
                self._say(turn, carrier, "chat" if carrier == "user" else "prose", self.filler.noise())

    def _update(self) -> None:
        pair = self._pair([k for k in KINDS if k.update])
        if pair is None:
            return
        kind, subject = pair
        old, new = self._value(kind.value, subject), self._value(kind.value, subject)
        if old is None or new is None:
            return
        # The first value in any day but the last; the new one in a later day, said by someone in passing.
        first = self._turn(0, self.turns - self.shape.turns)
        later = self._turn((first // self.shape.turns + 1) * self.shape.turns)
        current = self._add(type="update", kind=kind, subject=subject, answers=(new,), stale=old, ask=kind.ask)
        before = self._add(type="update_before", kind=kind, subject=subject, answers=(old,), ask=kind.ask_before)
        self._state(kind, subject, old, first, current, before)
        carrier = self.rng.choice(("user", "assistant"))
        self._say(later, carrier, "chat" if carrier == "user" else "prose",
                  fill(self.rng.choice(kind.update), subject, new, old), current, before)

    def _fact(self) -> None:
        pair = self._pair(list(KINDS))
        if pair is None:
            return
        kind, subject = pair
        value = self._value(kind.value, subject)
        why = self._value(kind.why, subject) if kind.why else ""
        if value is None or why is None:
            return
        ident = self._add(type="fact", kind=kind, subject=subject, answers=(value, why) if why else (value,), ask=kind.ask)
        self._state(kind, subject, value, self._turn(), ident, why=why)
        said_roughly = rough(kind.name, value)
        if said_roughly and self.rng.random() < 0.7:  # the value from memory, in another turn (a distractor)
            carrier = self.rng.choice(("user", "assistant"))
            template = self.rng.choice(("if I remember right, {s} sits at {r}", "{s}: {r}, more or less, last time I looked"))
            self._say(self._turn(), carrier, "chat" if carrier == "user" else "prose",
                      template.replace("{s}", subject).replace("{r}", said_roughly))
        self._near_misses(kind, subject)

    def _near_misses(self, kind: PlatformKind, subject: str) -> None:
        """Said, never asked: the same kind of another subject, or another kind of the same subject."""
        for _ in range(int(self.shape.near_misses) + (self.rng.random() < self.shape.near_misses % 1)):
            if self.rng.random() < 0.5:
                pair = self._pair([kind])
            else:
                siblings = [k for k in KINDS if k.subject is kind.subject and k is not kind]
                pair = self._pair(siblings, subject) if siblings else None
            if pair is None:
                continue
            other_kind, other = pair
            value = self._value(other_kind.value, other)
            why = self._value(other_kind.why, other) if other_kind.why else ""
            if value is not None and why is not None:
                self._state(other_kind, other, value, self._turn(), why=why)

    def _set(self, spec: tuple, incident: str) -> None:
        """One value per day, all about ``incident``."""
        kind, make, said, questions = spec
        values = [self._value(make) for _ in range(self.shape.sessions)]
        if any(v is None for v in values):
            return
        asked = tuple(q.replace("{t}", incident) for q in questions)
        ident = self._add(type="aggregate", kind=kind, subject=incident, answers=tuple(values), questions=asked)
        for day, value in enumerate(values):
            carrier, fmt, template = self.rng.choice(said)
            turn = self._turn(day * self.shape.turns, (day + 1) * self.shape.turns)
            self._say(turn, carrier, fmt, template.replace("{t}", incident).replace("{v}", str(value)), ident)

    def _order(self) -> None:
        """A table's schema frozen and a DAG's key rotated, on different days (which came first is drawn)."""
        rng, shape = self.rng, self.shape
        table, dag = rng.choice(MODELS), rng.choice(PIPELINES)
        values = [self._value(make) for make, _ in ORDER_EVENTS]
        if any(v is None for v in values):
            return
        events = [(value, said, subject) for value, (_, said), subject in zip(values, ORDER_EVENTS, (table, dag))]
        rng.shuffle(events)
        early = rng.randrange(shape.sessions - 1)
        turns = (self._turn(early * shape.turns, (early + 1) * shape.turns), self._turn((early + 1) * shape.turns))
        asked = tuple(q.replace("{a}", table).replace("{b}", dag) for q in ORDER_QUESTIONS)
        ident = self._add(type="order", kind="dp_event_order", subject=f"{table} / {dag}",
                           answers=tuple(str(v) for v, _, _ in events), questions=asked)
        for (value, (carrier, fmt, template), subject), turn in zip(events, turns):
            self._say(turn, carrier, fmt, fill(template, subject, str(value)), ident)

    def _absent(self) -> None:
        """A kind with a pattern and a subject of its family, each said with something else, never together."""
        planted = {name for name, _ in self.taken}
        candidates = sorted((k.name, s) for k in KINDS if k.pattern and k.name in planted
                            for s in sorted({s for _, s in self.taken})
                            if (k.name, s) not in self.taken
                            and any(kk.subject is k.subject and (kk.name, s) in self.taken for kk in KINDS))
        if not candidates:
            return
        name, subject = self.rng.choice(candidates)
        kind = next(k for k in KINDS if k.name == name)
        self.taken.add((name, subject))
        self._add(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern, ask=kind.ask)


class _Day:
    """Writes the turns of a day: the user's request and paste, the agent's tool calls, its reply."""

    def __init__(self, shape: WorkloadShape, rng: random.Random, filler: DataFiller) -> None:
        self.shape, self.rng, self.filler = shape, rng, filler
        self.clock = EntryClock(rng, 1_795_680_000_000, prefix="dp", spread=0.9)  # a weekday morning in Nov 2026

    def turn(self, said: list[PlacedStatement]) -> list[Entry]:
        """One turn with ``said`` placed in it (each statement gets its entry's id)."""
        rng, filler = self.rng, self.filler
        chat = [s for s in said if s.carrier == "user" and s.fmt == "chat"]
        prose = [s for s in said if s.carrier == "user" and s.fmt != "chat"]
        parts = [filler.opening()]
        if chat or rng.random() < 0.4:  # a pasted thread: the colleagues' lines, the user's own among them
            lines = filler.thread(rng.randrange(2, 7))
            for s in chat:
                who = _ME if rng.random() < 0.5 else filler.colleague()  # the user's own line, or one they relay
                lines.insert(rng.randrange(len(lines) + 1), f"[{rng.randrange(8, 19):02d}:{rng.randrange(60):02d}] {who}: {s.text}")
            parts.append("Pasting the thread:\n" + "\n".join(lines))
        parts += [s.text for s in prose]
        user = User(ts=self.clock.tick(120_000), id=self.clock.next_id("u"), content="\n\n".join(parts))
        entries: list[Entry] = [user]
        for s in chat + prose:
            s.entry_id = user.id or ""
        for fmt, planted in tool_jobs(said, TOOL_FORMATS, (1, 4), rng):
            entries += self._tool(fmt, planted)
        return [*entries, agent_reply(said, self.clock.tick(9_000), self.clock.next_id("a"), "sim-dataplatform-1", filler.reply())]

    def _tool(self, fmt: str, planted: list[PlacedStatement]) -> list[Entry]:
        size = max(240, min(16_000, int(self.rng.lognormvariate(math.log(self.shape.tool_median_bytes), 0.8))))
        name, args, lines = self.filler.tool(fmt, size // 70)
        for s in planted:  # after a header line, where a file or a listing has one
            lines.insert(self.rng.randrange(1, len(lines) + 1), s.text)
        call = ToolCall(ts=self.clock.tick(800), id=self.clock.next_id("c"), name=name, args=args)
        result = ToolResult(ts=self.clock.tick(2_500), id=self.clock.next_id("r"), call_id=call.id or "", name=name,
                            content="\n".join(lines))
        for s in planted:
            s.entry_id = result.id or ""
        return [call, result]


def build_dataplatform(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` working days of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    draw = _Draw(shape, random.Random(f"aptmem-memory-dataplatform:{seed}:items"),
                 DataFiller(random.Random(f"aptmem-memory-dataplatform:{seed}:noise")))
    draw.run()
    text_rng = random.Random(f"aptmem-memory-dataplatform:{seed}:text")
    day = _Day(shape, text_rng, DataFiller(text_rng))
    by_turn: dict[int, list[PlacedStatement]] = {}
    for s in draw.said:
        by_turn.setdefault(s.turn, []).append(s)
    sessions, turn_of = lay_out(shape, lambda turn: day.turn(by_turn.get(turn, [])), day.clock)
    kept, dropped = unambiguous(placed_items(draw.items, draw.said, turn_of, shape, fill, language_of), sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for s in draw.said if not s.items))

