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
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

__all__ = ["ANSWER_TYPES", "AnswerType", "asked_types", "holds_any", "holds_type", "text_words"]


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


#: The answer types (see the module docstring). An English cue is a word start ("connect" covers
#: "connects", "connection"), or with a trailing ``$`` a whole word ("port$" is not "portable").
ANSWER_TYPES: tuple[AnswerType, ...] = (
    AnswerType(
        name="address",
        cues_en=("address", "host", "port$", "ports$", "url$", "urls$", "uri$", "dsn", "connect", "server", "socket",
                 "ip$", "broker"),
        cues_zh=("地址", "主机", "端口", "连接", "服务器"),
        marks=("://",),  # scheme://...
        # host.domain:port, or a host's full name (three labels or more, the last one letters: db-1.eu.internal).
        shape=r"\.[A-Za-z][\w-]*:\d{2,5}\b|\b[A-Za-z0-9][\w-]*\.[\w-]+\.[A-Za-z]{2,}\b", needs=(".",),
    ),
    AnswerType(
        name="route",
        cues_en=("route", "path$", "paths$", "endpoint", "url$", "urls$", "uri$", "request", "probe", "http", "curl",
                 "monitor", "liveness", "readiness"),
        cues_zh=("路径", "路由", "接口", "端点", "网址", "请求", "探测", "探针", "监控"),
        shape=r"(?<![\w/.:])/[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~{}:-]+)+", needs=("/",),
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
        cues_en=("commit", "hash", "sha$", "sha1", "revision", "changeset", "cherry", "revert", "bisect", "change$"),
        cues_zh=("提交", "哈希", "改动", "补丁", "回退"),
        shape=r"(?<![\w=])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",
    ),
    AnswerType(
        name="ticket",
        cues_en=("ticket", "issue", "jira", "tracker", "id$", "ids$", "number$", "reference", "bug$"),
        cues_zh=("工单", "编号", "问题单", "单号"),
        shape=r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b|(?<![\w&])#\d{1,6}\b", needs=("-", "#"),
    ),
    AnswerType(
        name="version",
        cues_en=("version", "pin$", "pins$", "pinned", "lock$", "locked", "upgrade", "downgrade", "number$",
                 "constraint", "requirement"),
        cues_zh=("版本", "几版", "固定", "锁定", "升级", "降级"),
        shape=r"\b\d+\.\d+(?:\.\d+)+\b|(?:==|>=|<=|~=|\^)\s?\d+(?:\.\d+)+", needs=(".",),
    ),
    AnswerType(
        name="person",
        cues_en=("who$", "whom$", "whose$", "owner", "owns$", "assignee", "assigned", "maintainer", "responsible",
                 "contact", "reviewer"),
        cues_zh=("谁", "哪位", "负责人"),
        # A handle (@name) or a full name written with capitals (two words or more).
        shape=r"(?<![\w@])@[A-Za-z][\w.-]*\w|\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b",
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
)


def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for English cues: ``stem`` matches a word starting with it, ``word$`` the whole word only."""
    parts = [re.escape(c[:-1]) + r"\b" if c.endswith("$") else re.escape(c) for c in cues]
    return re.compile(r"\b(?:" + "|".join(parts) + ")")


_COMPILED = tuple((t, _cue_pattern(t.cues_en), re.compile(t.shape) if t.shape else None) for t in ANSWER_TYPES)
_WORDS = re.compile(r"[^\W_]+")


@lru_cache(maxsize=4096)
def asked_types(question: str) -> tuple[str, ...]:
    """The names of the answer types ``question`` asks for (see :data:`ANSWER_TYPES`), in their order; () for none."""
    low = question.lower()
    return tuple(t.name for t, cue, _ in _COMPILED if cue.search(low) or any(w in question for w in t.cues_zh))


def text_words(text: str) -> frozenset[str]:
    """The lowercase words of ``text`` (letters and digits), as :func:`holds_type` counts them."""
    return frozenset(_WORDS.findall(text.lower()))


def _holds(kind: AnswerType, shape: re.Pattern[str] | None, text: str, low: str, words: frozenset[str]) -> bool:
    # Cheapest first: word lookups, substrings, and the regular expression only where it can match.
    if not kind.words.isdisjoint(words) or any(m in low for m in kind.marks):
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
    return any(_holds(t, shape, text, low, seen) for t, _, shape in _COMPILED)
