"""What the importers share: the import report, a streaming reader of source JSONL, timestamps, ids.

A source transcript is JSONL, but its lines are not aptmem entries, so the reader here does not
decode entries: it yields each good line as a JSON object and records damage in the report, the
way :class:`aptmem.recovery.LogScan` does for aptmem's own logs:

* a line that is not JSON, not a JSON object, has no string ``type``, is nothing but NUL bytes,
  or is longer than the line cap is *damaged*; the import goes on after it (its line number and
  reason are reported);
* a last line without a line end that does not decode is a *torn tail* (a writer was cut off);
* a last line without a line end that decodes is good (``missing_final_newline``);
* NUL bytes followed by a good line on the same line are a write lost in a power loss with the
  next line glued onto it: the NULs are damage, the line after the last NUL is read (JSON never
  holds a raw NUL), so the two count as two lines with one number;
* blank lines and a UTF-8 BOM at the start are tolerated, not damage.

Memory stays bounded by the longest line (capped), whatever the file's size.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import msgspec

from aptmem.errors import CorruptTranscriptError, NotATranscriptError
from aptmem.logreader import DEFAULT_LINE_CAP, after_lost_write, over_cap_reason, physical_lines

__all__ = ["LOST_WRITE", "Clock", "ImportReport", "LineIds", "SourceReader", "block_text", "count", "envelope_free", "to_ms"]

#: The damage reason of a lost write's NUL bytes with the next line glued on.
LOST_WRITE = "zero-filled bytes (a lost write) before the rest of the line"
_READ_CHUNK = 1 << 20
_decoder = msgspec.json.Decoder()


class ImportReport(msgspec.Struct, kw_only=True):
    """What an import read, produced, skipped and found damaged.

    Lines are physical lines of the source (1-based numbers; a line holding a lost write's NUL
    bytes with another line glued on counts as two, with one number). ``skipped`` counts what has no
    aptmem counterpart and was left out on purpose, by reason (a source line type, or a part of
    a line such as an empty text block); nothing else is left out. ``entries`` counts the
    entries produced (written, when the import wrote a session), ``by_type`` them by aptmem type
    and ``metadata`` the metadata entries by kind.
    """

    format: str
    source: str
    #: the aptmem session written (None when the transcript was only iterated)
    session_id: str | None = None
    #: the session id the source names (Claude Code ``sessionId``, pi header ``id``)
    source_session_id: str | None = None
    lines: int = 0
    good_lines: int = 0
    #: good source lines by their own type (pi ``message`` lines by role: ``message:user``...)
    line_types: dict[str, int] = {}
    entries: int = 0
    by_type: dict[str, int] = {}
    metadata: dict[str, int] = {}
    skipped: dict[str, int] = {}
    #: assistant replies (Claude Code: one per ``message.id``; pi: one per assistant message)
    replies: int = 0
    #: assistant lines merged into a reply begun on an earlier line (Claude Code)
    merged_lines: int = 0
    #: reply lines that came after a line of another kind had closed their reply (Claude Code
    #: writes a tool's result while the reply that called it is still streaming)
    continued_lines: int = 0
    #: replies whose provider usage has a non-zero input side, and replies without one
    requests_with_usage: int = 0
    requests_without_usage: int = 0
    compactions: int = 0
    damaged_lines: list[int] = []
    damage_reasons: list[str] = []
    torn_tail_line: int | None = None
    torn_tail_bytes: int = 0
    missing_final_newline: bool = False
    notes: list[str] = []

    def refuse_line(self, number: int, reason: str) -> None:
        """Count good line ``number`` as damaged after all: valid JSON, but not a line of the format."""
        self.good_lines -= 1
        self.damaged_lines.append(number)
        self.damage_reasons.append(f"line {number}: {reason}")

    @property
    def damaged(self) -> bool:
        """Whether the source had damage (damaged lines or a torn tail): imported only as far as good."""
        return bool(self.damaged_lines) or self.torn_tail_line is not None


def count(table: dict[str, int], key: str, n: int = 1) -> None:
    """Add ``n`` to ``table[key]``."""
    table[key] = table.get(key, 0) + n


class SourceReader:
    """Iterate ``(line number, JSON object)`` for every good line of a source file; record damage.

    With ``strict`` the first damage raises :class:`CorruptTranscriptError` instead. A folder or a
    missing file raises :class:`NotATranscriptError`. Symlinks are followed: a source is only read.
    """

    def __init__(self, path: str | os.PathLike[str], report: ImportReport, *, cap: int = DEFAULT_LINE_CAP,
                 strict: bool = False) -> None:
        self.path = os.fspath(path)
        self.report = report
        self.cap = cap
        self.strict = strict

    def _open(self) -> io.BufferedReader:
        if os.path.isdir(self.path):
            raise NotATranscriptError(self.path, self.report.format, "is a folder, not a transcript file")
        try:
            return open(self.path, "rb", buffering=_READ_CHUNK)  # noqa: SIM115 - closed by __iter__
        except FileNotFoundError:
            raise NotATranscriptError(self.path, self.report.format, "no such file") from None
        except PermissionError:
            raise NotATranscriptError(self.path, self.report.format, "permission denied") from None

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        report = self.report
        with self._open() as stream:
            for number, offset, length, terminated, body, lead in physical_lines(stream, self.cap):
                if body is None:
                    report.lines += 1
                    self._damage(number, offset, length, terminated, over_cap_reason(self.cap))
                    continue
                cut = after_lost_write(body)
                if cut > 0 and _decode(body[cut:])[1] is None:
                    report.lines += 1
                    self._damage(number, offset, lead + cut, True, LOST_WRITE)
                    body = body[cut:]
                if body.strip():
                    report.lines += 1
                    obj, reason = _decode(body)
                    if reason is None:
                        report.good_lines += 1
                        if not terminated:
                            report.missing_final_newline = True
                        yield number, obj  # type: ignore[misc]
                    else:
                        self._damage(number, offset, length, terminated, reason)

    def _damage(self, number: int, offset: int, length: int, terminated: bool, reason: str) -> None:
        """Record a damaged line (or the torn tail); raise in strict mode."""
        if self.strict:
            raise CorruptTranscriptError(self.path, number, reason)
        report = self.report
        if not terminated:  # an unterminated line is the file's last: a write cut short
            report.torn_tail_line = number
            report.torn_tail_bytes = length
            report.damage_reasons.append(f"line {number}: torn write (no line end): {reason}")
        else:
            report.damaged_lines.append(number)
            report.damage_reasons.append(f"line {number}: {reason}")


def _decode(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Decode one line into a JSON object with a string ``type``; else return the reason it is damage."""
    if not body.strip(b"\x00 \t"):
        return None, "zero-filled bytes"
    try:
        obj = _decoder.decode(body)
    except RecursionError:
        return None, "JSON nested too deeply"
    except msgspec.DecodeError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a JSON {type(obj).__name__})"
    if not isinstance(obj.get("type"), str):
        return None, "no string 'type' field"
    return obj, None


def to_ms(value: Any) -> int | None:
    """A timestamp as whole milliseconds since the epoch: an int is taken as ms, a string as ISO 8601
    (UTC when it names no zone); anything else is None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1000 + 0.5)
    return None


class Clock:
    """Timestamps of the entries: the source's where it has one, else the last one seen (or 0)."""

    def __init__(self) -> None:
        self.last = 0

    def __call__(self, *candidates: Any) -> int:
        """The first candidate that is a timestamp, in ms; the last timestamp seen if none is."""
        for value in candidates:
            ms = to_ms(value)
            if ms is not None:
                self.last = ms
                return ms
        return self.last


def block_text(content: Any) -> str:
    """The text a model sees of a message's content: a string as is; a list of blocks with its text
    blocks joined by newlines and a placeholder (``[image]``, ``[document]``...) for every other block."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            parts.append(f"[{block.get('type', 'block')}]")
    return "\n".join(parts)


#: Fields Claude Code repeats on every line; a metadata entry made from a line leaves them out
#: (the session's own metadata entry holds them once).
_ENVELOPE = frozenset({"type", "uuid", "parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version",
                       "gitBranch", "slug", "timestamp", "id", "parentId"})


def envelope_free(obj: dict[str, Any]) -> dict[str, Any]:
    """A line's fields without the envelope every line repeats (ids, session, cwd, version, time)."""
    return {k: v for k, v in obj.items() if k not in _ENVELOPE}


class LineIds:
    """Ids of the entries one source line becomes: ``base``, then ``base:1``, ``base:2``..."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.n = 0

    def next(self) -> str:
        """The next id."""
        ident = self.base if self.n == 0 else f"{self.base}:{self.n}"
        self.n += 1
        return ident
