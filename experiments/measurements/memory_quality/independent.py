"""A second, independent workload: sessions written differently from :mod:`.workload`, to check on.

:mod:`.workload` and :mod:`.kinds` were written while the memory strategies were tuned, so a
strategy may fit their phrasings and their filler. This generator shares neither: its own
filler (``kubectl`` tables, ``pytest`` runs, ``git log``, YAML and TOML files, chat about a
release), its own fact phrasings (config lines, ``export`` lines, Markdown table rows, commit
logs, chat in English and Chinese) and its own update phrasings. Nothing in ``aptmem`` was
tuned on it; its figures are reported apart (``memory_quality.workload.generator=independent``).

It plants facts (one statement each) and updates (an old and a new value, asked for the current
one and for the one before); it plants no absent facts, sets or orders. It builds the same :class:`~.workload.Workload`
the replay scores, so every metric is computed alike. Items whose answer occurs outside their
evidence are dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.workload import DAY_MS, Item, Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["build_independent"]

_NAMES = ("Priya Raman", "Tomasz Zielinski", "Amara Okoye", "Keanu Silva", "Ingrid Holm", "Rafael Duarte",
          "Mei Lin", "Olusegun Bello", "Hana Sato", "Lucas Moreau")
_CN_NAMES = ("欧阳建华", "司马婷", "诸葛明轩", "上官雪", "东方文博", "慕容晓月", "令狐强", "皇甫丽娜")
_SERVICES = ("orchid", "basalt", "tidepool", "quasar", "lantern", "marmot", "fjord", "cinder", "pebble", "sequoia",
             "kiwi", "tundra2", "gazelle", "harbor", "nimbus")
_FILLER_WORDS = ("rollout", "canary", "latency", "shard", "replica", "cache", "quota", "rebalance", "drain", "probe",
                 "budget", "throttle", "backfill", "reindex", "snapshot", "failover", "lease", "heartbeat")


@dataclass(frozen=True)
class _Kind:
    """A kind of fact: how a value is drawn, how it is said (fact, update), how it is asked."""

    name: str
    value: Callable[[random.Random], str]
    #: (carrier, format, template with {s} and {v})
    said: tuple[tuple[str, str, str], ...]
    #: update templates with {s}, {old} and {v}
    update: tuple[str, ...]
    ask: tuple[str, str, str]
    ask_before: tuple[str, str, str] = ("", "", "")
    lang: str = "english"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


_KINDS = (
    _Kind("image_tag", lambda r: f"{r.randrange(1, 40)}.{r.randrange(0, 99)}.{r.randrange(0, 99)}-r{r.randrange(1, 9)}",
          (("tool", "yaml", "  {s}:\n    replicas: 3\n    image_tag: {v}\n    pull: IfNotPresent"),
           ("user", "prose", "Ship {s} with tag {v} this time, the previous build had the OOM."),
           ("assistant", "prose", "I built {s} and pushed it as {v} to the registry.")),
          ("Rolled {s} forward: {old} is out, {v} is what runs now.", "{s} 的镜像从 {old} 升到了 {v}。"),
          ("What image tag does {s} run?", "Which build of {s} is deployed?", "{s} 现在跑的是哪个镜像版本？"),
          ("What tag did {s} run before?", "Which build of {s} did we replace?", "{s} 之前用的镜像版本是什么？")),
    _Kind("timeout_env", lambda r: str(r.randrange(1000, 99000)),
          (("tool", "shell", "export {S}_TIMEOUT_MS={v}"),
           ("user", "prose", "Set {S}_TIMEOUT_MS={v} in the env file for {s}, nothing else changes.")),
          ("We raised it again: {S}_TIMEOUT_MS={v} (it was {old}).",),
          ("What is the timeout of {s} set to?", "How long does {s} wait before giving up?", "{s} 的超时设置是多少毫秒？"),
          ("What was the timeout of {s} before?", "How long did {s} wait previously?", "{s} 之前的超时是多少？")),
    _Kind("commit", lambda r: _hex(r, 12),
          (("tool", "git", "commit {v}\nAuthor: ci-bot <ci@example.invalid>\n\n    {s}: stop retrying on 4xx responses"),
           ("assistant", "prose", "The retry fix for {s} is in {v}; cherry-pick that one.")),
          (),
          ("Which commit stops {s} retrying on 4xx?", "What revision has the retry fix of {s}?", "{s} 的重试修复是哪个提交？")),
    _Kind("owner_en", lambda r: r.choice(_NAMES),
          (("user", "prose", "{v} will own the {s} migration from here on."),
           ("tool", "table", "| {s} | {v} | on call |")),
          (),
          ("Who owns the {s} migration?", "Whom do I ping about moving {s}?", "{s} 迁移谁负责？")),
    _Kind("owner_cn", lambda r: r.choice(_CN_NAMES),
          (("user", "prose", "{s} 这块以后交给{v}盯着。"), ("assistant", "prose", "{s} 的值班联系人：{v}")),
          (),
          ("{s} 归谁管？", "{s} 出事了找谁？", "Who looks after {s}?"), lang="chinese"),
    _Kind("region", lambda r: f"{r.choice(('ap', 'eu', 'us', 'sa'))}-{r.choice(('north', 'south', 'central'))}-{r.randrange(1, 9)}",
          (("tool", "toml", "[service.{s}]\nregion = \"{v}\"\ntier = \"standard\""),
           ("user", "prose", "Keep {s} in {v}; the data must not leave it.")),
          ("{s} moved off {old}; it lives in {v} going forward.",),
          ("Which region is {s} in?", "Where are the servers of {s}?", "{s} 部署在哪个区域？"),
          ("Which region was {s} in before?", "Where did {s} run earlier?", "{s} 之前在哪个区域？")),
    _Kind("channel", lambda r: "#" + "-".join(r.sample(("ops", "pager", "alerts", "war", "room", "sev"), 2)) + str(r.randrange(10, 99)),
          (("assistant", "prose", "Alerts for {s} go to {v} now."), ("user", "prose", "{s} 的告警都发到 {v} 这个频道。")),
          (),
          ("Where do alerts of {s} go?", "Which channel pages for {s}?", "{s} 的告警发到哪里？")),
    _Kind("quirk", lambda r: f"--{r.choice(('no', 'skip', 'force'))}-{''.join(r.choices(string.ascii_lowercase, k=6))}",
          (("user", "prose", "Heads up: the {s} tests only pass with {v} on the CI runners."),),
          (),
          ("Which flag do the {s} tests need on CI?", "What do I pass so {s}'s suite goes green on the runners?",
           "{s} 的测试在 CI 上要加什么参数？")),
)


class _Writer:
    """Writes the sessions: filler turns with the planted statements placed in them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.ts, self.n = rng, 1_720_000_000_000, 0

    def _id(self, prefix: str) -> str:
        self.n += 1
        return f"x{prefix}{self.n:05d}"

    def _tick(self, ms: int) -> int:
        self.ts += self.rng.randrange(ms // 2, ms * 2)
        return self.ts

    def chat(self, lines: int) -> str:
        rng = self.rng
        out = []
        for _ in range(lines):
            a, b = rng.sample(_FILLER_WORDS, 2)
            out.append(f"The {a} on {rng.choice(_SERVICES)}-{rng.randrange(100, 999)} looks fine, but the {b} "
                       f"step took {rng.randrange(2, 90)} seconds longer than last week.")
        return " ".join(out)

    def tool_text(self) -> tuple[str, dict[str, object], str]:
        rng = self.rng
        what = rng.randrange(4)
        if what == 0:
            rows = [f"{rng.choice(_SERVICES)}-{_hex(rng, 5)}-{_hex(rng, 5)}   1/1   Running   {rng.randrange(0, 9)}   "
                    f"{rng.randrange(1, 59)}m" for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "kubectl get pods -A"}, "NAME   READY   STATUS   RESTARTS   AGE\n" + "\n".join(rows)
        if what == 1:
            rows = [f"tests/test_{rng.choice(_FILLER_WORDS)}.py::test_{rng.choice(_FILLER_WORDS)}_{rng.randrange(99)} "
                    f"{rng.choice(('PASSED', 'PASSED', 'PASSED', 'SKIPPED'))}" for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "pytest -v"}, "\n".join(rows) + f"\n{len(rows)} passed"
        if what == 2:
            rows = [f"{_hex(rng, 7)} {rng.choice(_FILLER_WORDS)}: tidy the {rng.choice(_FILLER_WORDS)} path"
                    for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "git log --oneline -200"}, "\n".join(rows)
        rows = [f"  {rng.choice(_FILLER_WORDS)}_{i}: {rng.choice(('true', 'false', 'auto', 'off'))}" for i in range(rng.randrange(40, 160))]
        return "read_file", {"path": f"deploy/{rng.choice(_SERVICES)}/values.yaml"}, "settings:\n" + "\n".join(rows)

    def turn(self, plants: list[list[str]]) -> list[Entry]:
        """One turn; each plant is [carrier, text, id slot] and gets its entry's id in slot 2."""
        rng = self.rng
        by = {c: [p for p in plants if p[0] == c] for c in ("user", "assistant", "tool")}
        user = User(ts=self._tick(50_000), id=self._id("u"),
                    content="\n".join([f"Next: the {rng.choice(_FILLER_WORDS)} for {rng.choice(_SERVICES)}.",
                                       self.chat(rng.randrange(1, 4)), *(p[1] for p in by["user"])]))
        entries: list[Entry] = [user]
        for p in by["user"]:
            p[2] = user.id or ""
        tools = by["tool"] + [None] * rng.randrange(1, 3)  # type: ignore[list-item]
        rng.shuffle(tools)
        for plant in tools:
            name, args, text = self.tool_text()
            if plant is not None:
                lines = text.split("\n")
                lines.insert(rng.randrange(1, len(lines) + 1), plant[1])
                text = "\n".join(lines)
            call = ToolCall(ts=self._tick(500), id=self._id("c"), name=name, args=args)
            result = ToolResult(ts=self._tick(800), id=self._id("r"), call_id=call.id or "", name=name, content=text)
            if plant is not None:
                plant[2] = result.id or ""
            entries += [call, result]
        reply = Assistant(ts=self._tick(6_000), id=self._id("a"), model="sim-model-2",
                          content="\n\n".join([self.chat(rng.randrange(3, 10)), *(p[1] for p in by["assistant"])]))
        for p in by["assistant"]:
            p[2] = reply.id or ""
        return [*entries, reply]


def build_independent(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` turns, with ``shape.facts`` facts and ``shape.updates`` updates
    planted (the other fields of the shape do not apply to this generator)."""
    rng = random.Random(f"aptmem-memory-independent:{seed}")
    turns = shape.sessions * shape.turns
    pairs = [(k, s) for k in _KINDS for s in _SERVICES]
    rng.shuffle(pairs)
    updatable = [(k, s) for k, s in pairs if k.update]
    plants: dict[int, list[list[str]]] = {}
    raw: list[tuple[dict[str, object], list[list[str]]]] = []
    used: set[tuple[str, str]] = set()

    def say(turn: int, carrier: str, text: str) -> list[str]:
        plant = [carrier, text, ""]
        plants.setdefault(turn, []).append(plant)
        return plant

    def draw(kind: _Kind) -> str:
        return kind.value(rng)

    for kind, subject in updatable[: shape.updates]:
        used.add((kind.name, subject))
        old, new = draw(kind), draw(kind)
        first = rng.randrange(0, turns - shape.turns)
        later = rng.randrange((first // shape.turns + 1) * shape.turns, turns)
        carrier, fmt, template = rng.choice(kind.said)
        a = say(first, carrier, template.format(s=subject, S=subject.upper(), v=old))
        b = say(later, "user", rng.choice(kind.update).format(s=subject, S=subject.upper(), v=new, old=old))
        base = {"kind": kind.name, "lang": kind.lang, "format": fmt, "subject": subject}
        raw.append(({**base, "type": "update", "answers": (new,), "stale": old,
                     "questions": tuple(q.format(s=subject) for q in kind.ask)}, [a, b]))
        raw.append(({**base, "type": "update_before", "answers": (old,),
                     "questions": tuple(q.format(s=subject) for q in kind.ask_before)}, [a, b]))
    facts = [(k, s) for k, s in pairs if (k.name, s) not in used][: shape.facts]
    for kind, subject in facts:
        used.add((kind.name, subject))
        carrier, fmt, template = rng.choice(kind.said)
        value = draw(kind)
        plant = say(rng.randrange(turns), carrier, template.format(s=subject, S=subject.upper(), v=value))
        raw.append(({"kind": kind.name, "lang": kind.lang, "format": fmt, "subject": subject, "type": "fact",
                     "answers": (value,), "questions": tuple(q.format(s=subject) for q in kind.ask)}, [plant]))
    # Near misses: each kind said once more of a subject nobody asks about (same kind, other subject).
    for kind in _KINDS:
        spare = [s for s in _SERVICES if (kind.name, s) not in used]
        if spare:
            carrier, _, template = rng.choice(kind.said)
            say(rng.randrange(turns), carrier, template.format(s=spare[0], S=spare[0].upper(), v=draw(kind)))
    writer = _Writer(rng)

    def next_day() -> None:
        writer.ts += DAY_MS

    sessions, turn_of = lay_out(shape, lambda turn: writer.turn(plants.get(turn, [])), next_day)
    items = []
    for number, (fields, evidence) in enumerate(raw):
        ordered = sorted(evidence, key=lambda p: turn_of[p[2]])
        items.append(Item(id=f"ind_{number:03d}", carrier=ordered[-1][0], evidence=tuple(dict.fromkeys(p[2] for p in ordered)),
                          session=turn_of[ordered[-1][2]] // shape.turns, turn=turn_of[ordered[-1][2]],
                          first_turn=turn_of[ordered[0][2]], **fields))  # type: ignore[arg-type]
    kept, dropped = unambiguous(items, sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped, distractors=0)

