"""A seeded, offline workload for the recall benchmark: many sessions with planted facts.

It is not the memory-quality workload (``experiments/measurements/memory_quality/``) written a
second time: that one replays a few sessions turn by turn through a live ``Session`` (compaction,
hand-overs) to measure what a strategy keeps at a window; this one writes hundreds of sessions
straight to the logs (20k-130k records in seconds) to measure retrieval and its speed at scale.
Their texts are written apart, so each checks the engines on data the other did not shape.

Facts of eight kinds (env values, branches, commit hashes, ticket ids, endpoints, version pins,
preferences, decisions with their reasons) about generated subjects (service names), each stated
once in one session, by the user, the assistant or a tool, as prose, a code comment, a log line or
minified JSON, in English or Chinese; around them filler turns (code, logs, JSON, chat) and near
misses (the same relation for another subject or another environment). Every fact is asked three
ways: ``template`` (with the relation's words), ``paraphrase`` (without them) and
``other_language`` (Chinese for an English statement and the other way round). Aggregation
questions ask for all tickets of a subject; absent-fact questions ask for what was never planted.

Half of the facts, and half of the paraphrase wordings, are ``held_out``: they are generated
from templates no tuning ever saw (the split is by fact and by wording template). The held-out
facts are also asked in a third, ``fresh`` style (split ``fresh``, see :data:`recall_wordings.FRESH`), written
after the held-out wordings had been looked at in three phases of work, and in a fourth,
``blind`` (see :data:`recall_wordings.BLIND`), written in phase 6 before the keyword rerank was developed:
and in a fifth, ``blind2`` (see :data:`recall_wordings.BLIND2`), written in phase 7 before that phase's ranking
work, after ``blind`` had been looked at in aggregate; and in a sixth, ``blind3`` (see
:data:`recall_wordings.BLIND3`), written blind in phase 9, held out then and a development split of the fusion
from phase 10; and in a seventh, ``blind4`` (see :data:`recall_wordings.BLIND4`), written blind in phase 10, held
out then and a development split of the fusion from phase 11; and in an eighth, ``blind5`` (see
:data:`recall_wordings.BLIND5`), written blind in phase 11 and asked by no development split; and in a ninth,
``blind6`` (see :data:`recall_wordings.BLIND6`), written blind in phase 12 because blind5's quoted form labels
met the evidence head on, and asked by no development split either: the two held-out ones, the figures no
tuning has seen.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from aptmem.continuation import create_session
from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.scoring import Question
from aptmem.working_memory import WorkingMemory
from recall_wordings import STYLED

__all__ = ["Workload", "build_workload"]

_SYL = ["kes", "trel", "mar", "lin", "vo", "rak", "zen", "tor", "pha", "lux", "qui", "bram", "del", "sor", "nix", "ova", "tam", "gri"]
_ENVS = [("staging", "预发"), ("production", "生产"), ("dev", "开发")]
_LIBS = ["requests", "pydantic", "sqlalchemy", "fastapi", "celery", "numpy", "redis", "boto3"]
_TOOLS = [("Kafka", "RabbitMQ"), ("PostgreSQL", "MySQL"), ("gRPC", "REST"), ("Redis", "Memcached"), ("Terraform", "Pulumi")]
_REASONS = [("the ordering guarantees matter for refunds", "退款需要严格的顺序保证"),
            ("the team already runs it in production", "团队已经在生产环境运行它"),
            ("latency under load was half", "高负载下延迟只有一半"),
            ("the licence cost was lower", "许可证成本更低")]
_PREFS = [("tabs for indentation", "用 tab 缩进"), ("squash merges", "合并时使用 squash"),
          ("type hints everywhere", "到处写类型注解"), ("small pull requests", "小的 pull request")]
_WORDS = ("cache retry timeout queue worker deploy rollout metric alert latency buffer schema migration index shard "
          "replica lease token handler router config secret vault pipeline build artifact lint format test fixture "
          "mock patch thread pool socket stream batch window offset cursor page limit quota budget trace span").split()
_ZH_WORDS = "缓存 重试 超时 队列 部署 回滚 指标 告警 延迟 架构 迁移 索引 分片 副本 令牌 配置 密钥 流水线 构建 测试 线程 连接 批量 窗口 游标 配额 预算".split()


@dataclass
class Fact:
    """One planted fact: what it says, how it is written, where it is, how it is asked."""

    fact_id: str
    kind: str
    subject: str
    answer: str
    statement_en: str
    statement_zh: str
    questions: dict[str, tuple[str, str]]  # wording -> (en question, zh question)
    split: str
    answer_zh: str = ""  # the answer as the Chinese statement writes it, where it differs
    carrier: str = ""
    language: str = ""
    session_id: str = ""
    entry_id: str = ""
    slots: dict[str, str] = field(default_factory=dict)  # the fields its texts were filled from


def _subject(rng: random.Random) -> str:
    return "".join(rng.sample(_SYL, 2)) + rng.choice(["-api", "-svc", "-worker", "d", ""])


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


#: Per kind: the statement (en, zh), the template question (en, zh) and two paraphrases (en, zh),
#: the first for the tune half, the second held out. Fields come from :func:`_slots`.
_TEXTS: dict[str, dict[str, object]] = {
    "env": {"say": ("{key} for {s} in {env} is {v}", "{s} 在{env_zh}环境的 {key} 是 {v}"),
            "ask": ("What is the {key} of {s} in {env}?", "{s} 在{env_zh}环境的 {key} 是什么？"),
            "para": [("Where does {s} connect on {env}? I need the {proto} address.", "{s} 在{env_zh}连的 {proto} 地址是哪个？"),
                     ("{s} on {env}: which {proto} host and port did we end up with?", "{env_zh}上 {s} 用的 {proto} 主机和端口是？")]},
    "branch": {"say": ("the release branch for {s} is {v}", "{s} 的发布分支是 {v}"),
               "ask": ("What is the release branch for {s}?", "{s} 的发布分支是什么？"),
               "para": [("Which line of code should the {s} hotfix go onto?", "{s} 的热修复应该提交到哪条线上？"),
                        ("Where do we cut {s} builds from for shipping?", "{s} 上线的构建从哪里切出来？")]},
    "commit": {"say": ("commit {v} fixed the {bug} in {s}", "提交 {v} 修复了 {s} 的 {bug}"),
               "ask": ("Which commit fixed the {bug} in {s}?", "哪个提交修复了 {s} 的 {bug}？"),
               "para": [("Which change got rid of the {bug} problem in {s}?", "{s} 的 {bug} 问题是哪个改动解决的？"),
                        ("What hash should I cherry-pick to get the {bug} repair for {s}?", "要拿到 {s} 的 {bug} 修复，该 cherry-pick 哪个 hash？")]},
    "ticket": {"say": ("ticket {v} tracks {topic} for {s}", "工单 {v} 跟踪 {s} 的 {topic}"),
               "ask": ("Which ticket tracks {topic} for {s}?", "哪个工单跟踪 {s} 的 {topic}？"),
               "para": [("Under which id is {topic} of {s} filed?", "{s} 的 {topic} 登记在哪个编号下？"),
                        ("Where is the work on {topic} for {s} being followed up?", "{s} 的 {topic} 在哪里跟进？")]},
    "endpoint": {"say": ("the health check endpoint of {s} is {v}", "{s} 的健康检查接口是 {v}"),
                 "ask": ("What is the health check endpoint of {s}?", "{s} 的健康检查接口是什么？"),
                 "para": [("What path should the load balancer probe to know {s} is alive?", "负载均衡器该探测 {s} 的哪个路径来判断存活？"),
                          ("Which URL tells us whether {s} is up?", "哪个 URL 能看出 {s} 是否正常？")]},
    "pin": {"say": ("{s} pins {v}", "{s} 把版本固定为 {v}"),
            "ask": ("Which version of {lib} does {s} pin?", "{s} 固定的 {lib} 版本是多少？"),
            "para": [("Which {lib} release is {s} locked to?", "{s} 锁定在 {lib} 的哪个发行版？"),
                     ("If I upgrade {lib} in {s}, what am I moving away from?", "如果在 {s} 里升级 {lib}，原来用的是哪个？")]},
    "preference": {"say": ("for {s} the user prefers {v}", "在 {s} 上用户偏好{v_zh}"),
                   "ask": ("What does the user prefer for {s}?", "用户在 {s} 上偏好什么？"),
                   "para": [("How does the user like work on {s} to be done?", "用户希望 {s} 的工作怎么做？"),
                            ("Any style wishes from the user about {s}?", "用户对 {s} 有什么风格上的要求？")]},
    "decision": {"say": ("we decided to use {v} instead of {other} for {s} because {reason}", "我们决定 {s} 使用 {v} 而不是 {other}，因为{reason_zh}"),
                 "ask": ("What did we decide to use for {s} and why?", "我们决定 {s} 用什么，为什么？"),
                 "para": [("{v} or {other} for {s}, what did we settle on and why?", "{s} 最后定了 {v} 还是 {other}，为什么？"),
                          ("Why was {other} turned down for {s}?", "为什么 {s} 没有用 {other}？")]},
}


def _slots(rng: random.Random, kind: str, subject: str) -> dict[str, str]:
    """The fields of one fact of ``kind`` about ``subject``: ``v`` is its answer."""
    env, env_zh = rng.choice(_ENVS)
    base = subject.split("-")[0]
    slots = {"s": subject, "env": env, "env_zh": env_zh}
    if kind == "env":
        key = rng.choice(["DATABASE_URL", "REDIS_URL", "QUEUE_DSN"])
        proto = {"DATABASE_URL": "postgresql", "REDIS_URL": "redis", "QUEUE_DSN": "amqp"}[key]
        slots |= {"key": key, "proto": proto, "v": f"{proto}://{subject}-{_hex(rng, 4)}.{env}.internal:{rng.randint(1024, 65000)}/{base}"}
    elif kind == "branch":
        slots["v"] = f"release/{base}-{rng.randint(1, 9)}.{rng.randint(0, 30)}"
    elif kind == "commit":
        slots |= {"v": _hex(rng, 10), "bug": rng.choice(["crash on empty cart", "double charge", "timezone drift", "memory leak in the poller"])}
    elif kind == "ticket":
        slots |= {"v": f"{subject[:3].upper()}-{rng.randint(100, 9999)}",
                  "topic": rng.choice(["the schema migration", "the flaky integration test", "the rate limiter", "the audit log"])}
    elif kind == "endpoint":
        slots["v"] = f"/v{rng.randint(1, 4)}/{base}/{rng.choice(['healthz', 'status', 'ready', 'ping'])}"
    elif kind == "pin":
        lib = rng.choice(_LIBS)
        slots |= {"lib": lib, "v": f"{lib}=={rng.randint(0, 3)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}"}
    elif kind == "preference":
        slots["v"], slots["v_zh"] = rng.choice(_PREFS)
    else:  # decision
        (slots["v"], slots["other"]), (slots["reason"], slots["reason_zh"]) = rng.choice(_TOOLS), rng.choice(_REASONS)
    return slots


def _fact(rng: random.Random, kind: str, subject: str, index: int, held: int) -> Fact:
    """A fact of ``kind`` about ``subject``; ``held`` picks the paraphrase wording (0 tune, 1 held out)."""
    slots = _slots(rng, kind, subject)
    texts = _TEXTS[kind]

    def fill(pair: object) -> tuple[str, str]:
        en, zh = pair  # type: ignore[misc]
        return en.format(**slots), zh.format(**slots)

    en, zh = fill(texts["say"])
    value, value_zh = slots["v"], slots.get("v_zh", "")
    template, para = fill(texts["ask"]), [fill(p) for p in texts["para"]]  # type: ignore[attr-defined]
    return Fact(fact_id=f"f{index}", kind=kind, subject=subject, answer=value, statement_en=en, statement_zh=zh,
                answer_zh=value_zh, slots=slots,
                questions={"template": template, "paraphrase": para[held]}, split="held_out" if held else "tune")


KINDS = ("env", "branch", "commit", "ticket", "endpoint", "pin", "preference", "decision")
CARRIERS = ("user_prose", "assistant_prose", "code_comment", "log_line", "json")


def _carry(rng: random.Random, fact: Fact, ts: int, call_id: str) -> list[Entry]:
    """The entries that state ``fact`` in its carrier and language; the fact's entry is the last."""
    text = fact.statement_zh if fact.language == "zh" else fact.statement_en
    fid = f"e-{fact.fact_id}"
    if fact.carrier == "user_prose":
        return [User(content=f"{rng.choice(['By the way, ', 'Note: ', '顺便说一下，', ''])}{text}. {_prose(rng, 2)}", ts=ts, id=fid)]
    if fact.carrier == "assistant_prose":
        return [Assistant(content=f"{_prose(rng, 2)} Noted: {text}. {_prose(rng, 1)}", ts=ts, id=fid)]
    if fact.carrier == "code_comment":
        body = f"def {rng.choice(_WORDS)}_{rng.choice(_WORDS)}(x):\n    # {text}\n    return x + {rng.randint(1, 9)}\n{_code(rng)}"
        return [ToolCall(name="read", args={"path": f"src/{fact.subject}/{rng.choice(_WORDS)}.py"}, ts=ts, id=call_id),
                ToolResult(call_id=call_id, name="read", content=body, ts=ts + 1, id=fid)]
    if fact.carrier == "log_line":
        lines = _logs(rng, 6)
        lines.insert(rng.randint(0, len(lines)), f"2024-05-{rng.randint(10, 28)}T10:{rng.randint(10, 59)}:00Z INFO {fact.subject}: {text}")
        return [ToolCall(name="bash", args={"cmd": f"kubectl logs {fact.subject} --tail 50"}, ts=ts, id=call_id),
                ToolResult(call_id=call_id, name="bash", content="\n".join(lines), ts=ts + 1, id=fid)]
    doc = {"service": fact.subject, "items": [_blob(rng) for _ in range(rng.randint(2, 6))],
           "config": {"notes": [text], fact.kind: fact.answer, **_blob(rng)}}
    return [ToolCall(name="http_get", args={"url": f"https://cfg.internal/{fact.subject}"}, ts=ts, id=call_id),
            ToolResult(call_id=call_id, name="http_get", content=msgspec.json.encode(doc).decode(), ts=ts + 1, id=fid)]


def _prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        if rng.random() < 0.3:
            out.append("".join(rng.choice(_ZH_WORDS) for _ in range(rng.randint(3, 7))) + "。")
        else:
            out.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14))).capitalize() + ".")
    return " ".join(out)


def _code(rng: random.Random) -> str:
    return "\n".join(f"    {rng.choice(_WORDS)}_{i} = {rng.choice(_WORDS)}({rng.randint(0, 99)})" for i in range(rng.randint(3, 12)))


def _logs(rng: random.Random, n: int) -> list[str]:
    return [f"2024-05-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:00Z {rng.choice(['INFO', 'WARN', 'DEBUG'])} "
            f"{rng.choice(_WORDS)}: {' '.join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))} id={_hex(rng, 8)}" for _ in range(n)]


def _blob(rng: random.Random) -> dict[str, object]:
    return {rng.choice(_WORDS): rng.choice([rng.randint(0, 9999), _hex(rng, 6), rng.choice(_WORDS)]) for _ in range(rng.randint(2, 5))}


def _filler(rng: random.Random, ts: int, n: int) -> Iterator[Entry]:
    for i in range(n):
        pick = rng.random()
        cid = f"c{ts}-{i}"
        if pick < 0.3:
            yield User(content=_prose(rng, rng.randint(1, 3)), ts=ts + i)
        elif pick < 0.55:
            yield Assistant(content=_prose(rng, rng.randint(2, 6)), ts=ts + i)
        elif pick < 0.7:
            yield ToolResult(call_id=cid, name="bash", content="\n".join(_logs(rng, rng.randint(3, 20))), ts=ts + i)
        elif pick < 0.85:
            yield ToolResult(call_id=cid, name="read", content=_code(rng), ts=ts + i)
        else:
            yield ToolResult(call_id=cid, name="http_get", content=msgspec.json.encode([_blob(rng) for _ in range(rng.randint(1, 8))]).decode(), ts=ts + i)


#: Every split a workload's questions carry, in the order the recall benchmark prints them (the
#: held-out ones first, ``tune`` last). A new split goes here too: a test checks the questions carry
#: exactly these.
SPLITS = ("held_out", "fresh", "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "tune")


@dataclass
class Workload:
    """What was generated: the facts (with where they were put) and the questions."""

    root: str
    sessions: list[str]
    facts: list[Fact]
    questions: list[Question] = field(default_factory=list)
    entries: int = 0


def build_workload(root: str, *, seed: int, sessions: int, entries_per_session: int, facts: int) -> Workload:
    """Write ``sessions`` sessions under ``root`` with ``facts`` planted facts; return the workload."""
    rng = random.Random(seed)
    subjects = sorted({_subject(rng) for _ in range(max(8, facts // 3))})
    planted: list[Fact] = []
    for index in range(facts):
        kind = KINDS[index % len(KINDS)]
        fact = _fact(rng, kind, rng.choice(subjects), index, held=index % 2)
        fact.carrier = CARRIERS[(index // 2) % len(CARRIERS)]
        fact.language = "zh" if rng.random() < 0.35 else "en"
        if fact.language == "zh" and fact.answer_zh:
            fact.answer = fact.answer_zh
        planted.append(fact)
    store = JsonlStore(root)
    ids: list[str] = []
    by_session: dict[int, list[Fact]] = {}
    for fact in planted:
        by_session.setdefault(rng.randrange(sessions), []).append(fact)
    total = 0
    base_ts = 1_714_000_000_000
    for s in range(sessions):
        sid = create_session(store, root, title=f"{rng.choice(subjects)} {rng.choice(_WORDS)} work")
        ids.append(sid)
        ts = base_ts + s * 86_400_000
        entries: list[Entry] = list(_filler(rng, ts, entries_per_session))
        for n, fact in enumerate(by_session.get(s, [])):
            carried = _carry(rng, fact, ts + 10_000 + n * 10, f"call-{fact.fact_id}")
            fact.session_id, fact.entry_id = sid, carried[-1].id or ""
            at = rng.randint(0, len(entries))
            entries[at:at] = carried
        store.append_many(sid, entries)
        total += len(entries)
        if rng.random() < 0.5:
            WorkingMemory(root, sid).set_text(f"focus: {rng.choice(subjects)} {_prose(rng, 1)}")
    store.close()
    workload = Workload(root=root, sessions=ids, facts=planted, entries=total)
    workload.questions = _questions(rng, planted, subjects)
    return workload


def _questions(rng: random.Random, facts: list[Fact], subjects: list[str]) -> list[Question]:
    out: list[Question] = []
    for fact in facts:
        evidence = ((fact.session_id, fact.entry_id),)
        lang = fact.language
        other = "en" if lang == "zh" else "zh"
        pick = {"en": 0, "zh": 1}
        asks = [("template", lang, fact.questions["template"][pick[lang]]),
                ("paraphrase", lang, fact.questions["paraphrase"][pick[lang]]),
                ("other_language", other, fact.questions["paraphrase" if rng.random() < 0.5 else "template"][pick[other]])]
        for wording, language, text in asks:
            out.append(Question(qid=f"{fact.fact_id}-{wording}", fact_id=fact.fact_id, kind=fact.kind, wording=wording,
                                language=language, carrier=fact.carrier, split=fact.split, text=text, answer=fact.answer,
                                evidence=evidence))
    out.extend(_fresh_questions(facts))
    tickets: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.kind == "ticket":
            tickets.setdefault(fact.subject, []).append(fact)
    for subject, group in sorted(tickets.items()):
        if len(group) < 2:
            continue
        evidence = tuple((f.session_id, f.entry_id) for f in group)
        split = "held_out" if sum(f.split == "held_out" for f in group) * 2 >= len(group) else "tune"
        for wording, language, text in (("template", "en", f"List every ticket opened for {subject}."),
                                        ("paraphrase", "en", f"All the work items we filed about {subject}?"),
                                        ("other_language", "zh", f"列出 {subject} 的所有工单。")):
            out.append(Question(qid=f"agg-{subject}-{wording}", fact_id=f"agg-{subject}", kind="aggregation", wording=wording,
                                language=language, carrier="mixed", split=split, text=text, evidence=evidence, aggregation=True))
    asked = {(f.subject, f.kind) for f in facts}
    absent_kinds = {"endpoint": ("What is the metrics scrape endpoint of {s}?", "{s} 的指标抓取接口是什么？"),
                    "env": ("What is the SENTRY_DSN of {s} in staging?", "{s} 在预发环境的 SENTRY_DSN 是什么？"),
                    "branch": ("What is the long-term support branch for {s}?", "{s} 的长期支持分支是什么？")}
    for n, subject in enumerate(subjects[: max(10, len(subjects) // 2)]):
        kind = list(absent_kinds)[n % len(absent_kinds)]
        if (subject, kind) in asked and kind != "env":
            continue
        en, zh = absent_kinds[kind]
        for wording, language, text in (("template", "en", en.format(s=subject)), ("other_language", "zh", zh.format(s=subject))):
            out.append(Question(qid=f"absent-{subject}-{wording}", fact_id=f"absent-{subject}", kind="absent", wording=wording,
                                language=language, carrier="none", split="held_out" if n % 2 else "tune", text=text))
    return out


def _fresh_questions(facts: list[Fact]) -> list[Question]:
    """The styled wordings of every held-out fact (:data:`recall_wordings.STYLED`: ``fresh``, ``blind`` and the
    later blind splits), each split in turn, in the fact's language and in the other
    (no randomness: adding them leaves every other question of a seed as it was)."""
    out: list[Question] = []
    for split, wordings in STYLED:
        for fact in facts:
            if fact.split != "held_out":
                continue
            en, zh = (t.format(**fact.slots) for t in wordings[fact.kind])
            same, other = (en, zh) if fact.language == "en" else (zh, en)
            for wording, language, text in (("paraphrase", fact.language, same), ("other_language", "zh" if fact.language == "en" else "en", other)):
                out.append(Question(qid=f"{fact.fact_id}-{split}-{wording}", fact_id=fact.fact_id, kind=fact.kind, wording=wording,
                                    language=language, carrier=fact.carrier, split=split, text=text, answer=fact.answer,
                                    evidence=((fact.session_id, fact.entry_id),)))
    return out


def random_tag(rng: random.Random) -> str:
    """A short random tag (for scratch folder names)."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(6))
