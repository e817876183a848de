"""The heading each line of a text belongs to, so a line read alone still names its thing.

A line of a diff, a YAML or TOML file, a Markdown table or section rarely names what it is
about: ``image_tag: 1.2.3`` under ``orchid:``, ``+  timeout: 30`` in the diff of
``deploy/orchid.yaml``, ``| 5 | on call |`` under ``| service | owner |``. :func:`headings`
gives every line the headings that are open where it stands, read from the text's structure
alone (no vocabulary):

* the file of a unified diff (``diff --git a/x b/x``, ``+++ b/x``), for every line after it;
* a TOML / INI section (``[service.orchid]``), for its ``key = value`` lines (and comments);
* a Markdown heading (``# ...``), until the next one or a block key at the margin;
* a Markdown table's header row (the row before a ``|---|`` line), for the table's rows;
* the keys of the indented blocks a line is inside (YAML, and any ``key:`` opening a block),
  read from indentation (a diff line's marker is not counted as indentation).

Headings are joined with :data:`JOIN`, innermost last, and cut to :data:`MAX_CHARS` (the outer
ones go first): they cost tokens wherever they are shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["JOIN", "MAX_CHARS", "headings", "shape"]

JOIN = " › "
#: A line's headings are cut to about this many characters, keeping the innermost.
MAX_CHARS = 120

_SECTION = re.compile(r"\[[^\[\]\s][^\[\]]*\]")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?")
_DIFF_GIT = re.compile(r"diff --git a/\S+ b/(\S+)")
_SETTING = re.compile(r"\s*([#;]|[\w.\"'-]+\s*=|\[)")
_MD_HEADING = re.compile(r"#{1,6} \S")
#: A line that opens an indented block: a key and a colon with nothing after it.
_BLOCK_KEY = re.compile(r"[^\s#|][^:]{0,80}:")


_WORDISH = re.compile(r"[^\W_]+")
_SPACES = re.compile(r"\s+")


def shape(line: str) -> str:
    """The form of ``line`` without its words and numbers: the rows of one listing share it.

    ``orchid-1a2b   1/1   Running`` and ``kiwi-9f   1/1   Running`` are both ``w-w w/w w``;
    ``beacon,pg-beacon-5.db2.internal,5432,2`` is not.
    """
    return _SPACES.sub(" ", _WORDISH.sub("w", line)).strip()


def _diff_file(stripped: str) -> str | None:
    match = _DIFF_GIT.fullmatch(stripped)
    if match:
        return match.group(1)
    if stripped.startswith("+++ ") and not stripped.startswith("+++ /dev/null"):
        return stripped[4:].split("\t")[0].removeprefix("b/")
    return None


def _cut(parts: list[str]) -> str:
    """``parts`` joined, the outer ones dropped (then the innermost cut) until it fits :data:`MAX_CHARS`."""
    while len(parts) > 1 and len(JOIN.join(parts)) > MAX_CHARS:
        parts = parts[1:]
    text = JOIN.join(parts)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def headings(lines: Sequence[str]) -> list[str]:
    """For each of ``lines``, the headings open where it stands ("" if none); see the module docstring."""
    out: list[str] = []
    diff_file = section = md_heading = table_head = ""
    blocks: list[tuple[int, str]] = []  # (indentation, key line) of the open indented blocks, outermost first
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            out.append("")
            table_head = ""  # a blank line ends a table; files, sections and blocks stay open
            continue
        body = line.rstrip()
        if diff_file and not (body[:1] in "+- @\\" or body.startswith(("diff ", "index "))):
            diff_file = ""  # a line that is not part of a diff ends it
            blocks = []
        if diff_file and body[:1] in "+- " and not body.startswith(("+++", "---")):
            body = body[1:]  # a diff line: its marker is not indentation
        if section and not _SETTING.match(body):
            section = ""  # a line that is not ``key = value`` (or a comment) ends a TOML / INI section
        indent = len(body) - len(body.lstrip())
        while blocks and blocks[-1][0] >= indent:
            blocks.pop()
        is_table_row = stripped.startswith("|")
        if not is_table_row:
            table_head = ""
        parts = [p for p in (diff_file, section, md_heading, table_head if is_table_row and stripped != table_head else "")
                 if p]
        parts.extend(key for _, key in blocks)
        out.append(_cut(parts))
        # What this line opens, for the lines after it.
        found = _diff_file(stripped)
        if found is not None:
            diff_file, section, md_heading, blocks = found, "", "", []
        elif _SECTION.fullmatch(stripped):
            section, blocks = stripped, []
        elif _MD_HEADING.match(stripped):
            md_heading, blocks = stripped, []
        elif is_table_row and number + 1 < len(lines) and _TABLE_RULE.fullmatch(lines[number + 1].strip()):
            table_head = stripped
        elif _BLOCK_KEY.fullmatch(body.strip().lstrip("+- ")):
            if not indent:  # a block at the margin starts a text of its own: earlier sections end
                section = md_heading = ""
            blocks.append((indent, body.strip()))
    return out
