"""Answer types: what shape of value a question asks for, and whether a text holds one.

A question about a fact names its subject and asks for a value: an address, a route, a branch,
a commit, a ticket, a version, a reason. When it is worded without the words the fact was stated
in, keyword search finds the subject's records but cannot tell the one that states the value
from the ones that merely name the subject (a tool call, a session title) or state another of
its facts. The classic remedy of question answering systems is answer-type checking (Prager et
al., 2000, "predictive annotation"; Moldovan et al., 2000): classify the question by the type of
its expected answer from its cue words, and prefer passages that hold an entity of that type.

Here a type is a pair: *cues*, words of a question that ask for the type (English words matched
as whole words or as a word's start, Chinese words as substrings), and a *shape*, a regular
expression a value of the type matches. The cue lists are general software-engineering
vocabulary for each kind of value (what one calls an address, a route, a branch, ...), and the
shapes the usual written forms of such values.
A question may ask for several types (a "URL" is an address or a route); a text holds a
question's type when it holds a value of one of them. The keyword rerank counts that as one
more covered concept, and for a question that names no type, a value of any type as half a
concept (:mod:`aptmem.recall.rerank`): a record that states something about the subject beats
one that only names it.

Said plainly: the types are the kinds of value the recall benchmark plants (its facts are
addresses, branches, commits, tickets, routes, version pins, decisions with reasons), and the
cue lists were written after its development splits' wordings had been read; words that only
those wordings use for a type ("dial", "landed", "frozen", "argument", ...) were left out on
purpose, so the splits still test cue words the lists do not hold.

The quantity, schedule, time, place and channel types (issue 15) and the cues added to the older
types (links, migrations, digests) were written after reading the questions the memory-quality
benchmark's development generators lost (oncall, tracker, independent, pairing): their cues are each
language's interrogatives and the usual names of those kinds of value, and the words only those
questions used ("ceiling", "plate", "dumped", "woken") were left out; "how far" and "region" are in
them. The held-out generators (firmware and later) are the figures to quote.

Each value of a type in a record is also marked in the index (:func:`marked`), so that keyword search
can look for a question's terms near a value of the type it asks for (``fts``'s typed ranking).
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from aptmem.recall.bridge import chinese_name_ends

__all__ = ["ANSWER_TYPES", "ANY_MARKERS", "AnswerType", "asked_types", "holds_any", "holds_type", "marked", "marker", "text_words"]


class AnswerType(msgspec.Struct, frozen=True, kw_only=True):
    """One type of answer: its name, the cue words that ask for it, the shape of its values."""

    name: str
    #: English cue stems, lowercase: a question word starting with one of them asks for the type.
    cues_en: tuple[str, ...]
    #: Chinese cue words: a question holding one as a substring asks for the type.
    cues_zh: tuple[str, ...]
    #: A regular expression (searched, case-sensitive) a value of the type matches; "" for none.
    shape: str = ""
    #: The regular expression runs only on a text holding one of these substrings (none: always).
    needs: tuple[str, ...] = ()
    #: Lowercase words, any of which in a text is a value of the type (a text's words are counted once).
    words: frozenset[str] = frozenset()
    #: Substrings (lowercase English phrases, Chinese words), any of which in a lowercased text is one.
    marks: tuple[str, ...] = ()
    #: Chinese cue words that ask for the type only when no cue of another type is in the question.
    vague_zh: tuple[str, ...] = ()
    #: Whether a Chinese personal name is a value of the type (:func:`~aptmem.recall.bridge.chinese_name_ends`).
    cjk_names: bool = False
    #: Whether a value of the type, in a record, says the record states a fact (:func:`holds_any`). Numbers
    #: with units, clock times and dates stand in nearly every log line and table row, so they say nothing
    #: of a record unless a question asks for them.
    any_value: bool = True


#: The answer types (see the module docstring). A shape starts with the character class of its values' first
#: character and looks behind only after it (``#(?<!\w#)``, not ``(?<!\w)#``): the regular expression engine then
#: skips to the positions where that class matches, several times faster over a whole index (:func:`marked`). An English cue is a word start ("connect" covers
#: "connects", "connection"), or with a trailing ``$`` a whole word ("port$" is not "portable").
ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType(
        name="address",
        cues_en=("address", "host", "port$", "ports$", "url$", "urls$", "uri$", "dsn", "connect", "server", "socket",
                 "ip$", "broker", "link", "runbook", "playbook", "wiki", "doc$", "docs$", "documentation", "page$"),
        cues_zh=("地址", "主机", "端口", "连接", "服务器", "链接", "手册", "文档", "网页", "リンク", "手順書"),
        marks=("://",),  # scheme://...
        # host.domain:port, or a host's full name (three labels or more, the last one letters: db-1.eu.internal).
        shape=r"\.[A-Za-z][\w-]*:\d{2,5}\b|\b[A-Za-z0-9][\w-]*\.[\w-]+\.[A-Za-z]{2,}\b", needs=(".",),
    ),
    AnswerType(
        name="route",
        cues_en=("route", "path$", "paths$", "endpoint", "url$", "urls$", "uri$", "request", "probe", "http", "curl",
                 "monitor", "liveness", "readiness"),
        cues_zh=("路径", "路由", "接口", "端点", "网址", "请求", "探测", "探针", "监控"),
        # An absolute path, or a relative one of three parts or more (a secret's path in a vault, a bucket's key).
        shape=r"/(?<![\w/.:]/)[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~{}:-]+)+|[A-Za-z](?<![\w/.:@-][A-Za-z])[\w.-]*(?:/[\w.-]+){2,}",
        needs=("/",),
    ),
    AnswerType(
        name="branch",
        cues_en=("branch", "checkout", "merge", "rebase", "trunk", "mainline"),
        cues_zh=("分支", "主干", "合并"),
        shape=r"\b(?:release|releases|feature|features|hotfix|bugfix|support|stable)/[\w.-]", needs=("/",),
        words=frozenset({"main", "master", "trunk", "develop"}),
    ),
    AnswerType(
        name="commit",
        cues_en=("commit", "hash", "sha$", "sha1", "revision", "changeset", "cherry", "revert", "bisect", "change$",
                 "digest", "checksum"),
        cues_zh=("提交", "哈希", "改动", "补丁", "回退", "摘要", "校验和"),
        shape=r"(?<![\w=])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",
    ),
    AnswerType(
        name="ticket",
        cues_en=("ticket", "issue", "jira", "tracker", "id$", "ids$", "number$", "reference", "bug$"),
        cues_zh=("工单", "编号", "问题单", "单号"),
        shape=r"[A-Z](?<!\w[A-Z])[A-Z0-9]{1,9}-\d{1,6}\b|#(?<![\w&]#)\d{1,6}\b", needs=("-", "#"),
    ),
    AnswerType(
        name="version",
        cues_en=("version", "pin$", "pins$", "pinned", "lock$", "locked", "upgrade", "downgrade", "number$",
                 "constraint", "requirement", "schema"),
        cues_zh=("版本", "几版", "固定", "锁定", "升级", "降级", "バージョン", "マイグレーション"),
        # A dotted version, a pinned requirement, or a migration's id (a timestamp and a name: Rails, Django,
        # Alembic and Flyway write them so).
        shape=r"\b\d+\.\d+(?:\.\d+)+\b|(?:==|>=|<=|~=|\^)\s?\d+(?:\.\d+)+|\b[Vv]?\d{8,14}(?:_\d+)*_[A-Za-z]\w*",
        needs=(".", "_"),
    ),
    AnswerType(
        name="person",
        cues_en=("who$", "whom$", "whose$", "owner", "owns$", "assignee", "assigned", "maintainer", "responsible",
                 "contact", "reviewer"),
        cues_zh=("谁", "哪位", "负责人"),
        # A handle (@name) or a full name written with capitals (two words or more).
        shape=r"@(?<![\w@]@)[A-Za-z][\w.-]*\w|[A-Z](?<!\w[A-Z])[a-z]+(?: [A-Z][a-z]+)+\b",
        cjk_names=True,
    ),
    AnswerType(
        name="preference",
        cues_en=("prefer", "like$", "likes$", "liking", "want$", "wants$", "wish", "style", "habit", "convention",
                 "taste"),
        cues_zh=("偏好", "喜欢", "希望", "习惯", "风格", "要求"),
        words=frozenset({"prefer", "prefers", "preferred", "preference", "like", "likes", "want", "wants", "always", "never"}),
        marks=("偏好", "喜欢", "习惯", "希望"),
    ),
    AnswerType(
        name="reason",
        cues_en=("why$", "reason", "rationale", "justif", "motivat"),
        cues_zh=("为什么", "为何", "原因", "理由"),
        words=frozenset({"because", "since"}),
        marks=("due to", "so that", "in order to", "因为", "由于", "为了"),
    ),
    AnswerType(
        name="place",
        cues_en=("where$", "region", "zone$", "zones$", "datacenter", "data center", "located", "location", "wo$",
                 "wohin$", "dónde", "adónde", "où$", "dove$"),
        cues_zh=("哪里", "哪儿", "在哪", "区域", "地域", "机房", "可用区", "どこ", "リージョン", "ゾーン"),
        # A cloud region or zone as the providers name them (us-east-1, europe-west4, eu-north-1a).
        shape=r"\b(?:us|eu|ap|sa|ca|me|af|il|mx|cn|europe|asia|australia|northamerica|southamerica|africa)-"
              r"(?:north|south|east|west|central|northeast|northwest|southeast|southwest)-?\d{1,2}[a-z]?\b",
        needs=("north", "south", "east", "west", "central"),
    ),
    AnswerType(
        name="channel",
        cues_en=("channel", "slack", "room$", "where$", "wohin$", "dónde", "adónde", "où$"),
        cues_zh=("频道", "群", "チャンネル", "哪里", "在哪", "どこ"),
        # A chat channel (#ops-alerts): a # and a lowercase name with a letter first, not a ticket (#123) or a heading.
        shape=r"#(?<![\w&#/]#)[a-z][a-z0-9_.-]*[a-z0-9]\b", needs=("#",),
    ),
    # The numeric and temporal classes of question answering's answer taxonomies (Li and Roth, 2002: NUM:count,
    # NUM:perc, NUM:period, NUM:date...), as software writes their values. Their cues are each language's
    # interrogatives for an amount, a frequency or a time ("how much", "wie viel", "cuánto", "多少", "いくつ";
    # "how often"; "when", "wann", "いつ") and the nouns that name an amount (a limit, a threshold, a size):
    # a question asked in other words than the statement still asks "how much" or "when" in some language.
    AnswerType(
        name="quantity",
        cues_en=("how much", "how many", "how big", "how large", "how high", "how far", "how fast", "how long",
                 "limit", "maximum", "max$", "minimum", "threshold", "quota", "capacity", "size$", "sizes$", "percent",
                 "ratio$", "rate$", "rates$", "budget", "timeout", "latency", "amount", "count$",
                 "wie viel", "wie hoch", "wie groß", "wie gross", "wie lange", "wie schnell", "wie weit",
                 "cuánto", "cuánta", "cuántos", "cuántas", "combien", "quanto", "quanta", "quanti", "quante"),
        cues_zh=("多大", "多高", "多快", "多长", "多久", "上限", "下限", "阈值", "限额", "配额", "比例", "百分",
                 "いくつ", "いくら", "どのくらい", "どれくらい", "どれだけ", "何パーセント", "割合", "しきい値", "閾値"),
        # 多少 asks "how much" as often as "which value" (版本是多少: which version): only when nothing else is asked.
        vague_zh=("多少",),
        # A number with a unit: a percentage, bytes (binary or decimal), a duration, a rate, a multiple.
        shape=r"\d(?<![A-Za-z0-9_.]\d)\d*(?:[.,]\d+)?(?=\s?[%秒分小天次倍个KMGTPEkbmµunsdhrqxcv/])\s?(?:%|秒|分钟|小时|天|次|倍|个|(?:[KMGTPE]i?B|[KMGTPE]i|[kKMGT]b|bytes?"
              r"|ms|µs|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|rps|qps|x|cores?|vcpus?|req/s|/s|/min|/h)\b)"
              # or one whose unit is its key's last part (TIMEOUT_MS=8000, max_memory_mb: 512)
              r"|(?i:[_-](?:ms|sec|secs|seconds|s|mb|gb|kb|mib|gib|bytes|pct|percent))[\"']?\s*[=:]\s*[\"']?\d+",
        any_value=False,
    ),
    AnswerType(
        name="schedule",
        cues_en=("how often", "schedule", "frequency", "interval", "cron", "periodic", "recurr", "wie oft", "zeitplan",
                 "intervall", "frecuencia", "cada cuánto", "horario", "fréquence", "combien de fois", "ogni quanto"),
        cues_zh=("频率", "多久一次", "周期", "定时", "计划任务", "頻度", "スケジュール", "間隔", "定期", "何分ごと", "何時間ごと"),
        # A cron expression (five fields, one a step or a wildcard), or "every N <unit>".
        shape=r"(?<![\w/*])(?=[\d*/, -]{0,40}?[*/])[\d*/,-]+(?: +[\d*/,-]+){4}(?![\w/])|\bevery \d+ ?\w+|@(?:hourly|daily|weekly|monthly)\b",
        needs=("*", "every", "@"),
        words=frozenset({"hourly", "daily", "nightly", "weekly", "monthly"}),
        any_value=False,
    ),
    AnswerType(
        name="time",
        cues_en=("when$", "what time", "date$", "dates$", "deadline", "window$", "wann$", "cuándo", "quand$", "quando$"),
        cues_zh=("什么时候", "何时", "几点", "哪天", "日期", "时间窗", "时段", "いつ", "何時", "何日", "日時", "時間帯"),
        # A clock time (23:45) or an ISO date (2024-05-22).
        shape=r"\d(?<!\d\d)(?:\d?:[0-5]\d(?!\d)|\d{3}-\d\d-\d\d\b)",
        needs=(":", "-"),
        any_value=False,
    ),
)


def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for English cues: ``stem`` matches a word starting with it, ``word$`` the whole word only."""
    parts = [re.escape(c[:-1]) + r"\b" if c.endswith("$") else re.escape(c) for c in cues]
    return re.compile(r"\b(?:" + "|".join(parts) + ")")


#: A type's value words as one pattern of whole words (read only where one of them is a substring).
_WORD_PATTERNS = {t.name: re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(t.words))) + r")\b")
                  for t in ANSWER_TYPES if t.words}
_COMPILED = tuple((t, _cue_pattern(t.cues_en), re.compile(t.shape) if t.shape else None) for t in ANSWER_TYPES)
_WORDS = re.compile(r"[^\W_]+")


@lru_cache(maxsize=4096)
def asked_types(question: str) -> tuple[str, ...]:
    """The names of the answer types ``question`` asks for (see :data:`ANSWER_TYPES`), in their order; () for none."""
    low = question.lower()
    asked = tuple(t.name for t, cue, _ in _COMPILED if cue.search(low) or any(w in question for w in t.cues_zh))
    return asked or tuple(t.name for t, _, _ in _COMPILED if any(w in question for w in t.vague_zh))


def text_words(text: str) -> frozenset[str]:
    """The lowercase words of ``text`` (letters and digits), as :func:`holds_type` counts them."""
    return frozenset(_WORDS.findall(text.lower()))


def _holds(kind: AnswerType, shape: re.Pattern[str] | None, text: str, low: str, words: frozenset[str]) -> bool:
    # Cheapest first: word lookups, substrings, and the regular expression only where it can match.
    if not kind.words.isdisjoint(words) or any(m in low for m in kind.marks):
        return True
    if kind.cjk_names and not text.isascii() and chinese_name_ends(text):
        return True
    return shape is not None and (not kind.needs or any(n in text for n in kind.needs)) and shape.search(text) is not None


def holds_type(types: tuple[str, ...], text: str, words: frozenset[str] | None = None) -> bool:
    """Whether ``text`` holds a value of one of the answer types named ``types`` (``words``: its :func:`text_words`, if known)."""
    if not types:
        return False
    low = text.lower()
    seen = text_words(text) if words is None else words
    return any(_holds(t, shape, text, low, seen) for t, _, shape in _COMPILED if t.name in types)


def holds_any(text: str, words: frozenset[str] | None = None) -> bool:
    """Whether ``text`` holds a value of any answer type (a statement of some fact, not a mere mention)."""
    low = text.lower()
    seen = text_words(text) if words is None else words
    return any(_holds(t, shape, text, low, seen) for t, _, shape in _COMPILED if t.any_value)


def marker(name: str) -> str:
    """The index token that marks a line holding a value of the answer type ``name`` (see :func:`marked`).

    No word of any language is spelled so, and it is one token to FTS5 (letters only)."""
    return f"aptmemvalue{name}"


def _value_ends(kind: AnswerType, shape: re.Pattern[str] | None, text: str, low: str) -> list[int]:
    """Where each value of ``kind`` in ``text`` ends (a word of its words, a mark, a match of its shape)."""
    pattern = _WORD_PATTERNS.get(kind.name)
    ends = [m.end() for m in pattern.finditer(low)] if pattern is not None and any(w in low for w in kind.words) else []
    for mark in kind.marks:
        at = low.find(mark)
        while at >= 0:
            ends.append(at + len(mark))
            at = low.find(mark, at + 1)
    if shape is not None and (not kind.needs or any(n in text for n in kind.needs)):
        ends.extend(m.end() for m in shape.finditer(text))
    if kind.cjk_names and not text.isascii():
        ends.extend(chinese_name_ends(text))
    return ends


#: The markers of the types whose values say a record states a fact (:func:`holds_any`, ``any_value``).
ANY_MARKERS = frozenset(marker(t.name) for t in ANSWER_TYPES if t.any_value)


#: The rest of a token after a value's end: word characters and the separators of identifiers, paths and URLs.
_TOKEN_REST = re.compile(r"[\w.\-/:@#%~+]*")


def marked(text: str) -> str:
    """``text`` with the :func:`marker` of an answer type put right after each value of that type.

    Predictive annotation (Prager et al., 2000): the index knows where a record states a value of which
    type, so a question asking for a type can search for its marker *near* its own terms (FTS5's
    ``NEAR``). A question worded otherwise than its statement often shares nothing with it but the
    subject, which a busy history names in a large share of its records, and values of a type (numbers
    with units, handles, hosts) fill its logs; a value of the kind asked a few words from the subject
    tells the statement from the many records that merely name the subject. Only the types a record
    holds at all are looked for (cheap tests first, as in :func:`holds_type`).
    """
    low = text.lower()
    inserts: dict[int, list[str]] = {}
    for kind, _, shape in _COMPILED:
        for end in _value_ends(kind, shape, text, low):
            # After the whole token the value ends in: a shape may match a prefix of it (release/x of
            # release/x-2.4, the :// of a URL), and a marker inside would cut the token the index holds.
            inserts.setdefault(_TOKEN_REST.match(text, end).end(), []).append(marker(kind.name))
    if not inserts:
        return text
    out: list[str] = []
    last = 0
    for end in sorted(inserts):
        out.append(text[last:end])
        out.append(" " + " ".join(dict.fromkeys(inserts[end])) + " ")
        last = end
    out.append(text[last:])
    return "".join(out)
