"""Statements of an entry: its text cut into the units a fact can sit in.

An agent's history says things in prose, in code comments, in log lines and inside JSON a tool
returned, in English and in Chinese. This module turns each entry into a list of statements in
plain words, whatever the carrier:

* prose is cut into sentences (a sentence ends at ``. ! ?`` before white space, at CJK full
  stops, or at a line end, so ``src/x.py:490`` and ``v8.15`` stay whole);
* a comment marker (``#``, ``//``, ``/*``, ``--``) and a log line's time stamp and level are
  taken off the front (its ``[component]`` stays, as ``component:``, since it names the subject);
* a setting line (``key = "value"``, ``KEY=value``, ``key: value``) is a statement as it stands;
* JSON (a whole tool output, or a line of it) is walked: a prose string is cut into sentences
  like any prose, and a field is a statement ``<record name> <key>: <value>`` when its key is
  unusual in the document. Fields every record of a listing repeats (``sha``, ``updated_at``)
  are its schema, not news (a key is unusual when at most a quarter of the records have it);
  a small document of one record has only unusual keys. A long document gives its rarest
  fields first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgspec

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User

__all__ = ["Statement", "entry_text", "reads_as_prose", "sentences", "statements"]

# A sentence ends at . ! ? followed by white space or the end, at CJK full stops, or at a line end.
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=\S))+(?:[.!?]+(?=\s|$)|[。！？]+|$)", re.MULTILINE)
_COMMENT = re.compile(r"^\s*(?:#+|//+|/\*+|\*+(?!\*)|--|;+|<!--)\s*|\s*(?:\*/|-->)\s*$")
_LOG_PREFIX = re.compile(
    r"^\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?\]?\s*"
    r"|^\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s*"
)
_LEVEL = re.compile(r"^(?:\[\s*)?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)(?:\s*\])?:?\s+")
_COMPONENT = re.compile(r"^\[[\w.:/@-]{1,40}\]\s*")
#: JSON object keys that name the record they sit in (the subject of its other fields).
_NAME_KEYS = ("name", "service", "project", "repo", "repository", "package", "module", "app", "host", "id",
              "key", "title", "subject", "component", "env", "environment", "branch", "user", "owner")
#: How many statements one JSON document may give (a huge listing gives its unusual ones first).
_MAX_JSON_STATEMENTS = 64
_WORDS = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]")
_SPACE = re.compile(r"\s+")
_LOCATED = re.compile(r"^\S+:\d+:")
#: A setting: a key, ``=`` or ``:``, and a literal (quoted, or one token with no call or bracket), then maybe a comment.
_SETTING = re.compile(r"""^(?:export\s+)?["']?[A-Za-z_][\w.-]*["']?\s*[=:]\s*("[^"]*"|'[^']*'|[^\s(){}\[\],;]+)\s*(?:(?:#|//).*)?$""")
_HAN = re.compile(r"[\u4e00-\u9fff]")


class Statement(msgspec.Struct, frozen=True):
    """One statement: its text and the carrier it came in (prose, comment, log, json)."""

    text: str
    carrier: str


def entry_text(entry: Entry) -> str:
    """The text of an entry worth reading for facts (a tool call: its inline result; its arguments are an action)."""
    if isinstance(entry, (User, Assistant, ToolResult)):
        return entry.content
    if isinstance(entry, ToolCall):
        return entry.result or ""
    return ""


def reads_as_prose(line: str) -> bool:
    """Whether a line says something in words, rather than being code (a comment or a log line is judged apart)."""
    symbols = sum(line.count(c) for c in "{}[]();=<>\"`")
    if symbols > max(3, len(line) // 15):
        return False
    return len(_WORDS.findall(line)) >= 3


def sentences(text: str) -> Iterator[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0).strip()
        if sentence:
            yield sentence


def statements(text: str, *, scan_chars: int = 16_000) -> Iterator[Statement]:
    """Every statement of ``text`` (see the module docstring), in order.

    A text longer than twice ``scan_chars`` is read at its head and its tail only: a summary
    needs a few lines of a 100 KB tool output, not all of them.
    """
    if len(text) > 2 * scan_chars:
        text = text[:scan_chars] + "\n" + text[-scan_chars:]
    whole = _json_value(text)
    if whole is not _NOT_JSON:
        yield from _json_statements(whole)
        return
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        value = _json_value(stripped) if stripped[0] in "{[" else _NOT_JSON
        if value is not _NOT_JSON:
            yield from _json_statements(value)
            continue
        carrier = "prose"
        bare = _COMMENT.sub("", stripped)
        if bare != stripped:
            carrier = "comment"
        logged = _LEVEL.sub("", _LOG_PREFIX.sub("", bare))
        # A log line's [component] is what it is about: it stays, as a subject.
        logged = _COMPONENT.sub(lambda m: m.group(0).strip()[1:-1] + ": ", logged)
        if logged != bare:
            carrier = "log"
        if carrier == "prose" and _SETTING.match(logged):
            yield Statement(logged, "config")  # key = literal, as config files, .env and YAML say a value
            continue
        if carrier == "prose" and (not reads_as_prose(logged) or _LOCATED.match(logged)):
            continue  # a line of code, or a grep hit or compiler message (file:line:): not statements
        for sentence in sentences(logged):
            yield Statement(sentence, carrier)


_NOT_JSON = object()


def _json_value(text: str) -> Any:
    """``text`` decoded as a JSON object or array, or ``_NOT_JSON``."""
    if not text or text[0] not in "{[":
        return _NOT_JSON
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return _NOT_JSON
    return value if isinstance(value, (dict, list)) else _NOT_JSON


def _leaves(value: Any, path: tuple[str, ...], name: str,
            records: Counter[tuple[str, ...]]) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """(key path with list positions dropped, the record's name, leaf value) of every leaf.

    ``records`` counts the objects under each key path (the records of a listing).
    """
    if isinstance(value, dict):
        records[path] += 1
        name = _record_name(value) or name
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)), name, records)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, (*path, "[]"), name, records)
    elif value is not None and not isinstance(value, bool):
        yield path, name, value


def _record_name(record: dict[str, Any]) -> str:
    """The value that names a record: a name-like key's short string value."""
    for key in _NAME_KEYS:
        value = record.get(key)
        if isinstance(value, str) and 0 < len(value) <= 80 and value.count(" ") <= 2 and "\n" not in value:
            return value  # a name, not a title or a sentence
    return ""


def _is_prose(text: str) -> bool:
    """A JSON string that is a sentence or more (not a URL, an id or a one-word label)."""
    return (text.count(" ") >= 3 and len(_WORDS.findall(text)) >= 4) or len(_HAN.findall(text)) >= 6


def _json_statements(value: Any) -> Iterator[Statement]:
    """Statements of a JSON document: its prose strings' sentences, and its unusual fields.

    Past :data:`_MAX_JSON_STATEMENTS`, the rarest fields are the ones given (a key one record of a
    listing has says more than one that many have), in document order.
    """
    records: Counter[tuple[str, ...]] = Counter()
    leaves = list(_leaves(value, (), "", records))
    # A key most records of a listing have is the listing's schema, not news; one that a quarter
    # of them at most have (one, in a lone record) says something about those records.
    frequency = Counter(path for path, _, _ in leaves)
    found: list[tuple[int, int, Statement]] = []  # (rarity, position, statement)
    for path, name, leaf in leaves:
        if isinstance(leaf, str) and _is_prose(leaf):
            for sentence in sentences(leaf):
                found.append((frequency[path], len(found), Statement(sentence, "json")))
        elif path and leaf != name and frequency[path] <= max(1, records[path[:-1]] // 4):
            key = path[-1] if path[-1] != "[]" else (path[-2] if len(path) > 1 else "")
            text = _SPACE.sub(" ", f"{name} {key}: {leaf}").strip()
            found.append((frequency[path], len(found), Statement(text, "json")))
    if len(found) > _MAX_JSON_STATEMENTS:
        found = sorted(sorted(found)[:_MAX_JSON_STATEMENTS], key=lambda f: f[1])
    for _, _, statement in found:
        yield statement
