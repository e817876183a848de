"""A tenth held-out workload: an embedded firmware team's days with an agent (``generator=firmware``).

Each session is one day of a team taking a few boards from bring-up to a production run: the user
pastes the team's Mattermost lines (English, German, Japanese) and asks for checks and drafts; the
agent reads a UART boot log, Yocto bitbake and Zephyr west output, devicetree fragments,
Kconfig/defconfig lines, a CAN candump, an OpenOCD session, a BOM exported as CSV, a bring-up
checklist in Markdown, a contract manufacturer's RMA email, a minified JSON OTA manifest, datasheet
excerpts and C comments, and replies. Its kinds and phrasings are in :mod:`.firmware_text`, its
filler in :mod:`.firmware_filler`.

Planted, with the shape's counts: facts of eighteen kinds (SoCs, firmware versions, hardware
revisions, bring-up owners, flash slot addresses, OTA digests, CAN ids and periods, fault program
counters and tickets, part numbers, lead times and prices, RMA numbers, first-pass yields, Zephyr
baselines, release tags, decisions with their reason), some said indirectly (a devicetree property
below its node comment, a defconfig symbol below its release header, a manifest member, a fault's
pc above its addr2line); knowledge updates said in a later session (asked for the current value and
the one before); sets gathered one value per session (failed test points, silicon errata); two
events in different sessions asked in time order (an OTA beta rollout, a factory image handover);
absent facts (a subject and a kind never said together, each said with something else); and
distractors: near misses of each fact (the same kind of another subject, or another kind of the
same subject) and fact-shaped remarks in every turn. Every question comes in three wordings (the
template, a paraphrase without the relation's words, another language).

Written blind in phase 11: without reading the fact finder, the recall code or the strategies, and
only ``none`` and ``full_history`` were run on it while it was written. Items an answer of which
occurs outside their evidence are dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

import math
import random

from aptmem.entries import Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.firmware_filler import TOOL_FORMATS, FirmwareFiller
from experiments.measurements.memory_quality.firmware_text import (AGGREGATES, KINDS, RELEASES, ORDER_EVENTS,
                                                                     ORDER_QUESTIONS, SET_TOPICS, FirmwareKind, fill,
                                                                     language_of, noise_statement)
from experiments.measurements.memory_quality.planner import Planner
from experiments.measurements.memory_quality.planting import PlacedStatement, agent_reply, placed_items, tool_jobs
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["build_firmware"]


class _Plan(Planner):
    """Draws the items and their statements (facts, updates, sets, orders, absent facts, distractors)."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        super().__init__(shape, rng, prefix="fw", name="firmware", fill=fill)

    def _drawn(self, kind: FirmwareKind, subject: str) -> tuple[str, str] | None:
        """A fresh value of ``kind`` for ``subject`` and, for a decision, a fresh reason (None: none is left)."""
        try:
            return self._fresh(kind.value, subject), self._fresh(lambda r: kind.why(r)) if kind.why else ""
        except ValueError:
            return None

    def plan(self) -> None:
        """Draw every item and distractor of the shape."""
        shape, rng = self.shape, self.rng
        updatable = [k for k in KINDS if k.update]
        for _ in range(shape.updates):
            pair = self._pair(updatable)
            if pair is None:
                break
            self._plant_update(*pair)
        for _ in range(shape.facts):
            pair = self._pair(list(KINDS))
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
        for n, topic in enumerate(rng.sample(SET_TOPICS, min(shape.aggregates, len(SET_TOPICS)))):
            self._aggregate(AGGREGATES[n % len(AGGREGATES)], topic)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        remarks: set[str] = set()
        for turn in range(self.turns):
            for _ in range(int(shape.noise) + (rng.random() < shape.noise % 1)):
                remark = next((r for r in (noise_statement(rng) for _ in range(50)) if r not in remarks), "")
                if remark:  # each remark once: a distractor said twice would be one the reader can skip
                    remarks.add(remark)
                    self._say(turn, *self._voice(), remark)

    def _near_miss(self, kind: FirmwareKind, subject: str) -> None:
        """The same kind of another subject, or another kind of the same subject (said, never asked)."""
        for _ in range(int(self.shape.near_misses) + (self.rng.random() < self.shape.near_misses % 1)):
            siblings = [k for k in KINDS if k.family is kind.family and k is not kind]
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

    def _aggregate(self, spec: tuple, topic: str) -> None:
        """One value of a set per session, all about ``topic``."""
        kind, make, said, questions = spec
        values = tuple(self._fresh(lambda r: make(r)) for _ in range(self.shape.sessions))
        ident = self._add(type="aggregate", kind=kind, subject=topic, answers=values,
                          questions=tuple(q.replace("{t}", topic) for q in questions))
        for session, value in enumerate(values):
            carrier, fmt, template = self.rng.choice(said)
            turn = self._turn(session * self.shape.turns, (session + 1) * self.shape.turns)
            self._say(turn, carrier, fmt, template.replace("{t}", topic).replace("{v}", value), ident)

    def _order(self) -> None:
        """Two events in different sessions: an OTA beta rollout of one release, a factory image handover of another."""
        rng, shape = self.rng, self.shape
        a, b = rng.sample(RELEASES, 2)
        events = [(make, said, release) for (make, said), release in zip(ORDER_EVENTS, (a, b))]
        rng.shuffle(events)
        early = rng.randrange(shape.sessions - 1)
        turns = (self._turn(early * shape.turns, (early + 1) * shape.turns), self._turn((early + 1) * shape.turns))
        values = [self._fresh(lambda r, m=make: m(r)) for make, _, _ in events]
        ident = self._add(type="order", kind="fw_event_order", subject=f"{a} / {b}", answers=tuple(values),
                          questions=tuple(q.replace("{a}", a).replace("{b}", b) for q in ORDER_QUESTIONS))
        for (_, (carrier, fmt, template), release), value, turn in zip(events, values, turns):
            self._say(turn, carrier, fmt, fill(template, release, value), ident)

    def _absent(self) -> None:
        """A kind (with a pattern) and a subject of its family never planted together, each planted with something else."""
        planted_kinds = {name for name, _ in self.taken}
        planted_subjects = {s for _, s in self.taken}
        candidates = [(k, s) for k in KINDS if k.pattern and k.name in planted_kinds
                      for s in k.family if s in planted_subjects and (k.name, s) not in self.taken]
        if candidates:
            kind, subject = self.rng.choice(candidates)
            self.taken.add((kind.name, subject))
            self._add(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern, ask=kind.ask)


class _Writer:
    """Writes a firmware day's turns: the user's request and pasted Mattermost lines, the agent's tool calls, its reply."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        self.shape, self.rng = shape, rng
        self.filler = FirmwareFiller(rng)
        self.clock = EntryClock(rng, 1_771_318_800_000, prefix="fw", spread=0.6)  # a February morning

    def turn(self, said: list[PlacedStatement]) -> list[Entry]:
        """One turn with ``said`` placed in it (each gets its entry's id)."""
        rng, filler = self.rng, self.filler
        users = [s for s in said if s.carrier == "user"]
        # The user's own lines sit in the pasted thread under their handle, among teammates' lines.
        lines = filler.opening(rng.randrange(0, 3)) + [f"me {s.text}" for s in users]
        user = User(ts=self.clock.tick(120_000), id=self.clock.next_id("u"), content="\n".join(lines))
        entries: list[Entry] = [user]
        for s in users:
            s.entry_id = user.id or ""
        for fmt, planted in tool_jobs(said, TOOL_FORMATS, (1, 3), rng):
            entries += self._tool(fmt, planted)
        return [*entries, agent_reply(said, self.clock.tick(9_000), self.clock.next_id("a"), "sim-firmware-1", filler.reply())]

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


def build_firmware(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` firmware days of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    plan = _Plan(shape, random.Random(f"aptmem-memory-firmware:{seed}:items"))
    plan.plan()
    writer = _Writer(shape, random.Random(f"aptmem-memory-firmware:{seed}:text"))
    by_turn: dict[int, list[PlacedStatement]] = {}
    for s in plan.said:
        by_turn.setdefault(s.turn, []).append(s)

    sessions, turn_of = lay_out(shape, lambda turn: writer.turn(by_turn.get(turn, [])), writer.clock)
    kept, dropped = unambiguous(placed_items(plan.items, plan.said, turn_of, shape, fill, language_of), sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for s in plan.said if not s.items))
