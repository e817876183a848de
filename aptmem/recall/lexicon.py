"""A small shipped lexicon of relation words, English and Chinese, for query expansion.

A question about a fact rarely repeats the words the fact was stated in: "which route does the
load balancer probe?" asks about "the health check endpoint", "上线从哪个分支切" about "the release
branch". Keyword search then matches only the subject (a service name), and every short record
naming the subject (a tool call, a session title) ranks above the statement. Classic thesaurus
expansion (Voorhees, 1994) adds, for each relation word of the question, the other words of its
group, OR-ed into the query: the rare subject still selects the records, the group's words rank
them. The groups are bilingual, so they also bridge a Chinese question to an English statement
(and back) without a dictionary dependency.

The groups are everyday software-engineering vocabulary (configuration, addresses, branches,
commits, tickets, versions, endpoints and health, preferences, decisions and reasons, owners,
dates, errors, deploys, ...). They are deliberately few and narrow: a group joins words a
maintainer would accept as "asking about the same thing"; words with many senses ("line", "set")
are left out. Said plainly: they were written by an engineer who had read the recall benchmark's
question templates, so its ``held_out`` split flatters them; the ``fresh`` split (questions
written before the lexicon) and the other generators are the figures to quote.

:func:`expansions` returns, for a question, the groups it touches and the terms to add: each an
analyzed token sequence (a Chinese word becomes its bigrams, searched as a phrase), followed by
the translations of the CC-CEDICT bridge (:func:`translations`, :mod:`aptmem.recall.bridge`; none
without the ``recall-crosslingual`` extra): the groups hold what a dictionary gets wrong for
software ("commit" is not 说死), the dictionary the words no group holds.
"""

from __future__ import annotations

import re

from aptmem.recall.analyze import EN_STOP_WORDS, cjk_bigrams, is_cjk, query_tokens
from aptmem.recall.bridge import chinese, chinese_words, english

__all__ = ["GROUPS", "LEXICON_VERSION", "expansions", "group_expansions", "synonyms", "translations"]

#: Changes whenever the groups change (recorded with benchmark figures).
LEXICON_VERSION = "1"

#: Each group: words that ask about one relation, English (lowercase, one word each) and Chinese.
GROUPS: tuple[tuple[str, ...], ...] = (
    # addresses and connections
    ("address", "host", "hostname", "port", "dsn", "connection", "connect", "connects", "uri", "url", "server",
     "地址", "主机", "端口", "连接", "连接串", "服务器"),
    # endpoints and routes of an API
    ("endpoint", "route", "url", "uri", "接口", "端点", "路由", "网址"),  # not "api": a part of many service names
    # health and liveness
    ("health", "healthy", "healthz", "healthcheck", "liveness", "readiness", "alive", "probe", "heartbeat",
     "健康", "健康检查", "存活", "探针", "探测", "心跳"),
    # branches and releases
    ("branch", "branches", "hotfix", "ship", "ships", "shipping", "trunk", "分支", "热修复", "主干", "出包"),
    ("release", "releases", "ship", "ships", "shipping", "launch", "发布", "上线", "发版", "发行版"),
    # commits and changes
    ("commit", "commits", "hash", "sha", "revision", "changeset", "cherry", "提交", "改动", "补丁", "哈希"),
    ("fix", "fixed", "fixes", "repair", "repaired", "resolved", "solved", "sorted", "修复", "修好", "解决", "修了"),
    # tickets and issues
    ("ticket", "tickets", "issue", "issues", "jira", "filed", "tracks", "tracked", "tracking", "followed",
     "工单", "编号", "跟踪", "跟进", "登记", "问题单"),
    # versions and pins
    ("version", "versions", "pin", "pins", "pinned", "locked", "lock", "upgrade", "downgrade",
     "版本", "固定", "锁定", "升级", "降级", "几版"),
    # preferences and habits
    ("prefer", "prefers", "preferred", "preference", "preferences", "likes", "wants", "wish", "wishes", "style", "habit",
     "habits", "convention", "conventions", "偏好", "喜欢", "希望", "习惯", "风格", "要求"),
    # decisions and choices
    ("decide", "decided", "decision", "decisions", "chose", "choose", "chosen", "choice", "picked", "settled", "adopt",
     "adopted", "决定", "选择", "选型", "选用", "采用", "定了"),
    ("instead", "rather", "rejected", "alternative", "而不是", "放弃", "替代"),
    # reasons
    ("why", "because", "reason", "reasons", "reasoning", "rationale", "因为", "原因", "理由", "为什么"),
    # environments
    ("staging", "stage", "预发", "预发布"),
    ("production", "prod", "生产", "线上"),
    ("dev", "development", "开发"),
    # credentials
    ("password", "secret", "secrets", "credential", "credentials", "token", "apikey", "密码", "密钥", "凭证", "令牌"),
    # ownership
    ("owner", "owns", "owned", "maintainer", "maintains", "responsible", "负责人", "负责", "维护"),
    # dates and deadlines
    ("deadline", "due", "date", "scheduled", "截止", "日期", "期限"),
    # failures
    ("error", "errors", "crash", "crashes", "failure", "fails", "failing", "exception", "bug", "bugs",
     "错误", "崩溃", "失败", "异常", "故障"),
    # deploys
    ("deploy", "deployed", "deployment", "rollout", "部署", "发布", "上线"),
    # configuration
    ("config", "configuration", "setting", "settings", "option", "options", "配置", "设置", "选项"),
    # databases and storage
    ("database", "db", "postgres", "postgresql", "mysql", "sqlite", "数据库"),
    # dependencies and libraries
    ("dependency", "dependencies", "library", "package", "requirement", "依赖", "依赖库"),
)

_LATIN = re.compile(r"[a-z0-9]+")


def _word_groups() -> dict[str, list[int]]:
    """Word -> the numbers of the groups holding it."""
    index: dict[str, list[int]] = {}
    for n, group in enumerate(GROUPS):
        for word in group:
            index.setdefault(word, []).append(n)
    return index


_INDEX = _word_groups()
_CJK_WORDS = sorted((w for w in _INDEX if is_cjk(w[0])), key=len, reverse=True)


_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# An identifier, ASCII only (unlike analyze.IDENTIFIER, a Latin word written against a Chinese one, 服务的logo, stays a word
# to translate): letters and digits joined by separators, or a word holding a digit or an inner capital.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[-_./:@#][A-Za-z0-9]+)+|\b\w*(?:\d|[a-z][A-Z])\w*")
_ALONE = re.compile(r"[A-Za-z]+")


def translations(question: str) -> list[tuple[str, ...]]:
    """The terms the dictionary bridge (:mod:`aptmem.recall.bridge`) adds to ``question``, as token sequences.

    Each Chinese word of the question gives its English words, each English content word (3 or
    more letters, not a stop word) its Chinese headwords (as bigram phrases). () without the dictionary.
    """
    out: dict[tuple[str, ...], None] = {}
    for run in _CJK_RUN.findall(question):
        for _, word in chinese_words(run):
            if query_tokens(word):
                for en in english(word):
                    out.setdefault((en,), None)
    # Only words standing alone: a part of an identifier ("kestrel" of kestrel-api) names a thing, it means nothing.
    for word in _ALONE.findall(_IDENTIFIER.sub(" ", question)):
        word = word.lower()
        if len(word) >= 3 and word not in EN_STOP_WORDS:
            for zh in chinese(word):
                out.setdefault(tuple(cjk_bigrams(zh)), None)
    return list(out)


def expansions(question: str) -> list[tuple[str, ...]]:
    """The terms the lexicon and the dictionary bridge add to ``question``: each a token sequence (a phrase),
    words already asked left out: :func:`group_expansions`, then the bridge's :func:`translations`."""
    out = dict.fromkeys(group_expansions(question))
    latin = set(_LATIN.findall(question.lower()))
    for term in translations(question):
        if not (len(term) == 1 and term[0] in latin):
            out.setdefault(term, None)
    return list(out)


def group_expansions(question: str) -> list[tuple[str, ...]]:
    """The terms the lexicon's groups add to ``question``: each a token sequence (a phrase), words already asked left out.

    A group is touched when the question holds one of its English words (as a whole lowercase
    word) or one of its Chinese words (as a substring). Every other word of a touched group is
    added once.
    """
    low = question.lower()
    latin = set(_LATIN.findall(low))
    asked: set[str] = {w for w in latin if w in _INDEX}
    asked.update(w for w in _CJK_WORDS if w in question)
    groups = sorted({n for w in asked for n in _INDEX[w]})
    out: dict[tuple[str, ...], None] = {}
    for n in groups:
        for word in GROUPS[n]:
            if word in asked or word in latin:
                continue
            out.setdefault(tuple(cjk_bigrams(word)) if is_cjk(word[0]) else (word,), None)
    return list(out)


def synonyms(word: str) -> tuple[str, ...]:
    """The other words of every group holding ``word`` (lowercase English or Chinese); () if none does."""
    return tuple(dict.fromkeys(w for n in _INDEX.get(word, ()) for w in GROUPS[n] if w != word))
