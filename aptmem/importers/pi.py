"""pi coding agent session files (``~/.pi/agent/sessions/.../<time>_<id>.jsonl``) as aptmem entries.

Every source line type, and what it becomes (nothing else is left out):

=====================================  ===============================================================
source line                            aptmem
=====================================  ===============================================================
``session`` (the header, first line)   ``metadata`` kind ``session`` (id, cwd, provider, modelId,
                                       thinkingLevel... as written)
``message``, role ``user``             ``user`` (text blocks joined by newlines; ``[image]`` for an image)
``message``, role ``assistant``        ``assistant`` (text blocks joined by blank lines, ``model``,
                                       ``usage``: the provider's integer counts input, output,
                                       cacheRead, cacheWrite (totalTokens where written); the
                                       nested ``cost`` is left out); then a ``metadata`` kind
                                       ``thinking`` per thinking block (text; the signature is left
                                       out); then a ``tool_call`` per ``toolCall`` block (id, name,
                                       args = arguments); then, for a reply that ended in
                                       ``error`` or ``aborted``, a ``metadata`` kind ``stop``
                                       (stopReason, errorMessage)
``message``, role ``toolResult``       ``tool_result`` (call_id = toolCallId, name = toolName,
                                       is_error; ``details``, the UI's diff, is left out)
``message``, any other role            ``metadata`` kind ``message:<role>`` (the whole message)
``model_change``                       ``metadata`` kind ``model_change`` (provider, modelId)
``thinking_level_change``              ``metadata`` kind ``thinking_level_change`` (thinkingLevel)
``compaction``                         ``compaction`` (summary, first_kept = firstKeptEntryId,
                                       tokens_before = tokensBefore)
``branch_summary``, ``custom``,        ``metadata`` of that kind (the line's fields)
``custom_message``, ``label``,
``session_info``
any other type                         ``metadata`` kind ``unknown:<type>`` (the whole line)
whitespace-only text blocks            skipped, counted as ``empty text block``
=====================================  ===============================================================

Ids: newer pi files give every line an ``id`` (so a compaction's ``firstKeptEntryId`` names
one); an entry keeps it (a line that becomes several entries: ``id``, ``id:1``...), a tool call
keeps its own id. Older files (like the shared fixture) have none: entries get
``pi-<line number>``. Timestamps: a message's own ``timestamp`` (ms), else the line's ISO time.
A newer file's lines form a tree (``parentId``); branches are imported in file order, all of
them, not only the path to the last leaf.
"""

from __future__ import annotations

from typing import Any

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User
from aptmem.importers.base import Clock, ImportReport, LineIds, block_text, count, envelope_free

__all__ = ["LINE_TYPES", "PiConverter", "input_side"]

FORMAT = "pi"
_METADATA_TYPES = frozenset({"model_change", "thinking_level_change", "branch_summary", "custom", "custom_message",
                             "label", "session_info"})
#: The line types this importer knows.
LINE_TYPES = frozenset({"session", "message", "compaction", *_METADATA_TYPES})


class _Message(msgspec.Struct, rename="camel"):
    """The ``message`` of a pi ``message`` line (unknown fields are tolerated)."""

    role: str
    content: str | list[Any] = ""
    timestamp: Any = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False


class _Line(msgspec.Struct, rename="camel"):
    """The fields of a pi line the importer reads (unknown fields are tolerated)."""

    type: str
    id: str | None = None
    timestamp: Any = None
    message: _Message | None = None
    summary: str | None = None
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None


def input_side(usage: dict[str, Any] | None) -> int | None:
    """The input-side tokens a pi usage reports: input + cacheRead + cacheWrite."""
    if not usage or "input" not in usage:
        return None
    return sum(v for k in ("input", "cacheRead", "cacheWrite") if isinstance(v := usage.get(k), int) and not isinstance(v, bool))


def looks_like(obj: dict[str, Any]) -> str | None:
    """None if ``obj`` (a first good line) looks like a pi line, else why not."""
    kind = obj.get("type")
    if kind == "session":
        return None
    message = obj.get("message")
    if kind == "message" and isinstance(message, dict) and isinstance(message.get("role"), str):
        return None
    return f"its first line has type {kind!r}: a pi session starts with its 'session' header (or a message)"


class PiConverter:
    """Turns pi lines into aptmem entries, one line at a time; see the module docstring."""

    fmt = FORMAT
    looks_like = staticmethod(looks_like)

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.clock = Clock()

    def feed(self, number: int, obj: dict[str, Any]) -> list[Entry]:
        """The entries one good line produces."""
        report = self.report
        try:
            line = msgspec.convert(obj, _Line)
        except msgspec.ValidationError as exc:
            report.refuse_line(number, f"invalid pi {obj.get('type')!r} line: {exc}")
            return []
        message = line.message
        if line.type == "message" and message is None:
            report.refuse_line(number, "a pi 'message' line without a 'message' object")
            return []
        count(report.line_types, f"message:{message.role}" if message is not None and line.type == "message" else line.type)
        ts = self.clock(message.timestamp if message is not None else None, line.timestamp)
        ids = LineIds(line.id or f"pi-{number}")
        if line.type == "session":
            if report.source_session_id is None and isinstance(obj.get("id"), str):
                report.source_session_id = obj["id"]
            return [Metadata(ts=ts, kind="session", data={"format": FORMAT, **{k: v for k, v in obj.items() if k != "type"}})]
        if line.type == "message" and message is not None:
            return self._message(message, obj["message"], ids, ts)
        if line.type == "compaction":
            report.compactions += 1
            return [Compaction(ts=ts, id=ids.next(), summary=line.summary or "", first_kept=line.first_kept_entry_id,
                               tokens_before=line.tokens_before, notes=["imported from a pi compaction entry"])]
        if line.type in _METADATA_TYPES:
            return [Metadata(ts=ts, id=ids.next(), kind=line.type, data=envelope_free(obj))]
        return [Metadata(ts=ts, id=ids.next(), kind=f"unknown:{line.type}", data=dict(obj))]

    def finish(self) -> list[Entry]:
        """Nothing is held across lines in pi's format."""
        return []

    def _message(self, message: _Message, raw: dict[str, Any], ids: LineIds, ts: int) -> list[Entry]:
        if message.role == "user":
            return [User(ts=ts, id=ids.next(), content=block_text(message.content))]
        if message.role == "toolResult" and message.tool_call_id:
            return [ToolResult(ts=ts, id=ids.next(), call_id=message.tool_call_id, content=block_text(message.content),
                               name=message.tool_name, is_error=message.is_error)]
        if message.role == "assistant":
            return self._assistant(message, ids, ts)
        return [Metadata(ts=ts, id=ids.next(), kind=f"message:{message.role}", data=raw)]

    def _assistant(self, message: _Message, ids: LineIds, ts: int) -> list[Entry]:
        report = self.report
        head_id = ids.next()
        texts: list[str] = []
        extra: list[Entry] = []
        blocks = [{"type": "text", "text": message.content}] if isinstance(message.content, str) else message.content
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                text = block.get("text") or ""
                if text.strip():
                    texts.append(text)
                else:
                    count(report.skipped, "empty text block")
            elif kind == "thinking":
                extra.append(Metadata(ts=ts, id=ids.next(), kind="thinking", data={"text": block.get("thinking", "")}))
            elif kind == "toolCall" and isinstance(block.get("id"), str):
                args = block.get("arguments")
                extra.append(ToolCall(ts=ts, id=block["id"], name=str(block.get("name", "")),
                                      args=args if isinstance(args, dict) else {"arguments": args}))
            else:
                texts.append(block_text([block]))
        if message.stop_reason in ("error", "aborted"):
            extra.append(Metadata(ts=ts, id=ids.next(), kind="stop",
                                  data={"stopReason": message.stop_reason, "errorMessage": message.error_message}))
        report.replies += 1
        if input_side(message.usage):
            report.requests_with_usage += 1
        else:
            report.requests_without_usage += 1
        usage = {k: v for k, v in message.usage.items() if type(v) is int} if message.usage else None
        head = Assistant(ts=ts, id=head_id, content="\n\n".join(texts), model=message.model, usage=usage)
        return [head, *extra]
