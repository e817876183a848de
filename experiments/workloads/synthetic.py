"""A seeded generator of realistic multi-hundred-turn agent sessions.

A session is a list of turns. A turn starts with a :class:`~aptmem.entries.User` message, then
zero or more rounds of tool use (one to three :class:`~aptmem.entries.ToolCall` entries, then a
:class:`~aptmem.entries.ToolResult` naming each call, in call order), sometimes with a short
:class:`~aptmem.entries.Assistant` remark before a round, and ends with an assistant reply.

Sizes follow what agent logs look like: user messages short, assistant replies medium, tool
results heavy-tailed (lognormal, so most are a few KB and a few per hundred approach the cap).
Content mixes English and Chinese prose, source code and JSON tool output. Facts with known
answers are planted (see :mod:`experiments.workloads.facts`) so compaction can be scored.

Determinism: independent ``random.Random`` streams (turn shapes, facts, content, ids) are seeded
from ``seed`` by string (hashed with SHA-512, not with Python's randomized ``hash``), so the same
config gives a byte-identical encoded session in any process.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User, encode_line
from experiments.workloads.facts import PlantedFact, draw_fact
from experiments.workloads.text import CONTENT_KINDS, TextPools, clip_utf8

__all__ = ["PlantedFact", "Session", "SessionGenerator", "TurnPlan", "WorkloadConfig", "generate", "iter_session", "plan_turns"]

MODEL = "sim-model-1"


def _default_mix() -> dict[str, float]:
    return {"english": 0.4, "chinese": 0.2, "code": 0.25, "json": 0.15}


@dataclass(kw_only=True)
class WorkloadConfig:
    """The knobs of a synthetic session (a plain dataclass, so Hydra can use it as a schema)."""

    #: number of turns (one user message each). Ignored when ``max_entries`` is set.
    turns: int = 300
    #: exact number of entries: as many turns as needed, the last one possibly cut short.
    max_entries: int | None = None
    seed: int = 0
    #: hard cap on one tool result's content, in UTF-8 bytes.
    max_tool_result_bytes: int = 128 * 1024
    #: median size of a tool result; sizes are lognormal around it with ``tool_result_sigma``.
    tool_result_median_bytes: int = 1500
    tool_result_sigma: float = 1.7
    user_median_bytes: int = 120
    user_max_bytes: int = 4096
    assistant_median_bytes: int = 700
    assistant_max_bytes: int = 16 * 1024
    #: weights of the content kinds: prose language (english/chinese) and tool output kind.
    mix: dict[str, float] = field(default_factory=_default_mix)
    #: how many facts to plant (one per turn at most; with max_entries, fewer if too few turns fit).
    facts: int = 20
    #: most rounds of tool calls in one turn.
    max_tool_rounds: int = 8
    #: timestamp of the first entry, ms since the epoch (fixed, so output is reproducible).
    start_ts: int = 1_717_000_000_000

    def __post_init__(self) -> None:
        if self.turns < 1 or (self.max_entries is not None and self.max_entries < 1):
            raise ValueError("turns and max_entries must be >= 1")
        if self.max_tool_result_bytes < 1024:
            raise ValueError("max_tool_result_bytes must be at least 1024")
        if not 0 <= self.facts <= 200 or (self.max_entries is None and self.facts > self.turns):
            raise ValueError("facts must be between 0 and 200, and at most one per turn")
        unknown = set(self.mix) - set(CONTENT_KINDS)
        if unknown or any(w < 0 for w in self.mix.values()) or sum(self.mix.values()) <= 0:
            raise ValueError(f"mix weights must be >= 0 over {CONTENT_KINDS}, not all zero; got {self.mix}")
        if not 0 <= self.max_tool_rounds <= 32:
            raise ValueError("max_tool_rounds must be between 0 and 32")


class TurnPlan(msgspec.Struct, frozen=True):
    """The shape of one turn: calls per round, and whether the assistant speaks before each round."""

    rounds: tuple[int, ...]
    talk: tuple[bool, ...]

    @property
    def entries(self) -> int:
        """How many entries the turn has: user, remarks, calls and results, final reply."""
        return 2 + sum(self.talk) + 2 * sum(self.rounds)


# Rounds of tool use per turn: a quarter of turns are plain chat, a few are long tool chains.
_ROUND_WEIGHTS = (0.22, 0.2, 0.16, 0.12, 0.1, 0.08, 0.06, 0.04, 0.02)


def _streams(seed: int) -> tuple[random.Random, random.Random, random.Random]:
    # String seeds are hashed with SHA-512 by random.seed (not by the per-process randomized
    # hash()), so every process draws the same numbers for the same seed.
    return tuple(random.Random(f"aptmem-workload:{seed}:{name}") for name in ("shape", "content", "ids"))  # type: ignore[return-value]


def plan_turns(config: WorkloadConfig) -> list[TurnPlan]:
    """Draw the shape of every turn (cheap: no text), honouring ``turns`` or ``max_entries``."""
    rng = _streams(config.seed)[0]
    weights = _ROUND_WEIGHTS[: config.max_tool_rounds + 1]
    plans: list[TurnPlan] = []
    total = 0
    while (len(plans) < config.turns) if config.max_entries is None else (total < config.max_entries):
        n_rounds = rng.choices(range(len(weights)), weights=weights)[0]
        rounds = tuple(rng.choices((1, 2, 3), weights=(0.8, 0.15, 0.05))[0] for _ in range(n_rounds))
        talk = tuple(rng.random() < (0.45 if i == 0 else 0.15) for i in range(n_rounds))
        plans.append(TurnPlan(rounds, talk))
        total += plans[-1].entries
    return plans


class Session(msgspec.Struct, kw_only=True):
    """A generated session: its entries, the facts planted in them, and per-entry labels."""

    config: WorkloadConfig
    entries: list[Entry]
    facts: list[PlantedFact]
    #: content kind of each entry (english, chinese, mixed, code, json, logs), for token tiers.
    kinds: list[str]
    #: 0-based turn number of each entry.
    turn_of: list[int]

    def encode(self) -> bytes:
        """The session as JSONL bytes, one line per entry, exactly as the JSONL log stores it."""
        return b"".join(encode_line(e) for e in self.entries)


class SessionGenerator:
    """Iterate to get the session's entries one by one; :attr:`facts` fills in as they are planted."""

    def __init__(self, config: WorkloadConfig | None = None) -> None:
        self.config = config or WorkloadConfig()
        self.plans = plan_turns(self.config)
        _, self.rng, self.id_rng = _streams(self.config.seed)
        self.pools = TextPools(self.rng)
        self.facts: list[PlantedFact] = []
        self.kinds: list[str] = []
        self.turn_of: list[int] = []
        self._ids: set[str] = set()
        self._ts = self.config.start_ts
        self._pending = self._plan_facts()
        mix = self.config.mix
        self._kinds = [k for k in CONTENT_KINDS if mix.get(k, 0) > 0]
        self._weights = [mix[k] for k in self._kinds]
        en, zh = mix.get("english", 0.0), mix.get("chinese", 0.0)
        self._p_chinese = zh / (en + zh) if en + zh > 0 else 0.0
        self._p_code_block = mix.get("code", 0.0) / sum(mix.values())

    # -- planning ------------------------------------------------------------------------------

    def _plan_facts(self) -> dict[int, list[tuple[PlantedFact, str]]]:
        """Choose each fact, the turn it goes in and its carrier (user, tool_result, assistant).

        Facts go in distinct turns drawn uniformly over the session. Only turns whose entries all
        fit are used, so with ``max_entries`` no fact is cut off (and a short session gets fewer).
        """
        rng = random.Random(f"aptmem-workload:{self.config.seed}:facts")
        limit = self.config.max_entries
        whole: list[int] = []
        total = 0
        for index, plan in enumerate(self.plans):
            total += plan.entries
            if limit is None or total <= limit:
                whole.append(index)
        # One fact per turn at most, so a planted note never pushes a message past its cap; a
        # session cut short by max_entries may have fewer whole turns than facts: it gets fewer.
        n = min(self.config.facts, len(whole))
        turns = sorted(rng.sample(whole, n))
        taken: set[tuple[str, str]] = set()
        pending: dict[int, list[tuple[PlantedFact, str]]] = {}
        for i, turn in enumerate(turns):
            fact = draw_fact(rng, i, taken)
            carrier = rng.choices(("user", "tool_result", "assistant"), weights=(0.5, 0.35, 0.15))[0]
            if carrier == "tool_result" and not self.plans[turn].rounds:
                carrier = "user"
            pending.setdefault(turn, []).append((fact, carrier))
        return pending

    # -- small helpers -------------------------------------------------------------------------

    def _id(self, prefix: str, bits: int = 64) -> str:
        while True:
            ident = f"{prefix}{self.id_rng.getrandbits(bits):0{bits // 4}x}"
            if ident not in self._ids:
                self._ids.add(ident)
                return ident

    def _tick(self, median_ms: float, sigma: float = 1.0) -> int:
        """Advance the clock by a lognormal gap (at least 1 ms) and return the new time."""
        self._ts += max(1, int(self.rng.lognormvariate(math.log(median_ms), sigma)))
        return self._ts

    def _size(self, median: int, sigma: float, cap: int) -> int:
        return max(16, min(cap, int(self.rng.lognormvariate(math.log(median), sigma))))

    def _plant(self, fact: PlantedFact, entry_id: str, entry_type: str, turn: int) -> None:
        self.facts.append(msgspec.structs.replace(fact, turn=turn, entry_id=entry_id, entry_type=entry_type))

    # -- entries -------------------------------------------------------------------------------

    def _user(self, lang: str, facts: list[PlantedFact]) -> tuple[User, str]:
        pools, rng = self.pools, self.rng
        path, func = pools.path(), pools.func()
        if lang == "chinese":
            ask = rng.choice((f"帮我看看 {path} 里的 {func} 为什么会出错", f"{func} 的性能有问题，能优化一下吗？",
                              f"请解释一下 {path} 的作用", f"给 {func} 加个测试"))
            kind = "mixed"
        else:
            ask = rng.choice((f"Can you check why {func} in {path} fails on empty input?",
                              f"Please refactor {func} so it streams instead of loading everything.",
                              f"What does {path} do?", f"Add a test for {func}, then run the suite."))
            kind = "english"
        target = self._size(self.config.user_median_bytes, 0.8, self.config.user_max_bytes)
        text = ask
        if target > len(ask.encode()) + 40:
            text += ("\n\n" if lang == "english" else "\n") + pools.prose(lang, target - len(ask.encode()))
        notes = " ".join(f.text for f in facts)
        if notes:
            text = clip_utf8(text, self.config.user_max_bytes - len(notes.encode()) - 2) + "\n" + notes
            kind = kind if all(f.lang == lang for f in facts) else "mixed"
        else:
            text = clip_utf8(text, self.config.user_max_bytes)
        return User(ts=self._tick(30_000, 1.2), id=self._id("msg_"), content=text), kind

    def _assistant(self, lang: str, median: int, facts: list[PlantedFact], gap_ms: float) -> tuple[Assistant, str]:
        cap = self.config.assistant_max_bytes
        target = self._size(median, 0.9, cap)
        text = self.pools.prose(lang, target)
        kind = lang
        if median > 200 and self.rng.random() < self._p_code_block:
            block = "\n".join(self.pools.fill("code", min(1200, target // 2)))
            text += f"\n\n```\n{block}```\n"
            kind = "mixed"
        notes = " ".join(f.text for f in facts)
        if notes:
            text = clip_utf8(text, cap - len(notes.encode()) - 2) + "\n\n" + notes
            kind = kind if all(f.lang == lang for f in facts) else "mixed"
        else:
            text = clip_utf8(text, cap)
        return Assistant(ts=self._tick(gap_ms, 0.8), id=self._id("msg_"), content=text, model=MODEL), kind

    def _tool(self, facts: list[PlantedFact]) -> tuple[ToolCall, ToolResult, str]:
        """One tool call and its result; the result's content kind is drawn from the mix."""
        rng, pools, cap = self.rng, self.pools, self.config.max_tool_result_bytes
        kind = rng.choices(self._kinds, weights=self._weights)[0]
        target = self._size(self.config.tool_result_median_bytes, self.config.tool_result_sigma, cap)
        call_id = self._id("call_", 96)
        notes = [f"# NOTE: {f.text}" if kind == "code" else f.text for f in facts]
        is_error = False
        if kind == "json":
            name, args = "http_get", {"url": f"https://api.example.internal/{pools.project()}/items?page=1"}
            extra = [msgspec.json.encode({"note": f.text}).decode() for f in facts]
            content = pools.json_document(target, cap, extra)
        else:
            if kind == "code" and rng.random() < 0.3:
                name, args = "grep", {"pattern": pools.func(), "path": rng.choice(("src", "."))}
                lines = rng.choices(pools.code_lines, k=max(1, target // 50))
                pieces = [f"{pools.path()}:{rng.randrange(1, 900)}:{line}" for line in lines]
            elif kind == "code":
                name, args = "read_file", {"path": pools.path()}
                pieces = pools.fill("code", target)
            elif rng.random() < 0.5:
                name, args = "bash", {"command": rng.choice(("pytest -q", "npm test", "git log --oneline -n 50", "make build"))}
                pieces, kind = pools.fill("logs", target), "logs"
            else:
                name, args = "web_fetch", {"url": f"https://docs.example.org/{kind[:2]}/{pools.func()}"}
                pieces = pools.fill(kind, target)
            # Clip the body first, then put the planted notes at random lines: they always survive.
            room = cap - sum(len(n.encode()) + 1 for n in notes)
            lines = clip_utf8("\n".join(pieces), room).split("\n")
            for note in notes:
                lines.insert(rng.randrange(len(lines) + 1), note)
            content = "\n".join(lines)
            if not notes and rng.random() < 0.04:
                # Now and then a tool fails; its output is then short.
                content, is_error = f"Error: ENOENT: no such file or directory, open '{pools.path()}'", True
        # Timestamps are set when the entries are emitted (calls of a round come before results).
        call = ToolCall(ts=0, id=call_id, name=name, args=args)
        result = ToolResult(ts=0, id=self._id("res_"), call_id=call_id, content=content, name=name, is_error=is_error)
        return call, result, kind

    # -- the session ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Entry]:
        limit = self.config.max_entries
        emitted = 0
        for turn, plan in enumerate(self.plans):
            for entry, kind in self._turn(turn, plan):
                if limit is not None and emitted >= limit:
                    return
                self.kinds.append(kind)
                self.turn_of.append(turn)
                emitted += 1
                yield entry

    def _turn(self, turn: int, plan: TurnPlan) -> Iterator[tuple[Entry, str]]:
        rng = self.rng
        lang = "chinese" if rng.random() < self._p_chinese else "english"
        facts = self._pending.get(turn, [])
        by = {c: [f for f, carrier in facts if carrier == c] for c in ("user", "tool_result", "assistant")}
        user, kind = self._user(lang, by["user"])
        for f in by["user"]:
            self._plant(f, user.id or "", "user", turn)
        yield user, kind
        first_result = True
        for size, talk in zip(plan.rounds, plan.talk, strict=True):
            if talk:
                yield self._assistant(lang, 160, [], 2_000)
            pairs = []
            for _ in range(size):
                planted = by["tool_result"] if first_result else []
                call, result, kind = self._tool(planted)
                for f in planted:
                    self._plant(f, result.id or "", "tool_result", turn)
                first_result = False
                pairs.append((call, result, kind))
            # Parallel calls: every call of the round first, then the results in call order.
            for call, _, _ in pairs:
                call.ts = self._tick(300, 0.7)
                yield call, "json"  # a call's text is its JSON arguments
            for _, result, kind in pairs:
                result.ts = self._tick(400, 1.5)  # tool run time: milliseconds to a minute
                yield result, kind
        reply, kind = self._assistant(lang, self.config.assistant_median_bytes, by["assistant"], 6_000)
        for f in by["assistant"]:
            self._plant(f, reply.id or "", "assistant", turn)
        yield reply, kind


def generate(config: WorkloadConfig | None = None, **overrides: object) -> Session:
    """Generate a whole session; ``overrides`` replace fields of ``config`` (or of the defaults).

    Example: ``generate(turns=500, seed=7)`` or ``generate(max_entries=5000)``.
    """
    base = config or WorkloadConfig()
    if overrides:
        fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
        fields.update(overrides)
        base = WorkloadConfig(**fields)  # type: ignore[arg-type]
    gen = SessionGenerator(base)
    entries = list(gen)
    seen = {e.id for e in entries}
    # With max_entries the last turn may be cut: keep only facts whose carrier made it in.
    facts = [f for f in gen.facts if f.entry_id in seen]
    return Session(config=base, entries=entries, facts=facts, kinds=gen.kinds, turn_of=gen.turn_of)


def iter_session(config: WorkloadConfig | None = None) -> Iterator[Entry]:
    """Yield a session's entries lazily (for sessions too big to hold, e.g. a 100 MB resume file)."""
    return iter(SessionGenerator(config))

