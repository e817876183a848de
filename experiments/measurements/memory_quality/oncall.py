"""A sixth held-out workload: an on-call engineer's incident shifts with an agent (``generator=oncall``).

Each session is one shift of an incident: the user pastes the incident channel (timestamped lines
in English, German, Spanish and Chinese) and asks for checks, status updates and the postmortem;
the agent calls ``kubectl``, PromQL, the Alertmanager and PagerDuty APIs, the wiki's runbooks, the
postmortem's email thread (quoted replies) and its action-item sheet (TSV), and replies. Its
kinds, phrasings and filler are in :mod:`.oncall_text`.

Planted, with the shape's counts: facts of thirteen kinds (said by the user in the channel, by the
agent, or inside a tool's output, one line of it or a record of minified JSON), some also given in
words in another turn ("about two and a half gigs"); knowledge updates said in a later shift
(asked for the current value and the one before); sets gathered one per shift (cordoned nodes,
hotfix merge requests); two events in different shifts asked in time order; absent facts (a
subject and a kind never said together, each said with something else); and distractors: near
misses of each fact (the same kind of another service, or another kind of the same service) and
fact-shaped remarks in every turn. Every question comes in three wordings (the template, a
paraphrase without the relation's words, another language).

Written blind in phase 6: without reading the fact finder or the memory strategies, and none was
run on it while it was written. Items an answer of which occurs outside their evidence are
dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

import math
import random

from aptmem.entries import Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.oncall_text import (AGGREGATES, INCIDENTS, ORDER_EVENTS, ORDER_QUESTIONS,
                                                                 SERVICES, IncidentKind, OncallFiller, _KINDS, fill,
                                                                 language_of, noise_statement)
from experiments.measurements.memory_quality.planner import Planner
from experiments.measurements.memory_quality.planting import PlacedStatement, agent_reply, placed_items, tool_jobs
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["build_oncall"]


class _Plan(Planner):
    """Draws the items and their statements (facts, updates, sets, orders, absent facts, distractors)."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        super().__init__(shape, rng, prefix="oc", name="on-call", fill=fill)

    def _value_and_why(self, kind: IncidentKind, subject: str) -> tuple[str, str] | None:
        """A fresh value of ``kind`` for ``subject`` and, for a decision, a fresh reason (None: none is left)."""
        try:
            return self._fresh(kind.value, subject), self._fresh(kind.why) if kind.why else ""
        except ValueError:
            return None

    def plan(self) -> None:
        """Draw every item and distractor of the shape."""
        shape, rng = self.shape, self.rng
        updatable = [k for k in _KINDS if k.update]
        for _ in range(shape.updates):
            pair = self._pair(updatable)
            if pair is None:
                break
            self._plant_update(*pair)
        for _ in range(shape.facts):
            pair = self._pair(list(_KINDS))
            if pair is None:
                break
            kind, subject = pair
            drawn = self._value_and_why(kind, subject)
            if drawn is None:  # this kind's values are used up; the next draw takes another
                continue
            value, why = drawn
            turn = self._turn()
            ident = self._add(type="fact", kind=kind, subject=subject, answers=(value, why) if why else (value,), ask=kind.ask)
            self._state(kind, subject, value, turn, ident, why=why)
            if kind.gloss and rng.random() < 0.6:  # the value in words, in another turn (not evidence)
                self._say(self._turn(), *self._voice(), f"{subject} is at {kind.gloss(value)}, if I read the dashboard right")
            self._near_miss(kind, subject)
        start = rng.randrange(len(AGGREGATES))  # the set kinds in turn, from a drawn one
        for n, incident in enumerate(rng.sample(INCIDENTS, min(shape.aggregates, len(INCIDENTS)))):
            self._aggregate(AGGREGATES[(start + n) % len(AGGREGATES)], incident)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        for turn in range(self.turns):
            for _ in range(int(shape.noise) + (rng.random() < shape.noise % 1)):
                self._say(turn, *self._voice(), noise_statement(rng))

    def _near_miss(self, kind: IncidentKind, subject: str) -> None:
        """The same kind of another subject, or another kind of the same subject (said, never asked)."""
        for _ in range(int(self.shape.near_misses) + (self.rng.random() < self.shape.near_misses % 1)):
            if self.rng.random() < 0.5:
                pair = self._pair([kind])
            else:
                same_subjects = [k for k in _KINDS if k.subject is kind.subject and k is not kind]
                pair = self._pair(same_subjects, subject) if same_subjects else None
            if pair is None:
                continue
            other_kind, other = pair
            drawn = self._value_and_why(other_kind, other)
            if drawn is not None:  # (no distinct value left for a near miss: it is left out)
                self._state(other_kind, other, drawn[0], self._turn(), why=drawn[1])

    def _order(self) -> None:
        """Two events in different shifts: silencing one service's alerts and restoring another from a snapshot."""
        rng, shape = self.rng, self.shape
        a, b = rng.sample(SERVICES, 2)
        events = [(make, said, service) for (make, said), service in zip(ORDER_EVENTS, (a, b))]
        rng.shuffle(events)
        early = rng.randrange(shape.sessions - 1)
        turns = (self._turn(early * shape.turns, (early + 1) * shape.turns), self._turn((early + 1) * shape.turns))
        values = [self._fresh(make) for make, _, _ in events]
        ask = tuple(q.replace("{a}", a).replace("{b}", b) for q in ORDER_QUESTIONS)
        ident = self._add(type="order", kind="oncall_event_order", subject=f"{a} / {b}", answers=tuple(values),
                          questions=ask)
        for (_, (carrier, fmt, template), service), value, turn in zip(events, values, turns):
            self._say(turn, carrier, fmt, fill(template, service, value), ident)

    def _absent(self) -> None:
        """A kind (with a pattern) and a subject never planted together, each planted with something else."""
        planted_kinds = {name for name, _ in self.taken}
        subjects = sorted({s for _, s in self.taken if s in SERVICES})
        # Only kinds about services have a pattern, so every candidate pairs a service with a service kind.
        candidates = [(k, s) for k in _KINDS if k.pattern and k.name in planted_kinds
                      for s in subjects if (k.name, s) not in self.taken]
        if candidates:
            kind, subject = self.rng.choice(candidates)
            self.taken.add((kind.name, subject))
            self._add(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern, ask=kind.ask)


class _Writer:
    """Writes the turns of the shifts: the user's paste and request, the agent's tool calls, its reply."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        self.shape, self.rng = shape, rng
        self.filler = OncallFiller(rng)
        self.clock = EntryClock(rng, 1_764_633_600_000, prefix="oc", spread=0.7)  # a night shift's start

    def turn(self, said: list[PlacedStatement]) -> list[Entry]:
        """One turn with ``said`` placed in it (each gets its entry's id)."""
        rng, filler = self.rng, self.filler
        ts = self.clock.tick(90_000)
        users = [s for s in said if s.carrier == "user"]
        # What the user says in the channel is pasted after the others' lines, seconds before the request.
        lines = [filler.opening(ts)] + [f"[{filler.clock(ts - 1000 * (len(users) - n))}] <me> {s.text}"
                                        if s.fmt == "chat" else s.text for n, s in enumerate(users)]
        user = User(ts=ts, id=self.clock.next_id("u"), content="\n".join(lines))
        entries: list[Entry] = [user]
        for s in users:
            s.entry_id = user.id or ""
        formats = ("kubectl", "log", "promql", "json", "runbook", "email", "table")
        for fmt, planted in tool_jobs(said, formats, (1, 4), rng):
            entries += self._tool(fmt, planted)
        return [*entries, agent_reply(said, self.clock.tick(7_000), self.clock.next_id("a"), "sim-oncall-1", filler.reply())]

    def _tool(self, fmt: str, planted: list[PlacedStatement]) -> list[Entry]:
        size = max(300, min(20_000, int(self.rng.lognormvariate(math.log(self.shape.tool_median_bytes), 0.9))))
        name, args, lines = self.filler.tool(fmt, size)
        for s in planted:
            lines.insert(self.rng.randrange(1 if fmt != "json" else 0, len(lines) + 1), s.text)
        content = "[" + ",".join(lines) + "]" if fmt == "json" else "\n".join(lines)
        call = ToolCall(ts=self.clock.tick(600), id=self.clock.next_id("c"), name=name, args=args)
        result = ToolResult(ts=self.clock.tick(1_500), id=self.clock.next_id("r"), call_id=call.id or "", name=name, content=content)
        for s in planted:
            s.entry_id = result.id or ""
        return [call, result]


def build_oncall(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` incident shifts of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    plan = _Plan(shape, random.Random(f"aptmem-memory-oncall:{seed}:items"))
    plan.plan()
    writer = _Writer(shape, random.Random(f"aptmem-memory-oncall:{seed}:text"))
    by_turn: dict[int, list[PlacedStatement]] = {}
    for s in plan.said:
        by_turn.setdefault(s.turn, []).append(s)

    sessions, turn_of = lay_out(shape, lambda turn: writer.turn(by_turn.get(turn, [])), writer.clock)
    kept, dropped = unambiguous(placed_items(plan.items, plan.said, turn_of, shape, fill, language_of), sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for s in plan.said if not s.items))

