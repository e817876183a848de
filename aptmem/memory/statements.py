"""Statements of an entry: its text cut into the units a fact can sit in.

An agent's history says things in prose, in code comments, in log lines and inside JSON a tool
returned, in English and in Chinese. This module turns each entry into a list of statements in
plain words, whatever the carrier:

* prose is cut into sentences (a sentence ends at ``. ! ?`` before white space, at CJK full
  stops, or at a line end, so ``src/x.py:490`` and ``v8.15`` stay whole);
* a comment marker (``#``, ``//``, ``/*``, ``--``) and a log line's time stamp and level are
  taken off the front (its ``[component]`` stays, as ``component:``, since it names the subject);
* a setting line (``key = "value"``, ``KEY=value``, ``key: value``) is a statement as it stands,
  about the INI/TOML ``[section]`` or the innermost YAML block key it sits under that names a
  thing (not ``services``, ``resources``, ``limits``...), with the key path below that kept
  (``billing resources.limits.memory: 900Mi``); a YAML list item of one scalar is a value of the
  key above it (``ports: - "8080:80"``);
* a unified diff is read as the files it changes (:mod:`aptmem.memory.diffs`): each setting a hunk
  changed is one ``<file's folder> <key>: old -> new`` statement, and the file's text after the
  change is read like any text, about that folder;
* a Markdown table row is one statement per cell after the first, about the first cell, named
  by its column when the table has a header row (``| orchid | Priya |`` under ``| service | owner |``
  says "orchid owner: Priya"); a row whose other cells are plain words is one statement of them all
  (a decision log's "the queue choice: Redis streams; why: we already run Redis");
* a CSV row under a CSV header line (comma-separated names, no digits-only cell, as many cells) is
  one statement per cell after the first, about the first, named by its column, like a table row;
* a tab-separated sheet is read like a table; in a key-value sheet (a column named ``setting``, ``key``,
  ``parameter``... before one named ``value``) a row says ``<subject> <key>: <value>``; a column-aligned listing
  stays one across a line of another layout, and a row whose header is out of view is skipped;
* a card's field lines (``Assignee: @kim`` under ``Issue: exports time out``) are about its title; a Prometheus
  sample (``up{job="api",instance="db-1:9187"} 1``) is read by its labels; a shortened view's marker and the torn
  lines either side of it are no statements; a sentence that only gives a reason ("Reason: ...") joins the one before;
* a ``git log`` entry (``commit <hash>`` and its indented message) is one statement that binds
  the hash to what the commit did;
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
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from aptmem.memory.diffs import ChangedFile, split_diffs
from aptmem.memory.values import values

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
#: A word: Latin letters, a Han character, a run of Hangul syllables (Korean spaces its words), a run of hiragana (a
#: particle or an ending: "は", "です") or of katakana (Japanese writes no spaces: "ボーレートは" is a word and a particle).
_WORDS = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]|[\uac00-\ud7a3]+|[\u3040-\u309f]+|[\u30a0-\u30ff]{2,}")
#: A sentence that opens by giving a reason (of the sentence before it).
_REASON_OPENS = re.compile(r"(?:reason|why|rationale|because|grund|weil|motivo|porque|raison|parce que|原因|理由|이유|왜냐하면)\b\s*[:：,]?", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
#: A grep hit or a compiler message (src/x.py:12:), not a logfmt line whose time stamp has colons (ts=2024-06-03T08:14:55Z).
_LOCATED = re.compile(r"^[^\s=]+:\d+:")
#: A setting: a key, ``=`` or ``:``, and a literal (quoted, or one token with no call or bracket), then maybe a comment.
_SETTING = re.compile(r"""^(?:export\s+)?["']?[A-Za-z_][\w.-]*(?:/[\w.-]+)?["']?\s*[=:]\s*("[^"]*"|'[^']*'|\[[^\[\]]*\]|[^\s(){}\[\],;]+)\s*(?:(?:#|//).*)?$"""
                      r"""|^[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){1,3}:\s*("[^"]*"|'[^']*'|[^\s(){}\[\],;]+)\s*$""")
#: A list item's marker (``- ``, ``* ``, ``1. ``, ``• ``) and Markdown emphasis (``**port**``, `` `5432` ``): not part of what is said.
_LIST_MARK = re.compile(r"^(?:[-+•~]|\d{1,2}[.)])\s+(?=\S)")  # (~ marks a setting a Terraform plan changes in place)
_EMPHASIS = re.compile(r"\*\*|`")
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: A logfmt line: two or more ``key=value`` pairs and nothing else (``level=info msg="listening" addr=:8443``).
_LOGFMT = re.compile(r"""^(?:[A-Za-z_][\w.-]*=(?:"[^"]*"|[^\s"]*)\s+){1,}[A-Za-z_][\w.-]*=(?:"[^"]*"|[^\s"]*)$""")
#: The title line of a card of fields (an issue tracker's or a ticket's): "Issue: search is slow", "Title: ...".
_CARD_TITLE = re.compile(r"^(?:issue|title|subject|summary|ticket|task|incident|story|bug|epic|problem|标题|问题)\s*[:：]\s*(\S.*)$",
                         re.IGNORECASE)
#: A field line of a card: a capitalised key of a few words, a colon, a value ("Assignee: @kim", "Due date: May 3").
_CARD_LINE = re.compile(r"^[A-Z][\w -]{0,30}[:：]\s+\S")
#: Where a shortened view cut an entry (:func:`aptmem.compaction.shorten.shorten_text`), with the torn line either side.
_CUT = re.compile(r"[^\n]*\n\[\.\.\. \d+ characters cut by aptmem compaction \.\.\.\]\n[^\n]*")
#: A metric sample in the Prometheus text format (a PromQL answer, a /metrics page): ``name{k="v",...} value``.
_SAMPLE = re.compile(r"""^([A-Za-z_:][\w:]*)\{((?:\s*[A-Za-z_]\w*\s*=\s*"[^"]*"\s*,?)*)\}\s+(\S+)(?:\s+\d+)?$""")
_LABEL_PAIR = re.compile(r'([A-Za-z_]\w*)\s*=\s*"([^"]*)"')
#: A Dockerfile instruction that sets something (``FROM python:3.12-slim``, ``EXPOSE 8443``, ``ENV KEY=value``).
_INSTRUCTION = re.compile(r"^(?:FROM|EXPOSE|ENV|ARG|USER|WORKDIR|LABEL|VOLUME|HEALTHCHECK)\s+\S")
#: A setting changed in place: ``key: old -> new`` (an arrow between two literals).
_CHANGE = re.compile(r"^[A-Za-z_][\w. -]{0,40}[:=]\s*\S+\s*(?:->|→|=>)\s*\S+$")
#: A header of a column-aligned listing (``kubectl get``, ``docker ps``, ``df``): three or more column names
#: apart by two spaces or more.
_ALIGNED_HEADER = re.compile(r"^[A-Za-z][\w%/()-]*(?: [A-Za-z][\w%/()-]*)?(?: {2,}[A-Za-z][\w%/()-]*(?: [A-Za-z][\w%/()-]*)?){2,}$"
                             # a tab-separated sheet's header (a TSV export, a spreadsheet pasted): names apart by tabs
                             r"|^[^\W\d][\w%/() .-]*(?:\t+[^\W\d][\w%/() .-]*){2,}$")
_COLUMN_GAP = re.compile(r" {2,}|\t+")
#: How many rows of one column-aligned listing are read (each gives a statement per cell): a 300-pod listing says
#: no more per row than its first rows do, and its rows rank low as bulk anyway.
_MAX_ALIGNED_ROWS = 24
#: A tab-separated sheet is a record of rows, each its own (an action-item sheet, a settings export), not a listing of
#: one thing's many instances: it is read further, to this many rows.
_MAX_SHEET_ROWS = 400
#: Column names that say a row names an attribute in that column and its value in the next ("| api | timeout | 30s |"
#: under "| service | setting | value |"): a key-value sheet, whose rows read "api timeout: 30s".
_KEY_COLUMNS = frozenset("key setting field parameter param attribute property option variable item kind what "
                         "schlüssel einstellung clave ajuste campo parámetro clé paramètre 键 参数 配置项 项目".split())
_VALUE_COLUMNS = frozenset("value val current wert valor valeur 值 取值 当前值".split())
#: Keys that lay a config file out (compose's ``services``, a chart's ``resources.limits``) and name nothing of their own:
#: a nested setting is about the outermost key that is not one of them.
_STRUCTURAL_KEYS = frozenset("services service spec template metadata data values config configuration settings env environment "
                             "resources limits requests containers volumes ports networks jobs steps with properties global "
                             "defaults default image ingress annotations labels selector strategy deploy build "
                             "dependencies devdependencies extras options vars variables".split())
#: Value shapes found by the words around them (a name a role binds, an enum word a key binds), not by their own form.
_PHRASE_SHAPES = frozenset({"name", "word"})
#: A YAML list item holding one scalar (``- "8080:80"``, ``- redis``), not a mapping (``- name: x``).
_SCALAR_ITEM = re.compile(r"""^-\s+("[^"]*"|'[^']*'|[^\s:#'"][^\s#]*)\s*(?:#.*)?$""")
#: A Markdown table row, and the rule under its header row.
_TABLE_ROW = re.compile(r"^\|.*\|$")
#: A CSV header: three or more comma-separated column names (no spaces, quotes or digits-only cells).
_CSV_HEADER = re.compile(r"^[A-Za-z_][\w.-]*(?:,[A-Za-z_][\w.-]*){2,}$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
#: The first line of a `git log` entry, an INI/TOML section, a YAML key that opens a block.
_COMMIT = re.compile(r"^commit ([0-9a-f]{7,40})\b")
_SECTION = re.compile(r"^\[([A-Za-z_][\w.-]*)\]$")
_PARENT = re.compile(r"^-?\s*([A-Za-z_][\w.-]*):$")
#: A YAML flow mapping (``- {package: dbt-utils, version: "1.3.0"}``): one record of ``key: value`` pairs.
_FLOW_MAP = re.compile(r"^(?:-\s*|([A-Za-z_][\w.-]*):\s*)?\{([^{}]+)\}\s*,?$")  # a key before it names the record
_FLOW_PAIR = re.compile(r"""^\s*["']?([A-Za-z_][\w.-]*)["']?\s*:\s*("[^"]*"|'[^']*'|[^\s,"']+)\s*$""")
#: A keyword argument with a literal in a line of code (``config(materialized='incremental', unique_key='id')``): a setting.
_KWARG = re.compile(r"""(?<![\w.])([A-Za-z_]\w*)\s*=\s*(["'])([^"'\n]{1,120})\2""")
#: The comment that ends a line of code (``  -- model marts.orders``, ``  # the api``): what its settings are about.
#: A setting line's trailing comment that opens with a name, in a few words ("ALIAS: k-12  # Kestrel upload key"):
#: the thing the setting is for, as people annotate a config's lines.
_NAMED_COMMENT = re.compile(r"\s(?:#|//)\s*([A-Z][A-Za-z0-9]*[a-z0-9][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*)(?:\s+[\w.-]+){0,3}\s*$")
#: A call whose one argument is a literal built like a key (parts joined by ``_ - . :`` or with a digit): not a word.
_CALL_LITERAL = re.compile(r"""([A-Za-z_][\w.]*)\(\s*(["'])((?=[^"'\s]*[_.:\d-])[A-Za-z0-9][\w.:-]{2,119})\2\s*\)""")
_TRAILING_COMMENT = re.compile(r"\s(?:--|#|//)\s*(\S.*)$")


class Statement(msgspec.Struct, frozen=True):
    """One statement: its text, the carrier it came in (prose, comment, log, config, table, json), and
    what it is about when its structure says so (a table row's first cell, a config file's section)."""

    text: str
    carrier: str
    subject: str = ""


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
    """The sentences of ``text``, stripped, empty ones left out; one that only gives the reason of the one before
    ("Reason: ...", "Because ...") is part of it, so a decision and its why stay one statement."""
    held = ""
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0).strip()
        if not sentence:
            continue
        if held and _REASON_OPENS.match(sentence):
            held = f"{held} {sentence}"
            continue
        if held:
            yield held
        held = sentence
    if held:
        yield held


def statements(text: str, *, scan_chars: int = 16_000) -> Iterator[Statement]:
    """Every statement of ``text`` (see the module docstring), in order.

    A text longer than twice ``scan_chars`` is read at its head and its tail only: a summary
    needs a few lines of a 100 KB tool output, not all of them.
    """
    if len(text) > 2 * scan_chars:
        # cut at line ends: half a line ("tion item open AI-322") would be read as a statement of its own
        head, tail = text[:scan_chars], text[-scan_chars:]
        text = head[: head.rfind("\n") + 1 or None] + "\n" + tail[tail.find("\n") + 1:]
    text = _CUT.sub("\n", text)  # the marker and the torn half lines either side: no statements
    whole = _json_value(text)
    if whole is not _NOT_JSON:
        yield from _json_statements(whole)
        return
    for segment in split_diffs(text.splitlines()):
        if isinstance(segment, ChangedFile):
            yield from _changed_file_statements(segment)
        else:
            yield from _line_statements(segment)


def _changed_file_statements(changed: ChangedFile) -> Iterator[Statement]:
    """A file a diff changes: each setting it changed as ``<about> <key>: old -> new``, then what the file says now."""
    about = changed.about
    for key, old, new in changed.changes:
        yield Statement(f"{about} {key}: {old} -> {new}", "log", about)
    for statement in _line_statements(list(changed.lines)):
        yield statement if statement.subject else Statement(statement.text, statement.carrier, about)


def _owner(parents: Sequence[tuple[int, str]]) -> tuple[str, str]:
    """What a nested setting is about, and the key path from there: the innermost enclosing key that names a
    thing rather than the file's layout (``parcel-sync`` of ``parcel-sync.resources.limits``, ``api`` of
    ``services.api.ports``), and the keys under it."""
    keys = [key for _, key in parents]
    for index in range(len(keys) - 1, -1, -1):
        if keys[index].lower() not in _STRUCTURAL_KEYS:
            return keys[index], ".".join(keys[index + 1:])
    return (keys[-1], "") if keys else ("", "")


def _line_statements(lines: list[str]) -> Iterator[Statement]:
    """The statements of lines with no diff among them (see :func:`statements`)."""
    parents: list[tuple[int, str]] = []  # (indent, key) of the enclosing "[section]" or "key:" lines
    header: list[str] = []  # the header cells of the Markdown table being read
    commit = ""  # the hash of a `git log` entry whose message is still to come
    columns: list[str] = []  # the header of the CSV block being read
    aligned: list[str] = []  # the header of the column-aligned listing being read
    aligned_rows = 0
    card = ""  # the title of the card (an issue, a ticket) whose field lines are being read
    in_rows = False  # the line before was the CSV block's header or one of its rows
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            aligned = []  # a blank line ends a listing
            in_rows = False
            continue
        if aligned:
            cells = _COLUMN_GAP.split(stripped)
            if len(cells) == len(aligned):
                aligned_rows += 1
                if aligned_rows <= (_MAX_SHEET_ROWS if "\t" in stripped else _MAX_ALIGNED_ROWS):  # past that: bulk, not read
                    yield from _row_statements(cells, aligned)
                continue
            # A line of another layout inside a listing (a setting a tool printed between its rows) is read as itself;
            # the rows after it are still the listing's.
        if _ALIGNED_HEADER.match(stripped) and number + 1 < len(lines) \
                and len(_COLUMN_GAP.split(lines[number + 1].strip())) == len(_COLUMN_GAP.split(stripped)):
            aligned = _COLUMN_GAP.split(stripped)  # a listing's header: it names the columns of the rows below
            aligned_rows = 0
            continue
        # A header, also one that starts another block; but a line right below a block's rows with as many cells,
        # half of them or more with a digit, is one more row whose cells read as names (a parts list's
        # "U3,STM32G474,LQFP64,ST"): column names seldom hold digits ("p95_ms" is one of four).
        if _CSV_HEADER.match(stripped) and not (in_rows and _one_more_row(stripped.split(","), columns)):
            columns = stripped.split(",")
            in_rows = True
            continue
        if columns:
            cells = stripped.split(",")
            if len(cells) == len(columns) and '"' not in stripped:
                in_rows = True
                yield from _row_statements([c.strip() for c in cells], columns)
                continue
            columns = []
        in_rows = False
        value = _json_value(stripped) if stripped[0] in "{[" else _NOT_JSON
        if value is not _NOT_JSON:
            yield from _json_statements(value)
            continue
        flow = _flow_statements(stripped)
        if flow:
            yield from flow
            continue
        if _TABLE_ROW.match(stripped):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            following = lines[number + 1].strip() if number + 1 < len(lines) else ""
            if _TABLE_RULE.match(following):
                header = cells  # a header row: it names the columns of the rows below
            elif not _TABLE_RULE.match(stripped):
                yield from _row_statements(cells, header)
            continue
        header = []
        found = _COMMIT.match(stripped)
        if found:
            commit = found.group(1)
            continue
        if commit and line.startswith((" ", "\t")) and reads_as_prose(stripped):
            yield Statement(f"commit {commit}: {stripped}", "log")  # a `git log` entry: its hash and what it did
            commit = ""
            continue
        section = _SECTION.match(stripped)
        if section:  # an INI or TOML section: what the settings below are about
            parents = [(-1, section.group(1))]
            continue
        indent = len(line) - len(line.lstrip())
        while parents and parents[-1][0] >= indent:
            parents.pop()
        parent = _PARENT.match(stripped)
        if parent:  # a YAML key that opens a block: what the settings below it are about
            parents.append((indent, parent.group(1)))
            continue
        item = _SCALAR_ITEM.match(stripped) if parents and parents[-1][0] >= 0 else None
        if item:  # a YAML list item under a key (ports: - "8080:80"): a value of that key
            owner, path = _owner(parents)
            yield Statement(f"{owner} {path}: {item.group(1)}" if path else f"{owner}: {item.group(1)}", "config", owner)
            continue
        carrier = "prose"
        if _LIST_MARK.match(stripped) or "`" in stripped or "**" in stripped:
            stripped = _EMPHASIS.sub("", _LIST_MARK.sub("", stripped)).strip()
        bare = _COMMENT.sub("", stripped)
        if bare != stripped:
            carrier = "comment"
        logged = _LEVEL.sub("", _LOG_PREFIX.sub("", bare))
        # A log line's [component] is what it is about: it stays, as a subject.
        logged = _COMPONENT.sub(lambda m: m.group(0).strip()[1:-1] + ": ", logged)
        if logged != bare:
            carrier = "log"
        sample = _SAMPLE.match(logged)
        if sample:  # a metric sample: its labels say what it is about and where, as a logfmt line's pairs do
            labels = " ".join(f"{k}={v}" for k, v in _LABEL_PAIR.findall(sample.group(2)))
            yield Statement(f"{sample.group(1)}: {labels}", "log")  # the sample itself is a reading of the moment
            continue
        title = _CARD_TITLE.match(logged) if carrier in ("prose", "log") else None
        if title:  # a card's title (an issue, a ticket): the lines of fields under it are about it
            card = title.group(1).strip()[:60]
        elif card and _CARD_LINE.match(logged):
            yield Statement(f"{card} — {logged}", "table", card)  # "Assignee: @kim" under "Issue: search is slow"
            continue
        else:
            card = ""
        if _LOGFMT.match(logged) or _CHANGE.match(logged) or _INSTRUCTION.match(logged):
            yield Statement(logged, "log")  # a logfmt line, a setting changed in place: statements as they stand
            continue
        if carrier == "prose" and _SETTING.match(logged):
            # key = literal, as config files, .env and YAML say a value; under a section, about it
            owner, path = _owner(parents)
            named = _NAMED_COMMENT.search(logged)
            if named:  # ... or about the name its own comment gives it: the line is more specific than its block
                owner = named.group(1)
            said = f"{path}.{logged}" if path else logged
            yield Statement(f"{owner} {said}" if owner else logged, "config", owner)
            continue
        if carrier == "prose" and len(_COLUMN_GAP.split(logged)) >= 4:
            continue  # a row of a column-aligned listing whose header is not in view: cells no column names
        if carrier == "prose" and (not reads_as_prose(logged) or _LOCATED.match(logged)):
            yield from _keyword_statements(logged)  # a line of code says no sentence, but its keyword literals are settings
            continue  # a line of code, or a grep hit or compiler message (file:line:): not statements
        for sentence in sentences(logged):
            yield Statement(sentence, carrier)


def _flow_statements(line: str) -> list[Statement]:
    """A YAML flow mapping's pairs, each about the record's name (its name-like key's value, else its first value)."""
    found = _FLOW_MAP.match(line)
    if not found:
        return []
    pairs = [_FLOW_PAIR.match(part) for part in found.group(2).split(",")]
    if len(pairs) < 2 or not all(pairs):
        return []
    cells = {m.group(1): m.group(2).strip("\"'") for m in pairs if m}
    name = found.group(1) or next((cells[k] for k in _NAME_KEYS if k in cells), next(iter(cells.values())))
    return [Statement(f"{name} {key}: {value}", "config", name) for key, value in cells.items() if value != name]


def _keyword_statements(line: str) -> Iterator[Statement]:
    """The keyword arguments with a literal of a line of code, each as ``<about> key: literal``, about the identifier
    its trailing comment names (``unique_key='id'  -- model marts.orders``)."""
    comment = _TRAILING_COMMENT.search(line)
    about = comment.group(1).split()[-1].strip(".,;:") if comment else ""
    for key, _, literal in _KWARG.findall(comment.string[:comment.start()] if comment else line):
        said = f'"{literal}"' if " " in literal else literal
        yield Statement(f"{comment.group(1)} {key}: {said}" if comment else f"{key}: {said}", "config", about)
    if comment:  # a call's one literal argument (flags.isEnabled("ff_x")  // what it guards): a key the code names
        for callee, _, literal in _CALL_LITERAL.findall(line[:comment.start()]):
            yield Statement(f"{comment.group(1)} {callee.rsplit('.', 1)[-1]}: {literal}", "config", about)


def _one_more_row(cells: list[str], columns: list[str]) -> bool:
    """Whether a line that reads as a CSV header, right below a block's rows, is one more row: as many cells as the
    block's columns, half of them or more with a digit (column names seldom hold digits)."""
    return len(cells) == len(columns) and 2 * sum(any(c.isdigit() for c in cell) for cell in cells) >= len(columns)


def _row_statements(cells: list[str], header: list[str]) -> Iterator[Statement]:
    """A table row's statements: each cell after the first, about the first, named by its column if there is a header.

    A row whose other cells are words with no value of a shape of its own among them (a decision log's choice and
    reason, an owner and a team) is one record: one statement of its cells, so what belongs together stays together.
    """
    subject = cells[0] if cells else ""
    if not subject:
        return
    names = [h.strip().lower() for h in header]
    if len(names) >= 2 and names[0] in _KEY_COLUMNS and names[1] in _VALUE_COLUMNS and len(cells) >= 2 and cells[1]:
        # A settings sheet of two columns ("| setting | value |"): each row is a setting line, its value set, not measured.
        yield Statement(f"{subject}: {cells[1]}", "config", "")
        for index, cell in enumerate(cells[2:], start=2):
            if cell and cell not in ("-", "—", "TBD", "n/a") and index < len(header):
                yield Statement(f"{subject} {header[index]}: {cell}", "table", subject)
        return
    key = next((i for i in range(1, len(names) - 1) if names[i] in _KEY_COLUMNS and names[i + 1] in _VALUE_COLUMNS), 0)
    if key and key + 1 < len(cells) and cells[key] and cells[key + 1]:
        # A key-value sheet: the key cell names the attribute, the next cell is its value, the others say more of it.
        said = f"{subject} {cells[key]}: {cells[key + 1]}"
        yield Statement(said, "table", subject)
        for index, cell in enumerate(cells[1:], start=1):
            if index not in (key, key + 1) and cell and cell not in ("-", "—", "TBD", "n/a"):
                column = header[index] if index < len(header) else ""
                yield Statement(f"{subject} {cells[key]} {column}: {cell}".replace("  ", " "), "table", subject)
        return
    rest = [(header[i] if i < len(header) else "", cell) for i, cell in enumerate(cells[1:], start=1)
            if cell and cell not in ("-", "—", "TBD", "n/a")]
    if len(rest) >= 2 and not any(shape not in _PHRASE_SHAPES for _, cell in rest for shape, _, _, _ in values(cell)):
        said = "; ".join(f"{column}: {cell}" if column else cell for column, cell in rest)
        yield Statement(f"{subject} {said}" if rest[0][0] else f"{subject}: {said}", "table", subject)
        return
    for index, cell in enumerate(cells[1:], start=1):
        if not cell or cell in ("-", "—", "TBD", "n/a"):
            continue
        column = header[index] if index < len(header) else ""
        yield Statement(f"{subject} {column}: {cell}" if column else f"{subject}: {cell}", "table", subject)


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
        # A map of records keyed by their names (``{"parameters": {"checkout": {...}, "search": {...}}}``):
        # each key names the record under it, unless that record names itself.
        keyed = sum(isinstance(item, dict) for item in value.values()) >= 2
        for key, item in value.items():
            inner = str(key) if keyed and isinstance(item, dict) and _is_name(str(key)) else name
            yield from _leaves(item, (*path, str(key)), inner, records)
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


def _is_name(key: str) -> bool:
    """A map key that can name a record: a short label, not a sentence or a number."""
    return 0 < len(key) <= 80 and key.count(" ") <= 2 and not key.lstrip("-").replace(".", "", 1).isdigit()


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
            # the record's name is what the field is about, as a table row's first cell is
            found.append((frequency[path], len(found), Statement(text, "json", name)))
    if len(found) > _MAX_JSON_STATEMENTS:
        found = sorted(sorted(found)[:_MAX_JSON_STATEMENTS], key=lambda f: f[1])
    for _, _, statement in found:
        yield statement
