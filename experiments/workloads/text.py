"""Seeded text for synthetic sessions: English and Chinese prose, source code, JSON, logs.

Nothing here is read from disk or the network: small vocabularies and templates ship in this
file, and :class:`TextPools` expands them with a seeded ``random.Random`` into a few hundred
ready-made pieces per content kind. Filling a message of N bytes is then a matter of picking
pieces, which keeps a 5,000-entry session (about 10 MB of text) well under a second.

Only ``random.Random.random``-based calls are used (``choice``, ``choices``, ``randrange``),
whose output for a given seed Python keeps stable, so a seed gives the same bytes tomorrow.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

__all__ = ["CONTENT_KINDS", "PROJECTS", "TextPools", "clip_utf8", "name_zh"]

#: The content kinds a session mixes; the workload's ``mix`` weights are keyed by these.
CONTENT_KINDS = ("english", "chinese", "code", "json")

# --- vocabularies -------------------------------------------------------------------------

_EN_ADJ = (
    "stale", "hidden", "flaky", "slow", "nested", "optional", "cached", "broken", "unused", "async",
    "legacy", "noisy", "partial", "sorted", "atomic", "unbounded", "lazy", "default", "global", "empty",
    "duplicate", "missing", "expired", "invalid", "transient", "verbose", "strict", "shared", "local", "minor",
)
_EN_NOUN = (
    "cache", "parser", "request", "handler", "session", "token", "config", "schema", "queue", "worker",
    "buffer", "retry", "timeout", "migration", "index", "snapshot", "lock", "batch", "payload", "endpoint",
    "fixture", "logger", "iterator", "callback", "manifest", "checksum", "cursor", "pipeline", "registry", "socket",
)
_EN_VERB = (
    "drops", "rewrites", "validates", "skips", "caches", "retries", "flushes", "blocks", "leaks", "returns",
    "rejects", "duplicates", "serializes", "truncates", "reorders", "locks", "parses", "ignores", "wraps", "logs",
)
_EN_GERUND = (
    "reading", "writing", "closing", "opening", "sorting", "merging", "parsing", "encoding", "sending", "loading",
)
_EN_TEMPLATES = (
    "The {adj} {noun} in {file} {verb} the {noun2} before {gerund} the {noun3}.",
    "I think the {noun} {verb} every {noun2} because the {adj} {noun3} is never reset.",
    "After {gerund} the {noun}, the {noun2} {verb} its {adj} state and the test fails.",
    "We should keep the {noun} {adj} until the {noun2} finishes {gerund} the {noun3}.",
    "Running the suite again shows that the {noun} only {verb} the {noun2} on the second call.",
    "The fix is small: check the {noun} before the {noun2} {verb} it, then return early.",
    "In {file}, {func} {verb} the {noun} when the {noun2} is {adj}.",
    "This matters because a {adj} {noun} makes the {noun2} slower with every {noun3}.",
    "Let me look at how {func} handles a {adj} {noun} and whether it {verb} the {noun2}.",
    "The log says the {noun} timed out after {num} ms while {gerund} the {noun2}.",
    "There are {num} call sites of {func}; only the one in {file} passes a {adj} {noun}.",
    "Once the {noun} is {adj}, nothing {verb} the {noun2}, so the {noun3} grows without bound.",
    "A simpler option is to move the {noun} into {func} and drop the {adj} {noun2}.",
    "The benchmark shows {num} requests per second with the {adj} {noun} and half of that without it.",
    "I updated {file} so that {func} no longer {verb} the {noun} on retry.",
    "Note that the {noun2} {verb} the {noun} only if the {adj} flag is set.",
)

_ZH_SUBJ = (
    "这个函数", "缓存层", "解析器", "调度器", "会话文件", "日志模块", "配置项", "数据库连接", "写入队列", "索引",
    "压缩流程", "重试逻辑", "测试用例", "接口", "后台任务", "锁", "快照", "迁移脚本", "令牌计数", "上下文窗口",
)
_ZH_VERB = (
    "丢失了", "重复写入了", "没有刷新", "提前返回了", "截断了", "忽略了", "阻塞了", "覆盖了", "跳过了", "缓存了",
)
_ZH_OBJ = (
    "最后一行", "用户消息", "工具结果", "时间戳", "会话标识", "错误信息", "中间状态", "摘要", "旧数据", "返回值",
)
_ZH_CAUSE = (
    "并发写入", "进程崩溃", "断电", "网络超时", "编码错误", "内存不足", "权限问题", "空输入", "超长行", "时区差异",
)
_ZH_FIX = (
    "先检查边界条件", "把写入改成原子操作", "在关闭前调用同步", "增加一个单元测试", "拆分成两个小函数",
    "记录更详细的日志", "用文件锁保护", "在读取时跳过损坏的行", "把阈值改成可配置", "回滚上一次修改",
)
_ZH_TEMPLATES = (
    "{subj}在{cause}的时候{verb}{obj}，所以我们需要{fix}。",
    "我看了一下，{subj}{verb}{obj}，原因应该是{cause}。",
    "如果遇到{cause}，{subj}会{verb}{obj}，这一点要在文档里写清楚。",
    "建议{fix}，这样{subj}就不会再{verb}{obj}了。",
    "测试显示{subj}大约每{num}次调用就{verb}一次{obj}。",
    "目前{subj}的实现比较简单，{cause}时没有任何保护。",
    "修改之后，{subj}处理{obj}的耗时从{num}毫秒降到了一半左右。",
    "另外，{subj}和{subj2}之间的依赖关系也需要重新梳理。",
    "总结一下：问题出在{subj}，触发条件是{cause}，解决办法是{fix}。",
    "我已经更新了{file}，现在{subj}不会{verb}{obj}。",
)

_IDENT = (
    "session", "entry", "store", "line", "offset", "payload", "cursor", "tokens", "window", "summary",
    "marker", "record", "buffer", "result", "config", "path", "limit", "count", "items", "state",
)
_FUNC_VERB = ("load", "save", "parse", "flush", "append", "read", "merge", "count", "render", "check", "build", "scan")
_TYPES_PY = ("str", "int", "bytes", "list[str]", "dict[str, int]", "Path", "Entry", "None")
_DIRS = ("src", "lib", "app", "tests", "pkg/core", "src/utils", "internal/store", "scripts", "api", "web/src")
_EXTS = (".py", ".ts", ".go", ".rs", ".tsx", ".js")
PROJECTS = (
    "atlas", "borealis", "cobalt", "dune", "ember", "fjord", "granite", "helix", "iris", "juniper",
    "kestrel", "lumen", "meridian", "nimbus", "onyx", "pioneer", "quartz", "raven", "sierra", "tundra",
    "umbra", "vortex", "willow", "xenon", "yarrow", "zephyr",
)

_PY_TEMPLATES = (
    'def {f}({a}: {t}, {b}: int = {n}) -> {t2}:\n    """{doc}"""\n    {v} = {a}.{m}({b})\n    if not {v}:\n'
    '        raise ValueError("{a} is empty")\n    return {v}\n',
    "class {C}:\n    def __init__(self, {a}: {t}) -> None:\n        self.{a} = {a}\n        self._{v} = []\n\n"
    "    def {f}(self, {b}: int) -> int:\n        self._{v}.append({b})\n        return len(self._{v})\n",
    "for {v} in {a}:\n    if {v}.{m}() > {n}:\n        {b}.append({v})\n    else:\n        logger.debug(\"skip %s\", {v})\n",
    "with open({a}, \"rb\") as fh:\n    for {v} in fh:\n        {b} += len({v})\n        if {b} > {n}:\n            break\n",
    "@pytest.mark.parametrize(\"{a}\", [{n}, {n2}, 0])\ndef test_{f}({a}):\n    assert {f}({a}) == {a} * 2\n",
)
_TS_TEMPLATES = (
    "export function {f}({a}: string, {b} = {n}): number {{\n  const {v} = {a}.split(\"\\n\");\n"
    "  return {v}.filter((x) => x.length > {b}).length;\n}}\n",
    "export async function {f}({a}: {C}): Promise<void> {{\n  const {v} = await fetch(`/api/{a}`);\n"
    "  if (!{v}.ok) throw new Error(`{f} failed: ${{{v}.status}}`);\n}}\n",
    "interface {C} {{\n  {a}: string;\n  {b}?: number;\n  {v}: readonly string[];\n}}\n",
)
_GO_TEMPLATES = (
    "func {F}({a} string, {b} int) (int, error) {{\n\tif {b} > {n} {{\n\t\treturn 0, fmt.Errorf(\"{f}: too large\")\n\t}}\n"
    "\treturn len({a}) + {b}, nil\n}}\n",
)

_LOG_TEMPLATES = (
    "2024-05-29T12:{mm:02d}:{ss:02d}.{ms:03d}Z INFO  [worker-{w}] processed {n} {noun}s in {n2} ms",
    "2024-05-29T12:{mm:02d}:{ss:02d}.{ms:03d}Z WARN  [worker-{w}] {noun} {verb} after {n2} ms, retrying",
    "tests/test_{id}.py::test_{f}_{id2} PASSED",
    "tests/test_{id}.py::test_{f}_{id2} FAILED",
    "  File \"{file}\", line {n}, in {f}",
    "npm WARN deprecated {id}@{n}.{w}.0: use {id2} instead",
    "{file}:{n}:{w}: warning: unused variable '{id}'",
    "$ git diff --stat\n {file} | {n} ++++---",
)

_NAMES_ZH_FAMILY = ("王", "李", "张", "刘", "陈", "杨", "黄", "赵", "周", "吴", "徐", "孙", "马", "朱", "胡")
_NAMES_ZH_GIVEN = ("伟", "芳", "娜", "敏", "静", "强", "磊", "洋", "艳", "勇", "军", "杰", "娟", "涛", "明", "超", "霞", "平", "刚", "桂英")
_NAMES_EN = ("alice", "bob", "carol", "dmitri", "erin", "farid", "grace", "hiro", "ines", "jonas", "kaya", "liam")
_STATES = ("open", "closed", "merged", "draft")


def name_zh(rng: random.Random, given: int = 1) -> str:
    """A Chinese personal name: a family name and ``given`` given-name parts."""
    return rng.choice(_NAMES_ZH_FAMILY) + "".join(rng.choice(_NAMES_ZH_GIVEN) for _ in range(given))


def clip_utf8(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes without splitting a character."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore")


class TextPools:
    """Ready-made pieces per content kind, expanded once from the vocabularies with ``rng``.

    ``fill(kind, target)`` joins random pieces until about ``target`` UTF-8 bytes; pools are
    sized so a long tool result repeats pieces but reads like the real thing.
    """

    def __init__(self, rng: random.Random, size: int = 320) -> None:
        self.rng = rng
        self.paths = [self._path() for _ in range(64)]
        self.funcs = [f"{rng.choice(_FUNC_VERB)}_{rng.choice(_IDENT)}" for _ in range(64)]
        self.english = [self._english() for _ in range(size)]
        self.chinese = [self._chinese() for _ in range(size)]
        self.code = [self._code() for _ in range(size // 2)]
        self.json_records = [self._json_record() for _ in range(size)]
        self.logs = [self._log() for _ in range(size)]
        self.code_lines = [line for block in self.code for line in block.splitlines() if line.strip()]
        # Byte lengths computed once, so filling never re-encodes a piece.
        self._sizes = {
            name: [len(p.encode()) for p in getattr(self, name)]
            for name in ("english", "chinese", "code", "json_records", "logs")
        }

    # -- single pieces ------------------------------------------------------------------------

    def _path(self) -> str:
        rng = self.rng
        return f"{rng.choice(_DIRS)}/{rng.choice(_IDENT)}_{rng.choice(_IDENT)}{rng.choice(_EXTS)}"

    def path(self) -> str:
        """A source file path from this session's set of files."""
        return self.rng.choice(self.paths)

    def func(self) -> str:
        """A function name from this session's set of functions."""
        return self.rng.choice(self.funcs)

    def _english(self) -> str:
        rng = self.rng
        return rng.choice(_EN_TEMPLATES).format(
            adj=rng.choice(_EN_ADJ), noun=rng.choice(_EN_NOUN), noun2=rng.choice(_EN_NOUN),
            noun3=rng.choice(_EN_NOUN), verb=rng.choice(_EN_VERB), gerund=rng.choice(_EN_GERUND),
            file=self.path(), func=self.func(), num=rng.randrange(2, 5000),
        )

    def _chinese(self) -> str:
        rng = self.rng
        return rng.choice(_ZH_TEMPLATES).format(
            subj=rng.choice(_ZH_SUBJ), subj2=rng.choice(_ZH_SUBJ), verb=rng.choice(_ZH_VERB),
            obj=rng.choice(_ZH_OBJ), cause=rng.choice(_ZH_CAUSE), fix=rng.choice(_ZH_FIX),
            num=rng.randrange(2, 500), file=self.path(),
        )

    def _code(self) -> str:
        rng = self.rng
        family = rng.choices((_PY_TEMPLATES, _TS_TEMPLATES, _GO_TEMPLATES), weights=(6, 3, 1))[0]
        a, b, v, m = rng.sample(_IDENT, 4)
        f = self.func()
        return rng.choice(family).format(
            f=f, F=f.title().replace("_", ""), a=a, b=b, v=v, m=m, C=a.title() + v.title(),
            t=rng.choice(_TYPES_PY), t2=rng.choice(_TYPES_PY), n=rng.randrange(1, 4096),
            n2=rng.randrange(1, 4096), doc=self._english()[:72].rstrip(),
        )

    def _json_record(self) -> str:
        rng = self.rng
        shape = rng.randrange(3)
        if shape == 0:
            record = {
                "number": rng.randrange(1, 9000), "title": self._english()[:64].rstrip(),
                "state": rng.choice(_STATES), "labels": rng.sample(_EN_NOUN, rng.randrange(0, 4)),
                "author": rng.choice(_NAMES_EN), "comments": rng.randrange(0, 40),
                "updated_at": f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z",
            }
        elif shape == 1:
            record = {
                "path": self.path(), "size": rng.randrange(10, 200_000), "mode": rng.choice(("0644", "0755", "0600")),
                "sha": f"{rng.getrandbits(160):040x}",
            }
        else:
            record = {
                "service": f"{rng.choice(PROJECTS)}-{rng.choice(('api', 'worker', 'web', 'db'))}",
                "p50_ms": rng.randrange(1, 300), "p99_ms": rng.randrange(300, 5000),
                "errors": rng.randrange(0, 50), "region": rng.choice(("eu-west-1", "us-east-2", "ap-east-1")),
                "note": self._chinese() if rng.random() < 0.2 else "",
            }
        return msgspec.json.encode(record).decode()

    def _log(self) -> str:
        rng = self.rng
        return rng.choice(_LOG_TEMPLATES).format(
            mm=rng.randrange(60), ss=rng.randrange(60), ms=rng.randrange(1000), w=rng.randrange(1, 9),
            n=rng.randrange(1, 2000), n2=rng.randrange(1, 9000), noun=rng.choice(_EN_NOUN),
            verb=rng.choice(_EN_VERB), id=rng.choice(_IDENT), id2=rng.choice(_IDENT), f=self.func(),
            file=self.path(),
        )

    def project(self) -> str:
        """A project code name."""
        return self.rng.choice(PROJECTS)

    # -- filling ------------------------------------------------------------------------------

    def pick(self, pool: str, target: int) -> list[str]:
        """Pick random pieces of ``pool`` until their bytes reach ``target`` (at least one piece)."""
        pieces: Sequence[str] = getattr(self, pool)
        sizes = self._sizes[pool]
        rng = self.rng
        out: list[str] = []
        total = 0
        n = len(pieces)
        while True:
            # Draw in batches: one choices() call is far cheaper than one choice() per piece.
            for index in rng.choices(range(n), k=max(4, target // 80 + 1)):
                out.append(pieces[index])
                total += sizes[index] + 1
                if total >= target:
                    return out

    def fill(self, kind: str, target: int) -> list[str]:
        """Return pieces of ``kind`` (english, chinese, code, logs) adding up to about ``target`` bytes."""
        pool = {"english": "english", "chinese": "chinese", "code": "code", "logs": "logs"}[kind]
        return self.pick(pool, target)

    def prose(self, lang: str, target: int) -> str:
        """Paragraphs of English or Chinese prose of about ``target`` bytes."""
        pieces = self.fill(lang, target)
        joiner = " " if lang == "english" else ""
        paragraphs = [joiner.join(pieces[i : i + 5]) for i in range(0, len(pieces), 5)]
        return "\n\n".join(paragraphs)

    def json_document(self, target: int, limit: int, extra: Sequence[str] = ()) -> str:
        """A valid JSON tool response of about ``target`` bytes and never more than ``limit``.

        ``extra`` are pre-encoded JSON values placed among the items (planted facts).
        """
        head = f'{{"status":"ok","page":{self.rng.randrange(1, 9)},"items":['
        tail = "]}"
        budget = limit - len(head.encode()) - len(tail) - sum(len(e.encode()) + 1 for e in extra)
        items: list[str] = []
        used = 0
        for piece in self.pick("json_records", max(1, min(target, budget))):
            size = len(piece.encode()) + 1
            if used + size > budget:
                break
            items.append(piece)
            used += size
        for value in extra:
            items.insert(self.rng.randrange(len(items) + 1), value)
        return head + ",".join(items) + tail
