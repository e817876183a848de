"""History entries and sidecars into retrievable records, keeping structure findable.

* Each conversation entry (user, assistant, tool call, tool result, compaction summary) gives one
  or more L3 chunks. A short entry is one chunk; a long one is cut at line boundaries into pieces
  of about :data:`CHUNK_CHARS` characters (a line longer than that is cut at spaces, else hard).
* JSON in an entry (the whole content, a tool call's arguments, or one line of a log) is also
  flattened to ``path: value`` lines, so a value inside minified JSON is searchable next to the key
  that names it. The evidence text of such a chunk is the original JSON when it is short, else the
  flattened lines of that chunk.
* The sidecar gives one L2 ``session`` record (title, times, working memory text, working dict as
  ``key: value`` lines); a session's latest compaction gives one L2 ``summary`` record.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from typing import Any

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, User
from aptmem.recall.records import META_ENTRY, Doc, entry_ref
from aptmem.working_memory import SessionMeta

__all__ = ["CHUNK_CHARS", "entry_docs", "flatten_json", "session_docs", "summary_doc", "split_text"]

#: Target size of one chunk, in characters (about 200-300 tokens of English).
CHUNK_CHARS = 1200
#: JSON shown as is when its text is at most this long; longer JSON is shown flattened.
_SHOW_JSON = 600
_MAX_JSON_LINE = 4_000_000  # beyond this a line is not tried as JSON (memory)


def flatten_json(value: Any, prefix: str = "") -> Iterator[str]:
    """Yield ``path: value`` lines for every leaf of a JSON value (``a.b[2].c: 5``)."""
    out: list[str] = []
    _flatten_into(out, value, prefix)
    return iter(out)


def _flatten_into(out: list[str], value: Any, prefix: str) -> None:
    """Append the ``path: value`` lines of ``value`` to ``out`` (one list, no generator per level: a hot path of indexing)."""
    if isinstance(value, dict):
        if not value and prefix:
            out.append(f"{prefix}: {{}}")
        for key, item in value.items():
            _flatten_into(out, item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if not value and prefix:
            out.append(f"{prefix}: []")
        for index, item in enumerate(value):
            _flatten_into(out, item, f"{prefix}[{index}]")
    else:
        shown = value if isinstance(value, str) else msgspec.json.encode(value).decode()
        out.append(f"{prefix}: {shown}" if prefix else str(shown))


def _as_json(text: str) -> Any | None:
    """The JSON value ``text`` holds, if it is a JSON object or array; else None."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or len(stripped) > _MAX_JSON_LINE:
        return None
    try:
        value = msgspec.json.decode(stripped)
    except (msgspec.DecodeError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def structured_lines(text: str) -> list[str]:
    """The lines of ``text`` with JSON (whole or per line) replaced by its ``path: value`` lines."""
    whole = _as_json(text)
    if whole is not None:
        return list(flatten_json(whole))
    if "{" not in text and "[" not in text:  # no JSON on any line: the lines as they are
        return text.splitlines()
    out: list[str] = []
    for line in text.splitlines():
        value = _as_json(line) if "{" in line or "[" in line else None
        if value is None:
            # A log line with JSON after a prefix ("2024-05-01 INFO {...}"): flatten its tail.
            start = line.find("{")
            value = _as_json(line[start:]) if start > 0 else None
            if value is not None:
                out.append(line[:start].rstrip())
                out.extend(flatten_json(value))
                continue
            out.append(line)
        else:
            out.extend(flatten_json(value))
    return out


def split_text(lines: list[str], size: int = CHUNK_CHARS) -> list[str]:
    """Group lines into pieces of at most about ``size`` characters (cutting over-long lines)."""
    whole = "\n".join(lines)
    if len(whole) < size:  # every line fits after the ones before it: one piece, as the loop would make
        return [whole] if whole.strip() else []
    return _grouped(lines, size)


def _grouped(lines: list[str], size: int) -> list[str]:
    """:func:`split_text` line by line: a piece ends before the line that would take it past ``size``."""
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for line in lines:
        for part in (line,) if len(line) <= size else _cut(line, size):
            if current and length + len(part) + 1 > size:
                pieces.append("\n".join(current))
                current, length = [], 0
            current.append(part)
            length += len(part) + 1
    if current:
        pieces.append("\n".join(current))
    return [p for p in pieces if p.strip()]


def _cut(line: str, size: int) -> Iterator[str]:
    """Cut one line into parts of at most ``size`` characters, at a space when there is one."""
    while len(line) > size:
        cut = line.rfind(" ", size // 2, size)
        cut = cut if cut > 0 else size
        yield line[:cut]
        line = line[cut:].lstrip()
    yield line


def _entry_parts(entry: Entry) -> tuple[str, str] | None:
    """(header, body) of an entry worth indexing, or None (metadata, unknown lines, empty text)."""
    if isinstance(entry, User):
        return "user", entry.content
    if isinstance(entry, Assistant):
        return "assistant", entry.content
    if isinstance(entry, ToolCall):
        body = msgspec.json.encode(entry.args).decode() if entry.args else ""
        if entry.result:
            body = f"{body}\n{entry.result}" if body else entry.result
        return f"tool_call {entry.name}", body
    if isinstance(entry, ToolResult):
        return "tool" + (f" {entry.name}" if entry.name else ""), entry.content
    if isinstance(entry, Compaction):
        return "summary", entry.summary
    return None


def entry_docs(session_id: str, entry: Entry, position: int, size: int = CHUNK_CHARS) -> list[Doc]:
    """The L3 chunks of one entry (none for metadata and unknown lines)."""
    parts = _entry_parts(entry)
    if parts is None or not parts[1].strip():
        return []
    header, body = parts
    kind = "summary" if isinstance(entry, Compaction) else "chunk"
    ref = entry_ref(entry.id, position)
    plain = body.splitlines()
    flat = structured_lines(body)
    structured = flat != plain
    docs: list[Doc] = []
    if not structured:
        for piece in split_text(plain, size):
            docs.append(_doc(session_id, "l3", kind, ref, position, entry.ts, piece, f"{header}\n{piece}"))
        return docs
    if len(body) <= _SHOW_JSON:
        # Short: the evidence is the entry as written, the search text adds its flattened form.
        search = f"{header}\n{body}\n" + "\n".join(flat)
        return [_doc(session_id, "l3", kind, ref, position, entry.ts, body, search)]
    for piece in split_text(flat, size):
        docs.append(_doc(session_id, "l3", kind, ref, position, entry.ts, piece, f"{header}\n{piece}"))
    return docs


def _doc(session_id: str, level: str, kind: str, ref: str, position: int, ts: int | None, text: str, search: str) -> Doc:
    return Doc(session_id=session_id, level=level, kind=kind, entry_id=ref, position=position,  # type: ignore[arg-type]
               ts=ts, text=text, search=search)


def _day(ms: int | None) -> str:
    if not ms:
        return "unknown"
    return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def session_docs(meta: SessionMeta | None, session_id: str, first_ts: int | None, last_ts: int | None) -> list[Doc]:
    """The L2 ``session`` record of a session: title, times, working memory (empty if nothing to say)."""
    lines = []
    if meta is not None and meta.title:
        lines.append(f"session: {meta.title}")
    created = first_ts or (meta.created if meta is not None else None)
    lines.append(f"from {_day(created)} to {_day(last_ts or (meta.updated if meta else None))}")
    if meta is not None and meta.memory:
        lines.append(meta.memory)
    if meta is not None and meta.working:
        lines.extend(flatten_json(meta.working))
    if len(lines) == 1:  # only the times: nothing a question could find
        return []
    text = "\n".join(lines)
    return [_doc(session_id, "l2", "session", META_ENTRY, -1, last_ts or created, text, text)]


def summary_doc(session_id: str, entry: Compaction, position: int) -> Doc | None:
    """The L2 ``summary`` record of a session's latest compaction (None if its summary is empty)."""
    if not entry.summary.strip():
        return None
    ref = entry_ref(entry.id, position)
    return _doc(session_id, "l2", "summary", ref, position, entry.ts, entry.summary, "summary\n" + entry.summary)
