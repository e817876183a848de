"""The memory-quality workload: seeded multi-session agent work with planted items to ask about.

A run is ``sessions`` sessions of ``turns`` turns each, which the measurement links with
``continue`` (each strategy carrying what it carries). A turn is a user message, a few rounds of
tool calls and results (source files, logs, JSON from an API, web pages) and an assistant reply,
filled with the seeded prose, code, logs and JSON of :mod:`experiments.workloads.text`.

Planted among it (:mod:`experiments.measurements.memory_quality.kinds` says how each is said):

* ``fact``: one statement of a kind about a subject, carried by the user, the assistant or a tool
  (as prose, a code comment, a log line or a field of minified JSON), in English or Chinese;
* ``update`` / ``update_before``: a fact said again later (mostly in a later session) with a new
  value: asked for the current value (the old one is stale) and for the one before;
* ``aggregate``: one statement per session that adds to a set; asked for the whole set;
* ``order``: two events in different sessions; asked which came first;
* ``absent``: a subject and a kind never planted together, beside near misses of both sides;
* distractors, never asked: near misses (the same subject with another kind, the same kind
  with another subject) said exactly like planted facts, and unique fact-shaped noise.

Every item carries its exact answers and the ids of the entries that carry its evidence. An
answer that occurs anywhere but in its evidence, and an absent item that the full history does
name, are dropped (and counted in :attr:`Workload.dropped`), so a found answer is never chance.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from aptmem.tokens import render_entry
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.kinds import KINDS, Kind, service
from experiments.core.knowledge import Judged, units
from experiments.workloads.text import TextPools, clip_utf8

__all__ = ["Item", "Workload", "WorkloadShape", "build_workload", "lay_out", "unambiguous"]

DAY_MS = 86_400_000
#: How often each carrier says a planted statement (when the kind may come in it).
_CARRIER_WEIGHT = {"user": 0.35, "assistant": 0.2, "tool": 0.45}


@dataclass(kw_only=True)
class WorkloadShape:
    """How big the workload is and what it plants (not frozen: Hydra overrides its fields, ``memory_quality.workload.turns=40``)."""

    sessions: int = 3
    turns: int = 24
    facts: int = 24
    updates: int = 6
    aggregates: int = 2
    orders: int = 2
    absent: int = 6
    #: near-miss distractors per planted fact (drawn: same kind other subject, or same subject other kind)
    near_misses: float = 1.0
    #: unique fact-shaped distractor statements per turn
    noise: float = 1.0
    tool_median_bytes: int = 2500
    split: str = "heldout"
    #: which generator writes the sessions: ``planted`` (this module) or ``independent`` (:mod:`.independent`,
    #: written apart from the strategies' tuning, for a check on sessions written differently)
    generator: str = "planted"

    def __post_init__(self) -> None:
        if self.sessions < 2 or self.turns < 4:
            raise ValueError("need at least 2 sessions of 4 turns (items are asked across sessions)")
        if self.split not in ("dev", "heldout"):
            raise ValueError(f"split is dev or heldout, not {self.split!r}")


class Item(msgspec.Struct, frozen=True, kw_only=True):
    """One planted item: what it is, where its evidence is, its exact answers and its questions."""

    id: str
    type: str  # fact, update, update_before, aggregate, order, absent
    kind: str
    lang: str
    carrier: str  # user, assistant, tool (of the latest evidence)
    format: str  # prose, comment, log, json
    subject: str
    answers: tuple[str, ...]
    stale: str = ""
    pattern: str = ""
    #: template, paraphrase, other language
    questions: tuple[str, str, str]
    evidence: tuple[str, ...] = ()
    session: int = -1  # of the latest evidence (absent: -1)
    turn: int = -1  # global turn of the latest evidence
    first_turn: int = -1  # global turn of the first evidence

    def judged(self) -> Judged:
        """The fields the scorer judges by."""
        return Judged(type=self.type, subject=self.subject, answers=self.answers, stale=self.stale, pattern=self.pattern)


@dataclass
class Workload:
    """The sessions (entries each), the items asked about, and what was dropped as ambiguous."""

    sessions: list[list[Entry]]
    items: list[Item]
    turn_of: dict[str, int]
    dropped: int = 0
    distractors: int = 0


@dataclass
class _Plant:
    """A statement to put in a turn: its carrier, format and text (or JSON record), and whose evidence it is."""

    turn: int
    carrier: str
    fmt: str
    text: str = ""
    record: dict[str, object] = field(default_factory=dict)
    item: str = ""
    entry_id: str = ""


class _Planner:
    """Draws the items and their statements, and places them in turns."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        self.shape, self.rng = shape, rng
        self.kinds = [k for k in KINDS if shape.split == "heldout" or not k.heldout_only]
        self.taken: set[tuple[str, str]] = set()
        self.values: set[str] = set()
        self.plants: list[_Plant] = []
        self.items: list[dict[str, object]] = []
        self.formats: dict[str, int] = {}
        self.langs: dict[str, int] = {}
        self.turns = shape.sessions * shape.turns

    def _fresh(self, kind: Kind, subject: str) -> str:
        for _ in range(200):
            value = kind.value(self.rng, subject)
            if value not in self.values and all(value not in v and v not in value for v in self.values):
                self.values.add(value)
                return value
        raise ValueError(f"ran out of distinct values of {kind.name}")

    def _subject(self, kind: Kind, subject: str | None = None) -> str:
        for _ in range(200):
            candidate = subject or kind.subject(self.rng)
            if (kind.name, candidate) not in self.taken:
                self.taken.add((kind.name, candidate))
                return candidate
            subject = None
        raise ValueError(f"ran out of subjects for {kind.name}")

    def statement(self, kind: Kind, subject: str, value: str, turn: int, *, old: str = "", why: str = "",
                  item: str = "", carrier: str | None = None) -> _Plant:
        """Say ``value`` of ``subject`` in a drawn format and carrier (an update if ``old``)."""
        said = kind.said(self.shape.split)
        if carrier is None:
            carrier = self.rng.choices(kind.carriers, weights=[_CARRIER_WEIGHT[c] for c in kind.carriers])[0]
        if old:
            fmt, templates = "prose", said.update
        elif carrier == "tool":
            # The format least used so far (ties drawn), so every carrier format is planted.
            formats = said.formats()
            fewest = min(self.formats.get(f, 0) for f in formats)
            fmt = self.rng.choice([f for f in formats if self.formats.get(f, 0) == fewest])
            templates = getattr(said, fmt)
        else:
            fmt, templates = "prose", said.prose or said.update
        if item:
            self.formats[fmt] = self.formats.get(fmt, 0) + 1
        if item and fmt != "json":  # the language least used so far, where the kind is said in both
            langs = {_language(t) for t in templates}
            fewest = min(self.langs.get(lang, 0) for lang in langs)
            templates = tuple(t for t in templates if self.langs.get(_language(t), 0) == fewest)
            self.langs[_language(templates[0])] = fewest + 1
        if fmt == "json":
            template = self.rng.choice(templates)
            record = {k: (int(value) if t == "{v}:int" else t.format(s=subject, v=value)) for k, t in template.items()}
            plant = _Plant(turn, carrier, fmt, record=record, item=item)
        else:
            text = self.rng.choice(templates).format(s=subject, v=value, old=old, why=why)
            plant = _Plant(turn, carrier, fmt, text=text, item=item)
        self.plants.append(plant)
        return plant

    def _fresh_pair(self, kinds: list[Kind]) -> tuple[Kind, str]:
        """A kind and a subject not planted together yet (a kind whose subjects ran out is dropped from ``kinds``)."""
        while kinds:
            kind = self.rng.choice(kinds)
            try:
                return kind, self._subject(kind)
            except ValueError:
                kinds.remove(kind)
        raise ValueError("ran out of subjects of every kind: plant fewer facts")

    def _turn(self, low: int = 0, high: int | None = None) -> int:
        return self.rng.randrange(low, self.turns if high is None else high)

    def add(self, **fields: object) -> str:
        ident = f"item_{len(self.items):03d}"
        self.items.append({"id": ident, **fields})
        return ident

    def plan(self) -> None:
        """Draw every item and distractor."""
        shape, rng = self.shape, self.rng
        kinds = list(self.kinds)
        for _ in range(shape.facts):
            kind, subject = self._fresh_pair(kinds)
            value = self._fresh(kind, subject)
            why = kind.why(rng) if kind.why else ""
            ident = self.add(type="fact", kind=kind, subject=subject, answers=(value, why) if why else (value,))
            self.statement(kind, subject, value, self._turn(), why=why, item=ident)
            self._near_misses(kind, subject)
        updatable = [k for k in self.kinds if k.said(shape.split).update and k.ask_before]
        for _ in range(shape.updates):
            kind = rng.choice(updatable)
            subject = self._subject(kind)
            old, new = self._fresh(kind, subject), self._fresh(kind, subject)
            first = self._turn(0, self.turns - shape.turns)
            later = self._turn(max(first + 2, (first // shape.turns + 1) * shape.turns), self.turns)
            ident = self.add(type="update", kind=kind, subject=subject, answers=(new,), stale=old)
            before = self.add(type="update_before", kind=kind, subject=subject, answers=(old,))
            self.statement(kind, subject, old, first, item=f"{ident},{before}")
            self.statement(kind, subject, new, later, old=old, item=f"{ident},{before}")
        topics = rng.sample(("login", "billing", "search", "upload", "export", "onboarding", "alerting", "caching"),
                            shape.aggregates)
        for topic in topics:
            self._aggregate(topic)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        for turn in range(self.turns):
            for _ in range(int(shape.noise) + (rng.random() < shape.noise % 1)):
                self.plants.append(_Plant(turn, rng.choice(("assistant", "tool")), "prose", text=self._noise()))

    def _near_misses(self, kind: Kind, subject: str) -> None:
        n = int(self.shape.near_misses) + (self.rng.random() < self.shape.near_misses % 1)
        for _ in range(n):
            if self.rng.random() < 0.5:  # the same kind, another subject (if one is left)
                try:
                    other = self._subject(kind)
                except ValueError:
                    continue
                self.statement(kind, other, self._fresh(kind, other), self._turn())
            else:  # the same subject, another kind (when the subject fits it)
                others = [k for k in self.kinds if k.subject is kind.subject and k is not kind and k.name != "decision"]
                if not others:
                    continue
                other_kind = self.rng.choice(others)
                if (other_kind.name, subject) in self.taken:
                    continue
                self._subject(other_kind, subject)
                self.statement(other_kind, subject, self._fresh(other_kind, subject), self._turn())

    def _aggregate(self, topic: str) -> None:
        rng, shape = self.rng, self.shape
        tickets = [f"{rng.choice(('QA', 'BUG', 'FLAKE'))}-{rng.randrange(10000, 99999)}" for _ in range(shape.sessions)]
        self.values.update(tickets)
        english = rng.random() < 0.7
        ident = self.add(type="aggregate", kind="ticket_set", subject=f"{topic} cleanup", answers=tuple(tickets),
                         lang="english" if english else "chinese",
                         questions=(f"Which tickets did we file for the {topic} cleanup?",
                                    f"List everything we opened while working on {topic}.",
                                    f"{topic}清理一共开了哪些工单？"))
        for session, ticket in enumerate(tickets):
            turn = self._turn(session * shape.turns, (session + 1) * shape.turns)
            text = (f"For the {topic} cleanup I filed {ticket} as well." if english
                    else f"{topic}清理工作又开了一个工单：{ticket}。")
            self.plants.append(_Plant(turn, rng.choice(("user", "assistant")), "prose", text=text, item=ident))

    def _order(self) -> None:
        rng, shape = self.rng, self.shape
        first_service, second_service = service(rng), service(rng)
        version = f"v{rng.randrange(2, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 30)}"
        key = f"sk_{rng.getrandbits(64):016x}"
        self.values.update((version, key))
        events = [(f"We rolled {first_service} back to {version} after the alerts.", version),
                  (f"Rotated the signing key of {second_service}; the new one is {key}.", key)]
        rng.shuffle(events)
        s1 = rng.randrange(shape.sessions - 1)
        turns = (self._turn(s1 * shape.turns, (s1 + 1) * shape.turns), self._turn((s1 + 1) * shape.turns, self.turns))
        ident = self.add(type="order", kind="event_order", subject=f"{first_service} / {second_service}",
                         answers=(events[0][1], events[1][1]), lang="english",
                         questions=(f"Which happened first: the rollback of {first_service} or the key rotation of {second_service}?",
                                    f"Did {first_service} go back a version before or after {second_service} got new credentials?",
                                    f"{first_service}回滚和{second_service}换密钥，哪个先发生？"))
        for (text, _), turn in zip(events, turns):
            self.plants.append(_Plant(turn, rng.choice(("user", "assistant", "tool")), "prose", text=text, item=ident))

    def _absent(self) -> None:
        """A kind and a subject never planted together, each planted with something else."""
        candidates = [(k, s) for k in self.kinds if k.pattern for (name, s) in list(self.taken)
                      if name != k.name and (k.name, s) not in self.taken
                      and any(kk.name == name and kk.subject is k.subject for kk in self.kinds)]
        if not candidates:
            return
        kind, subject = self.rng.choice(sorted(candidates, key=lambda ks: (ks[0].name, ks[1])))
        self.taken.add((kind.name, subject))
        self.add(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern)

    def _noise(self) -> str:
        rng = self.rng
        name = service(rng)
        return rng.choice((
            f"The p99 latency of {name} was {rng.randrange(80, 900)} ms during the last deploy.",
            f"Build {rng.getrandbits(40):010x} of {name} took {rng.randrange(2, 40)} minutes on the runners.",
            f"{name} logged {rng.randrange(2, 900)} warnings about retries in the past hour.",
            f"Cache hit rate for {name} is {rng.randrange(40, 99)}% since the config change.",
            f"{name}的错误率在过去一小时里是{rng.randrange(1, 30)}%。",
            f"Artifact /tmp/{name}/{rng.getrandbits(32):08x}.tar was uploaded for debugging.",
        ))


def _language(text: str) -> str:
    return "chinese" if sum("\u4e00" <= c <= "\u9fff" for c in text) > 3 else "english"


class _Builder:
    """Writes the turns: filler from :class:`TextPools`, with the planted statements placed in their carriers."""

    def __init__(self, shape: WorkloadShape, seed: int) -> None:
        self.shape = shape
        self.rng = random.Random(f"aptmem-memory-quality:{seed}:{shape.split}:content")
        self.pools = TextPools(self.rng)
        self.clock = EntryClock(self.rng, 1_717_000_000_000, spread=0.8)

    def _size(self) -> int:
        return max(200, min(24_000, int(self.rng.lognormvariate(math.log(self.shape.tool_median_bytes), 1.0))))

    def turn(self, plants: list[_Plant]) -> list[Entry]:
        """The entries of one turn, placing ``plants`` (setting each one's ``entry_id``)."""
        rng, pools = self.rng, self.pools
        lang = "chinese" if rng.random() < 0.25 else "english"
        said = [p for p in plants if p.carrier == "user"]
        ask = rng.choice((f"Can you check why {pools.func()} in {pools.path()} fails on empty input?",
                          f"Please refactor {pools.func()} so it streams instead of loading everything.",
                          f"帮我看看 {pools.path()} 里的 {pools.func()} 为什么会出错", f"给 {pools.func()} 加个测试"))
        text = "\n\n".join([ask, pools.prose(lang, rng.randrange(80, 500)), *(p.text for p in said)])
        user = User(ts=self.clock.tick(60_000), id=self.clock.next_id("u"), content=text)
        for p in said:
            p.entry_id = user.id or ""
        entries: list[Entry] = [user]
        tools = [p for p in plants if p.carrier == "tool"]
        by_format: dict[str, list[_Plant]] = {}
        for p in tools:
            by_format.setdefault(p.fmt, []).append(p)
        jobs = list(by_format.items()) + [(rng.choice(("prose", "comment", "log", "json")), []) for _ in range(rng.randrange(0, 4))]
        rng.shuffle(jobs)
        for fmt, planted in jobs:
            call, result = self._tool(fmt, planted, lang)
            entries += [call, result]
        remarks = [p for p in plants if p.carrier == "assistant"]
        reply = Assistant(ts=self.clock.tick(8_000), id=self.clock.next_id("a"), model="sim-model-1",
                          content="\n\n".join([pools.prose(lang, rng.randrange(300, 1500)), *(p.text for p in remarks)]))
        for p in remarks:
            p.entry_id = reply.id or ""
        entries.append(reply)
        return entries

    def _tool(self, fmt: str, planted: list[_Plant], lang: str) -> tuple[ToolCall, ToolResult]:
        rng, pools, size = self.rng, self.pools, self._size()
        if fmt == "json":
            name, args = "http_get", {"url": f"https://api.example.internal/{pools.project()}/items?page={rng.randrange(1, 9)}"}
            content = pools.json_document(size, 32_000, [msgspec.json.encode(p.record).decode() for p in planted])
        else:
            if fmt == "comment":
                name, args, lines = "read_file", {"path": pools.path()}, "\n".join(pools.fill("code", size)).split("\n")
            elif fmt == "log":
                name, args = "bash", {"command": rng.choice(("make deploy", "pytest -q", "kubectl logs -n prod deploy/app"))}
                lines = pools.fill("logs", size)
            else:
                name, args = "web_fetch", {"url": f"https://docs.example.org/{pools.func()}"}
                lines = pools.prose(lang, size).split("\n")
            lines = clip_utf8("\n".join(lines), 32_000).split("\n")
            for p in planted:
                lines.insert(rng.randrange(len(lines) + 1), p.text)
            content = "\n".join(lines)
        call = ToolCall(ts=self.clock.tick(400), id=self.clock.next_id("c"), name=name, args=args)
        result = ToolResult(ts=self.clock.tick(900), id=self.clock.next_id("r"), call_id=call.id or "", name=name, content=content)
        for p in planted:
            p.entry_id = result.id or ""
        return call, result


def lay_out(shape: WorkloadShape, write_turn: Callable[[int], list[Entry]],
            clock: EntryClock) -> tuple[list[list[Entry]], dict[str, int]]:
    """The sessions of ``shape``, each turn's entries by ``write_turn(global turn)``, and each entry id's turn.

    ``clock`` (the writer's) moves on a day after each session: the next one starts the next day.
    """
    sessions: list[list[Entry]] = []
    turn_of: dict[str, int] = {}
    for session in range(shape.sessions):
        entries: list[Entry] = []
        for turn in range(session * shape.turns, (session + 1) * shape.turns):
            for entry in write_turn(turn):
                turn_of[entry.id or ""] = turn
                entries.append(entry)
        clock.skip(DAY_MS)
        sessions.append(entries)
    return sessions, turn_of


def build_workload(shape: WorkloadShape, seed: int) -> Workload:
    """Draw the items, write the sessions around them, and keep only unambiguous items."""
    planner = _Planner(shape, random.Random(f"aptmem-memory-quality:{seed}:{shape.split}:items"))
    planner.plan()
    builder = _Builder(shape, seed)
    by_turn: dict[int, list[_Plant]] = {}
    for plant in planner.plants:
        by_turn.setdefault(plant.turn, []).append(plant)

    sessions, turn_of = lay_out(shape, lambda turn: builder.turn(by_turn.get(turn, [])), builder.clock)
    items = _items(planner, turn_of, shape)
    kept, dropped = unambiguous(items, sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for p in planner.plants if not p.item))


def _items(planner: _Planner, turn_of: dict[str, int], shape: WorkloadShape) -> list[Item]:
    evidence: dict[str, list[_Plant]] = {}
    for plant in planner.plants:
        for ident in plant.item.split(","):
            if ident:
                evidence.setdefault(ident, []).append(plant)
    out: list[Item] = []
    for raw in planner.items:
        fields = dict(raw)
        kind = fields.pop("kind")
        plants = sorted(evidence.get(str(fields["id"]), []), key=lambda p: turn_of[p.entry_id])
        last = plants[-1] if plants else None
        if isinstance(kind, Kind):
            subject = str(fields["subject"])
            questions = tuple(q.format(s=subject) for q in (kind.ask_before if fields["type"] == "update_before" else kind.ask))
            fields.update(kind=kind.name, questions=questions)
            fields.setdefault("lang", _language(last.text or str(last.record)) if last else kind.lang)
        else:
            fields["kind"] = kind
        out.append(Item(**fields,  # type: ignore[arg-type]
                        carrier=last.carrier if last else "", format=last.fmt if last else "",
                        evidence=tuple(dict.fromkeys(p.entry_id for p in plants)),
                        session=turn_of[last.entry_id] // shape.turns if last else -1,
                        turn=turn_of[last.entry_id] if last else -1,
                        first_turn=turn_of[plants[0].entry_id] if plants else -1))
    return out


def unambiguous(items: list[Item], sessions: list[list[Entry]]) -> tuple[list[Item], int]:
    """Drop items an answer of which occurs outside their evidence, and absent items the history names."""
    texts = {e.id or "": render_entry(e) for entries in sessions for e in entries}
    everything = "\n\x00\n".join(texts.values())
    history_units = units([("history", text) for text in texts.values()])
    kept: list[Item] = []
    for item in items:
        if item.type == "absent":
            ok = not any(item.subject.casefold() in u.text.casefold() and _matches(item.pattern, u.text)
                                           for u in history_units)
        else:
            evidence = "\n\x00\n".join(texts[e] for e in item.evidence)
            ok = all(everything.count(a) == evidence.count(a) > 0 for a in item.answers)
        if ok:
            kept.append(item)
    return kept, len(items) - len(kept)


def _matches(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None
