"""Unified diffs in a text: what each changed file says now, and which settings a hunk changed.

A coding agent reads and writes ``git diff`` output all day. A diff is not prose: each line
carries a marker (``-`` removed, ``+`` added, a space unchanged) before the file's own text,
and a hunk that removes ``FROM python:3.12-slim@sha256:aaa`` and adds
``FROM python:3.12-slim@sha256:bbb`` says that the value changed from the first to the second.
:func:`split_diffs` cuts a text's lines into plain runs and changed files; for each file it gives

* ``lines``: the file's text after the change (unchanged and added lines, markers taken off),
  which the statement reader reads like any file;
* ``changes``: (key, old, new) for each removed line an added line of the same key replaces in
  the same hunk (the key is what a line sets: a setting's key, an instruction word, a
  CODEOWNERS pattern; the value a literal of a few words, not code), so the update is stated,
  old value and new together;
* ``about``: what the file belongs to, from its path: the folder that holds it
  (``services/ledgerd/Dockerfile`` is about ``ledgerd``), or the file's own name when that folder
  is a layout folder (``src``, ``.github``, ...).

A removed line that no added line replaces is gone from the file: it states nothing current.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

__all__ = ["ChangedFile", "file_about", "split_diffs"]

#: ``+++ b/path`` (or ``+++ path``): the file a diff changes, after a ``--- `` line.
_NEW_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_OLD_FILE = re.compile(r"^--- (?:a/)?\S+")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
#: Lines a diff carries between files that are no part of any file (``diff --git``, ``index``, mode lines).
_DIFF_META = re.compile(r"^(?:diff --git |index [0-9a-f]+\.\.|(?:new|deleted) file mode |similarity index |rename (?:from|to) |\\ No newline)")
#: What a line sets: a key before ``:`` or ``=`` (a setting), an upper-case instruction word (``FROM``, ``EXPOSE``), or a
#: pattern or path that the rest of the line is about (a CODEOWNERS or .gitattributes line); and the literal it sets,
#: a few words with no code in them. A line of code (``if not x:``, ``return y``) sets nothing.
_LINE_KEY = re.compile(r"^(\s*)(?:([A-Za-z_][\w.-]*)[\"']?\s*[:=]\s*|([A-Z]{2,12})\s+|([^\s:=]*[/*.][^\s:=]*)\s+)"
                       r"(?=\S)((?:[^\s(){}\[\];,]+\s*){1,3})$")
#: Folders that lay a repository out and name nothing of their own.
_LAYOUT = frozenset("src lib libs app apps services service packages pkg cmd internal charts chart deploy deployments config "
                    "configs .github workflows tests test docs scripts migrations db k8s helm infra terraform modules "
                    "templates".split())


class ChangedFile(msgspec.Struct, frozen=True):
    """One file a diff changes: its path, what it is about, its text after the change, the settings it changed."""

    path: str
    about: str
    lines: tuple[str, ...]
    changes: tuple[tuple[str, str, str], ...]


def file_about(path: str) -> str:
    """What a file belongs to, by its path: the folder holding it, or its own name under a layout folder."""
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) >= 2 and parts[-2].lower() not in _LAYOUT:
        return parts[-2]
    return parts[-1] if parts else ""


def _key(line: str) -> tuple[str, str, str] | None:
    """(indent, key, literal) of a line that sets something, else None."""
    match = _LINE_KEY.match(line)
    if match is None or match.group(5).rstrip().endswith(":"):
        return None  # no setting, or a block opener
    return match.group(1), match.group(2) or match.group(3) or match.group(4), match.group(5).strip()


def _hunk_end(removed: list[str], added: list[str], lines: list[str], changes: list[tuple[str, str, str]]) -> None:
    """Close a run of removed then added lines: pair them by key, keep the added ones that replace nothing."""
    olds: dict[tuple[str, str], str] = {}
    for line in removed:
        key = _key(line)
        if key is not None:
            olds.setdefault((key[0], key[1]), key[2])
    for line in added:
        key = _key(line)
        old = olds.pop((key[0], key[1]), None) if key is not None else None
        if key is not None and old is not None and old != key[2]:
            changes.append((key[1], old, key[2]))
        else:
            lines.append(line)
    removed.clear()
    added.clear()


def split_diffs(lines: Sequence[str]) -> list[list[str] | ChangedFile]:
    """``lines`` cut into runs of plain lines and the files of the unified diffs among them, in order."""
    out: list[list[str] | ChangedFile] = []
    plain: list[str] = []
    number = 0
    while number < len(lines):
        line = lines[number]
        found = _NEW_FILE.match(lines[number + 1]) if _OLD_FILE.match(line) and number + 1 < len(lines) else None
        if found is None:
            if not _DIFF_META.match(line):
                plain.append(line)
            number += 1
            continue
        if plain:
            out.append(plain)
            plain = []
        path = found.group(1)
        number += 2
        text: list[str] = []
        changes: list[tuple[str, str, str]] = []
        removed: list[str] = []
        added: list[str] = []
        while number < len(lines):
            line = lines[number]
            if _OLD_FILE.match(line) and number + 1 < len(lines) and _NEW_FILE.match(lines[number + 1]):
                break  # the next file
            if _HUNK.match(line) or _DIFF_META.match(line):
                _hunk_end(removed, added, text, changes)
            elif line.startswith("-"):
                if added:
                    _hunk_end(removed, added, text, changes)
                removed.append(line[1:])
            elif line.startswith("+"):
                added.append(line[1:])
            elif line.startswith(" ") or not line:
                _hunk_end(removed, added, text, changes)
                text.append(line[1:])
            else:
                break  # the diff has ended: the line is the tool's own output again
            number += 1
        _hunk_end(removed, added, text, changes)
        out.append(ChangedFile(path, file_about(path), tuple(text), tuple(changes)))
    if plain:
        out.append(plain)
    return out
