"""A fifth workload, written blind in phase 5: a coding pair's sessions (diffs, build files, CI, chat).

Nobody tuned anything on it: it was written without reading the fact finder or the memory
strategies, and none was run on it while it was written. Its sessions are what a user and an
agent pairing on a repository see: unified diffs, Makefiles, Dockerfiles, docker-compose files,
Helm values, ``terraform plan`` output, SQL migrations, GitHub Actions logs, ``pytest`` runs,
Markdown tables and chat threads that mix English and Chinese (filler in :mod:`.pairing_text`).

It plants every item type the scorer judges: facts of ten kinds (host ports, image digests,
migration heads, buckets, memory limits, code owners, on-call names, queue URLs, user habits and
decisions with their reasons), updates (asked for the current and the previous value, most said as
a diff), sets gathered over the sessions, the order of two events in different sessions, and
absent facts (a subject and a kind each planted with something else, never together); with near
misses (the same kind of another component, the same component with another kind) and unique
fact-shaped noise. Items an answer of which occurs outside their evidence are dropped, as in
:mod:`.workload`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from experiments.measurements.memory_quality.clock import EntryClock
from experiments.measurements.memory_quality.pairing_text import COMPONENTS, FILLERS, opening, reply
from experiments.measurements.memory_quality.planting import PlacedStatement, hex_digits
from experiments.measurements.memory_quality.workload import Item, Workload, WorkloadShape, lay_out, unambiguous

__all__ = ["build_pairing"]

_WORDS = ("walnut", "cobalt", "heron", "mosaic", "tundra", "quartz", "lichen", "ember", "sorrel", "yarrow", "bramble",
          "cinder", "fennel", "marble", "thistle", "juniper")
_SYLLABLES = ("ka", "ro", "mi", "tsu", "len", "bo", "dri", "vex", "an", "sol", "pia", "gru")
_ZH_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "夏侯", "皇甫", "尉迟", "公孙")
_ZH_GIVEN = "婉清若溪子墨语桐书瑶嘉禾"
_HABITS = {"merging pull requests": ("squash and merge", "rebase and merge", "a plain merge commit"),
           "running tests while pairing": ("pytest --lf --maxfail=1", "pytest -n auto --dist loadfile", "ptw --onfail"),
           "naming branches": ("initials/ticket-slug", "type/short-topic", "yyyymmdd-topic"),
           "review comments": ("Conventional Comments labels", "one thread per concern", "suggested-change blocks")}
_CHOICES = ("the retry backoff", "the test database", "the config format", "the job runner", "the API pagination",
            "the feature-flag store")
_OPTIONS = ("full jitter", "testcontainers Postgres", "TOML with a schema", "arq on Redis", "opaque cursor tokens",
            "decorrelated jitter", "SQLite in memory", "Dramatiq", "keyset pages", "Unleash self-hosted")
_REASONS = ("it keeps retries from piling onto the primary", "fixtures then see the same types as production",
            "comments survive a round trip through the tooling", "we already run that Redis for caching",
            "offsets skip rows when inserts race the reader", "nobody wants another managed bill",
            "the old one deadlocked under the nightly backfill", "on-call can read it without a manual")
_SWEEPS = ("the flaky-test sweep", "the Python 3.13 upgrade", "the asyncio rewrite", "the fixture cleanup")
_WORKSPACES = ("staging-eu", "prod-us", "sandbox-ap", "perf-lab")


def _under(subject: str) -> str:
    return subject.replace("-", "_")


def _zh_name(rng: random.Random, subject: str) -> str:
    return rng.choice(_ZH_SURNAMES) + "".join(rng.sample(_ZH_GIVEN, 2))


@dataclass(frozen=True)
class _Relation:
    """A kind of fact this workload plants: subjects, values, how it is said and updated, how it is asked.

    Templates take ``{s}`` (the subject), ``{u}`` / ``{U}`` (it with underscores, and upper case),
    ``{v}`` (the value), ``{old}`` (the value an update replaces) and ``{why}`` (a decision's reason).
    """

    name: str
    lang: str
    subjects: tuple[str, ...]
    value: Callable[[random.Random, str], str]
    #: what any value of the kind matches (absent facts are judged with it; empty: never asked absent)
    pattern: str
    #: (carrier, format, template)
    said: tuple[tuple[str, str, str], ...]
    ask: tuple[str, str, str]
    #: update templates, and the (carrier, format) each is said in
    update: tuple[str, ...] = ()
    update_in: tuple[tuple[str, str], ...] = ()
    ask_before: tuple[str, str, str] = ("", "", "")
    why: tuple[str, ...] = field(default=())


_KINDS: tuple[_Relation, ...] = (
    _Relation("pair_host_port", "english", COMPONENTS, lambda r, s: str(r.randrange(40000, 49999)), r"(?<![\w.])4\d{4}(?![\w.])",
              said=(("tool", "compose", "  {s}:\n    build: ./services/{s}\n    ports:\n      - \"{v}:8000\""),
                    ("assistant", "prose", "I exposed {s} on localhost:{v} in the compose file so it stops fighting with your other stack."),
                    ("user", "chat", "{s} 本地我一般开在 {v}，你那边也用这个吧")),
              update=("diff --git a/docker-compose.yml b/docker-compose.yml\n@@ -12,7 +12,7 @@ services:\n   {s}:\n     ports:\n"
                      "-      - \"{old}:8000\"\n+      - \"{v}:8000\"",
                      "Moved {s} off {old} locally; it sits on {v} now because the VPN client grabbed the old one."),
              update_in=(("tool", "diff"), ("user", "prose")),
              ask=("Which host port does {s} publish in docker-compose?",
                   "I'm running {s} on my laptop; what do I put after localhost: to hit it?",
                   "{s} 在 docker-compose 里映射到宿主机的哪个端口？"),
              ask_before=("Which host port did {s} publish before it moved?",
                          "What did I type after localhost: for {s} until the last change?", "{s} 之前映射的宿主机端口是哪个？")),
    _Relation("pair_base_digest", "english", COMPONENTS, lambda r, s: f"sha256:{hex_digits(r, 24)}", r"sha256:[0-9a-f]{24}\b",
              said=(("tool", "dockerfile", "# runtime image for {s}, pinned by digest\nFROM python:3.12-slim@{v}"),
                    ("assistant", "prose", "Pinned the {s} base image to python:3.12-slim@{v}; the floating tag pulled a broken libssl yesterday.")),
              update=("--- a/services/{s}/Dockerfile\n+++ b/services/{s}/Dockerfile\n@@ -1,2 +1,2 @@\n"
                      "-FROM python:3.12-slim@{old}\n+FROM python:3.12-slim@{v}",
                      "{s} 的 Dockerfile 我换了 digest：{old} 不要了，现在是 {v}"),
              update_in=(("tool", "diff"), ("user", "chat")),
              ask=("Which digest is the {s} base image pinned to?", "Which exact build of python slim does the {s} container start from?",
                   "{s} 的基础镜像固定在哪个 digest？"),
              ask_before=("Which digest was the {s} base image pinned to before?",
                          "Which exact python slim build did the {s} container start from earlier?", "{s} 之前的基础镜像 digest 是什么？")),
    _Relation("pair_migration_head", "english", COMPONENTS,
              lambda r, s: f"V{r.randrange(100, 999)}__{r.choice(_WORDS)}_{r.choice(_WORDS)}", r"\bV\d{3}__[a-z_]+",
              said=(("tool", "sql", "-- {s} schema head: {v}\n-- migrate:up\nCREATE TABLE IF NOT EXISTS {u}_outbox (id bigserial PRIMARY KEY);"),
                    ("tool", "ci_log", "2024-11-19T10:02:31.4471Z flyway: schema of {s} is up to date, current version {v}"),
                    ("user", "chat", "{s} 的库我刚 migrate 到 {v} 了，你 pull 一下")),
              update=("{s} 又加了一个迁移，现在 head 是 {v}（原来是 {old}）",
                      "After the rebase the {s} migrations go past {old}: {v} is the newest one now."),
              update_in=(("user", "chat"), ("assistant", "prose")),
              ask=("Which migration is the head of the {s} schema?",
                   "How far forward has the {s} database been brought, by revision name?", "{s} 数据库现在迁移到哪个版本？"),
              ask_before=("Which migration was the head of the {s} schema before the last one?",
                          "Up to which revision name was the {s} database before the latest step?", "{s} 数据库上一个迁移版本是哪个？")),
    _Relation("pair_artifact_bucket", "english", COMPONENTS, lambda r, s: f"acme-{r.choice(_WORDS)}-{hex_digits(r, 6)}",
              r"\bacme-[a-z]+-[0-9a-f]{6}\b",
              said=(("tool", "terraform", "  # aws_s3_bucket.{u}_artifacts will be created\n  + resource \"aws_s3_bucket\" \"{u}_artifacts\" {{\n"
                                          "      + bucket        = \"{v}\"\n      + force_destroy = false\n    }}"),
                    ("assistant", "prose", "Once the plan is applied, the artifacts of {s} land in the S3 bucket {v}.")),
              ask=("Which S3 bucket holds the artifacts of {s}?", "Where in object storage do the build outputs of {s} end up?",
                   "{s} 的构建产物放在哪个 S3 桶里？")),
    _Relation("pair_memory_limit", "english", COMPONENTS, lambda r, s: f"{r.randrange(1100, 3999)}Mi", r"\b\d{4}Mi\b",
              said=(("tool", "helm", "{s}:\n  resources:\n    limits:\n      memory: {v}  # OOMKilled below this"),
                    ("user", "prose", "Give {s} a {v} memory limit in the chart; it got OOMKilled twice at the old one.")),
              update=("2024-11-21T09:14:02.5531Z + helm upgrade --install {s} ./chart --set resources.limits.memory={v}  # was {old}",
                      "{s} 的内存上限从 {old} 调到 {v} 了，别再改回去"),
              update_in=(("tool", "ci_log"), ("user", "chat")),
              ask=("What memory limit does the Helm chart give {s}?", "How much RAM may a {s} pod use before the kubelet kills it?",
                   "{s} 在 Helm 里的内存上限是多少？"),
              ask_before=("What memory limit did the chart give {s} before?", "How much RAM could a {s} pod use before the last bump?",
                          "{s} 之前的内存上限是多少？")),
    _Relation("pair_code_owner", "english", COMPONENTS,
              lambda r, s: "@" + "".join(r.sample(_SYLLABLES, 2)) + str(r.randrange(10, 99)), r"@[a-z]+\d{2}\b",
              said=(("tool", "codeowners", "/services/{s}/  {v} @acme/reviewers"),
                    ("assistant", "prose", "GitHub will ask {v} to review anything under services/{s}/, per CODEOWNERS.")),
              update=("--- a/.github/CODEOWNERS\n+++ b/.github/CODEOWNERS\n@@ -4,1 +4,1 @@\n-/services/{s}/  {old}\n+/services/{s}/  {v}",),
              update_in=(("tool", "diff"),),
              ask=("Who is the code owner of {s}?", "Whose approval does a pull request touching {s} wait for?", "{s} 的 code owner 是谁？"),
              ask_before=("Who was the code owner of {s} before?", "Whose approval did pull requests touching {s} wait for earlier?",
                          "{s} 之前的 code owner 是谁？")),
    _Relation("pair_on_call", "chinese", COMPONENTS, _zh_name, "",
              said=(("user", "chat", "这周 {s} 值班的是{v}，有事先找她"),
                    ("tool", "chat", "**zhou** 14:05  {s} 出问题的话 ping {v}，这周轮到她"),
                    ("assistant", "prose", "我确认过了：{s} 本周的值班人是{v}。")),
              update=("{s} 值班换人了，{old}请假，改成{v}",), update_in=(("user", "chat"),),
              ask=("{s} 这周谁值班？", "{s} 半夜出事该叫醒谁？", "Who is on call for {s} this week?"),
              ask_before=("{s} 换人之前是谁值班？", "{s} 原本该叫醒的是谁？", "Who was on call for {s} before the swap?")),
    _Relation("pair_queue_url", "english", COMPONENTS,
              lambda r, s: f"amqps://mq-{r.randrange(10, 99)}.{r.choice(_WORDS)}.corp/{_under(s)}", r"amqps://\S+",
              said=(("tool", "make", "{U}_QUEUE_URL ?= {v}\nexport {U}_QUEUE_URL"),
                    ("assistant", "prose", "`make run` for {s} reads {U}_QUEUE_URL, which defaults to {v}.")),
              update=("--- a/Makefile\n+++ b/Makefile\n@@ -8,1 +8,1 @@\n-{U}_QUEUE_URL ?= {old}\n+{U}_QUEUE_URL ?= {v}",),
              update_in=(("tool", "diff"),),
              ask=("Which queue URL does the Makefile set for {s}?",
                   "Where does {s} send and fetch its messages when it is started through make?", "Makefile 里 {s} 的队列地址是什么？"),
              ask_before=("Which queue URL did the Makefile set for {s} before?",
                          "Where did {s} send its messages when started through make, earlier?", "Makefile 里 {s} 以前的队列地址是什么？")),
    _Relation("pair_habit", "english", tuple(_HABITS), lambda r, s: r.choice(_HABITS[s]), "",
              said=(("user", "prose", "When it comes to {s}, I'd rather we do {v}; please remember that for next time."),
                    ("user", "chat", "{s} 的话我习惯用 {v}，以后都这样")),
              ask=("How does the user want {s} done?", "If you were alone with {s}, what would I expect you to do?",
                   "用户在 {s} 这件事上偏好什么做法？")),
    _Relation("pair_decision", "english", _CHOICES, lambda r, s: r.choice(_OPTIONS), "",
              said=(("assistant", "prose", "We settled on {v} for {s}, because {why}."),
                    ("user", "chat", "{s} 就定 {v} 吧，理由：{why}"),
                    ("tool", "adr", "| {s} | {v} | {why} |")),
              ask=("What did we decide for {s}, and why?", "Where did we land on {s}, and what tipped it?", "{s} 最后定了什么，为什么？"),
              why=_REASONS),
)


def _drawn(rng: random.Random, mean: float) -> int:
    """A count of mean ``mean``: its whole part, and one more with the chance of its fraction."""
    return int(mean) + (rng.random() < mean % 1)


class _Planner:
    """Draws the items and their statements, and the distractors around them."""

    def __init__(self, shape: WorkloadShape, rng: random.Random) -> None:
        self.shape, self.rng = shape, rng
        self.turns = shape.sessions * shape.turns
        self.plants: list[PlacedStatement] = []
        self.items: list[tuple[dict[str, object], str]] = []  # the fields of each item, and its id
        self.said: set[tuple[str, str]] = set()  # (kind, subject) ever said, asked or not
        self.values: set[str] = set()

    def fresh(self, make: Callable[[], str]) -> str:
        """A value from ``make`` that is no other value, and neither holds one nor is held in one."""
        for _ in range(300):
            value = make()
            if all(value not in v and v not in value for v in self.values):
                self.values.add(value)
                return value
        raise ValueError("ran out of distinct values: plant fewer items")

    def pair(self, kind: _Relation, subject: str | None = None) -> str | None:
        """A subject of ``kind`` not said with it yet (``subject`` if given and free), marked said."""
        free = [s for s in kind.subjects if (kind.name, s) not in self.said and subject in (None, s)]
        if not free:
            return None
        chosen = self.rng.choice(free)
        self.said.add((kind.name, chosen))
        return chosen

    def say(self, turn: int, carrier: str, fmt: str, template: str, subject: str, items: tuple[str, ...] = (),
            **values: str) -> None:
        """Place ``template`` said of ``subject`` in ``turn``."""
        text = template.format(s=subject, u=_under(subject), U=_under(subject).upper(), **values)
        self.plants.append(PlacedStatement(turn, carrier, fmt, text, items))

    def item(self, **fields: object) -> str:
        """Record an item; its id."""
        ident = f"pair_{len(self.items):03d}"
        self.items.append((fields, ident))
        return ident

    def plan(self) -> None:
        """Draw every item and distractor of the shape."""
        shape, rng = self.shape, self.rng
        updatable = [k for k in _KINDS if k.update]
        for _ in range(shape.updates):
            self._update(rng.choice(updatable))
        kinds, used = list(_KINDS), dict.fromkeys((k.name for k in _KINDS), 0)
        for _ in range(shape.facts):
            # The kind planted least so far (ties drawn), so every kind is asked about.
            while kinds:
                fewest = min(used[k.name] for k in kinds)
                kind = rng.choice([k for k in kinds if used[k.name] == fewest])
                if self._fact(kind):
                    used[kind.name] += 1
                    break
                kinds.remove(kind)
        for sweep in rng.sample(_SWEEPS, min(shape.aggregates, len(_SWEEPS))):
            self._aggregate(sweep)
        for _ in range(shape.orders):
            self._order()
        for _ in range(shape.absent):
            self._absent()
        self.plants += [PlacedStatement(turn, rng.choice(("user", "assistant")), "prose", self._noise())
                        for turn in range(self.turns) for _ in range(_drawn(rng, shape.noise))]

    def _value(self, kind: _Relation, subject: str) -> str:
        return self.fresh(lambda: kind.value(self.rng, subject))

    def _why(self, kind: _Relation) -> str:
        """A reason no other decision gives (a reason is part of the answer), or nothing for kinds without one."""
        return self.fresh(lambda: self.rng.choice(kind.why)) if kind.why else ""

    def _fact(self, kind: _Relation) -> bool:
        subject = self.pair(kind)
        if subject is None:
            return False
        value, why = self._value(kind, subject), self._why(kind)
        carrier, fmt, template = self.rng.choice(kind.said)
        ident = self.item(type="fact", kind=kind, subject=subject, answers=(value, why) if why else (value,))
        self.say(self.rng.randrange(self.turns), carrier, fmt, template, subject, (ident,), v=value, why=why)
        self._near_miss(kind, subject)
        return True

    def _update(self, kind: _Relation) -> None:
        subject = self.pair(kind)
        if subject is None:
            return
        shape, rng = self.shape, self.rng
        old, new = self._value(kind, subject), self._value(kind, subject)
        first = rng.randrange(0, self.turns - shape.turns)
        later = rng.randrange((first // shape.turns + 1) * shape.turns, self.turns)
        now = self.item(type="update", kind=kind, subject=subject, answers=(new,), stale=old)
        before = self.item(type="update_before", kind=kind, subject=subject, answers=(old,))
        carrier, fmt, template = rng.choice(kind.said)
        self.say(first, carrier, fmt, template, subject, (now, before), v=old, why="")
        index = rng.randrange(len(kind.update))
        carrier, fmt = kind.update_in[index]
        self.say(later, carrier, fmt, kind.update[index], subject, (now, before), v=new, old=old)

    def _near_miss(self, kind: _Relation, subject: str) -> None:
        """Distractors said exactly like facts: the same kind of another subject, or another kind of this one."""
        rng = self.rng
        for _ in range(_drawn(rng, self.shape.near_misses)):
            if rng.random() < 0.5:
                other_kind, other = kind, self.pair(kind)
            else:
                other_kind = rng.choice([k for k in _KINDS if k is not kind and k.subjects is kind.subjects] or [kind])
                other = self.pair(other_kind, subject) if other_kind is not kind else None
            if other is None:
                continue
            carrier, fmt, template = rng.choice(other_kind.said)
            why = self._why(other_kind)
            self.say(rng.randrange(self.turns), carrier, fmt, template, other, v=self._value(other_kind, other), why=why)

    def _aggregate(self, sweep: str) -> None:
        """One quarantined test per session, asked for as the whole set."""
        rng, shape = self.rng, self.shape
        tests = [self.fresh(lambda: f"tests/test_{rng.choice(_WORDS)}.py::test_{rng.choice(_WORDS)}_{rng.randrange(100, 999)}")
                 for _ in range(shape.sessions)]
        ident = self.item(type="aggregate", kind="pair_quarantine_set", subject=sweep, answers=tuple(tests), lang="english",
                          questions=(f"Which tests did we quarantine during {sweep}?",
                                     f"Name every test we set aside while doing {sweep}.", f"{sweep} 期间我们一共隔离了哪些测试？"))
        ways = (("tool", "pytest", "{v} XFAIL (quarantined for {s})"),
                ("assistant", "prose", "Quarantined {v} as part of {s}; it still needs a real fix."),
                ("user", "chat", "{s} 再隔离一个：{v}"))
        for session, test in enumerate(tests):
            carrier, fmt, template = rng.choice(ways)
            turn = rng.randrange(session * shape.turns, (session + 1) * shape.turns)
            self.plants.append(PlacedStatement(turn, carrier, fmt, template.format(s=sweep, v=test), (ident,)))

    def _order(self) -> None:
        """A terraform apply and a release tag in different sessions; asked which came first."""
        rng, shape = self.rng, self.shape
        workspace, component = rng.choice(_WORKSPACES), rng.choice(COMPONENTS)
        run = self.fresh(lambda: f"run-{hex_digits(rng, 14)}")
        tag = self.fresh(lambda: f"v{rng.randrange(1, 9)}.{rng.randrange(0, 40)}.{rng.randrange(0, 40)}-rc.{rng.randrange(1, 9)}")
        events = [("tool", "ci_log", f"2024-11-20T16:40:11.2031Z Apply complete! Resources: 2 added, 1 changed, 0 destroyed. "
                                     f"workspace={workspace} {run}", run),
                  ("assistant", "prose", f"Tagged {component} as {tag} and pushed the tag; the release workflow picked it up.", tag)]
        rng.shuffle(events)
        early = rng.randrange(shape.sessions - 1)
        turns = (rng.randrange(early * shape.turns, (early + 1) * shape.turns), rng.randrange((early + 1) * shape.turns, self.turns))
        ident = self.item(type="order", kind="pair_event_order", subject=f"{workspace} / {component}", lang="english",
                          answers=(events[0][3], events[1][3]),
                          questions=(f"Which came first: the terraform apply of {workspace} or the {component} release tag?",
                                     f"Did the {workspace} infrastructure change land before {component} was cut for release, or after?",
                                     f"{workspace} 的 terraform apply 和 {component} 打 release tag，哪个在前？"))
        for (carrier, fmt, text, _), turn in zip(events, turns):
            self.plants.append(PlacedStatement(turn, carrier, fmt, text, (ident,)))

    def _absent(self) -> None:
        """A kind and a subject each said with something else, never together."""
        kinds_of = {}
        for name, subject in self.said:
            kinds_of.setdefault(subject, set()).add(name)
        candidates = sorted((k.name, s) for k in _KINDS if k.pattern and any(n == k.name for n, _ in self.said)
                            for s in k.subjects if s in kinds_of and k.name not in kinds_of[s])
        if not candidates:
            return
        name, subject = self.rng.choice(candidates)
        kind = next(k for k in _KINDS if k.name == name)
        self.said.add((name, subject))
        self.item(type="absent", kind=kind, subject=subject, answers=(), pattern=kind.pattern)

    def _noise(self) -> str:
        rng = self.rng
        comp = rng.choice(COMPONENTS)
        return rng.choice((f"p95 of {comp} is {rng.randrange(20, 900)} ms on the branch and {rng.randrange(20, 900)} ms on main.",
                           f"{comp} 的覆盖率现在是 {rng.randrange(40, 99)}%，比上周低一点。",
                           f"Coverage for {comp} dropped to {rng.randrange(40, 99)}.{rng.randrange(10)}% after the rename.",
                           f"The {comp} image is {rng.randrange(60, 900)} MB compressed, most of it wheels.",
                           f"CI for {comp} took {rng.randrange(2, 30)} min {rng.randrange(60)} s on the last run."))


class _Writer:
    """Writes each turn: a user message, tool calls whose output is filler of a plant's format, a reply."""

    def __init__(self, rng: random.Random, median: int) -> None:
        self.rng, self.median = rng, median
        self.clock = EntryClock(rng, 1_731_000_000_000, prefix="pp")

    def _tool(self, fmt: str, plant: PlacedStatement | None) -> tuple[ToolCall, ToolResult]:
        name, args, text = FILLERS[fmt]
        size = max(300, min(20_000, int(self.rng.lognormvariate(math.log(self.median), 0.9))))
        lines = text(self.rng, size).split("\n")
        if plant is not None:
            lines.insert(self.rng.randrange(1, len(lines) + 1), plant.text)
        call = ToolCall(ts=self.clock.tick(600), id=self.clock.next_id("c"), name=name, args=args(self.rng))
        result = ToolResult(ts=self.clock.tick(1_500), id=self.clock.next_id("r"), call_id=call.id or "", name=name, content="\n".join(lines))
        if plant is not None:
            plant.entry_id = result.id or ""
        return call, result

    def turn(self, plants: list[PlacedStatement]) -> list[Entry]:
        """The entries of one turn, each plant placed (and given its entry's id)."""
        rng = self.rng
        by = {c: [p for p in plants if p.carrier == c] for c in ("user", "assistant", "tool")}
        user = User(ts=self.clock.tick(45_000), id=self.clock.next_id("u"), content="\n".join([opening(rng), *(p.text for p in by["user"])]))
        entries: list[Entry] = [user]
        jobs: list[tuple[str, PlacedStatement | None]] = [(p.fmt, p) for p in by["tool"]]
        jobs += [(rng.choice(sorted(FILLERS)), None) for _ in range(rng.randrange(1, 3))]
        rng.shuffle(jobs)
        for fmt, plant in jobs:
            entries += self._tool(fmt, plant)
        answer = Assistant(ts=self.clock.tick(7_000), id=self.clock.next_id("a"), model="sim-pair-1",
                           content="\n\n".join([reply(rng), *(p.text for p in by["assistant"])]))
        for p in by["user"]:
            p.entry_id = user.id or ""
        for p in by["assistant"]:
            p.entry_id = answer.id or ""
        return [*entries, answer]


def _language(text: str) -> str:
    return "chinese" if sum("\u4e00" <= c <= "\u9fff" for c in text) > 3 else "english"


def build_pairing(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` pair-programming turns with the shape's facts, updates, sets,
    orders and absent facts planted among near misses and noise; only unambiguous items are kept."""
    rng = random.Random(f"aptmem-memory-pairing:{seed}")
    planner = _Planner(shape, rng)
    planner.plan()
    writer = _Writer(rng, shape.tool_median_bytes)
    sessions, turn_of = lay_out(shape, lambda turn: writer.turn([p for p in planner.plants if p.turn == turn]), writer.clock)
    evidence = {ident: [p for p in planner.plants if ident in p.items] for _, ident in planner.items}
    items = []
    for fields, ident in planner.items:
        fields = dict(fields)
        kind = fields.pop("kind")
        plants = sorted(evidence.get(ident, []), key=lambda p: turn_of[p.entry_id])
        if isinstance(kind, _Relation):
            asked = kind.ask_before if fields["type"] == "update_before" else kind.ask
            fields.update(kind=kind.name, questions=tuple(q.format(s=fields["subject"]) for q in asked))
            fields.setdefault("lang", _language(plants[-1].text) if plants else kind.lang)
        else:
            fields["kind"] = kind
        last = plants[-1] if plants else None
        items.append(Item(id=ident, carrier=last.carrier if last else "", format=last.fmt if last else "",
                          evidence=tuple(dict.fromkeys(p.entry_id for p in plants)),
                          session=turn_of[last.entry_id] // shape.turns if last else -1,
                          turn=turn_of[last.entry_id] if last else -1,
                          first_turn=turn_of[plants[0].entry_id] if plants else -1, **fields))  # type: ignore[arg-type]
    kept, dropped = unambiguous(items, sessions)
    return Workload(sessions=sessions, items=kept, turn_of=turn_of, dropped=dropped,
                    distractors=sum(1 for p in planner.plants if not p.items))
