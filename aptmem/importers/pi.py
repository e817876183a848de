"""pi coding agent session files (``~/.pi/agent/sessions/.../<time>_<id>.jsonl``) as aptmem entries.

Every source line type, and what it becomes (nothing else is left out):

=====================================  ===============================================================
source line                            aptmem
=====================================  ===============================================================
``session`` (the header, first line)   ``metadata`` kind ``session`` (id, cwd, provider, modelId,
                                       thinkingLevel... as written)
``message``, role ``user``             ``user`` (text blocks joined by newlines; ``[image]`` for an image)
``message``, role ``assistant``        ``assistant`` (text blocks joined by blank lines, thinking
                                       blocks' text joined by blank lines as ``thinking`` (the
                                       signature is left out), ``model``, ``usage``: the provider's
                                       integer counts input, output, cacheRead, cacheWrite
                                       (totalTokens where written); the nested ``cost`` is left
                                       out); then a ``metadata`` kind ``thinking`` (``redacted``)
                                       per redacted thinking block; then a ``tool_call`` per
                                       ``toolCall`` block (id, name, args = arguments); then, for a
                                       reply that ended in ``error`` or ``aborted``, a ``metadata``
                                       kind ``stop`` (stopReason, errorMessage)
``message``, role ``toolResult``       ``tool_result`` (call_id = toolCallId, name = toolName,
                                       is_error; ``details``, the UI's diff, is left out)
``message``, role ``bashExecution``    ``user`` with the text pi sends for it (``Ran `<command>```,
                                       the output in a code fence or ``(no output)``, then the
                                       cancel / exit-code / truncation notes); one marked
                                       ``excludeFromContext`` (``!!``) is not sent: ``metadata``
                                       kind ``message:bashExecution`` (the whole message)
``message``, role ``custom`` (v3) or   ``user`` (its content: pi sends an extension's message as
``hookMessage`` (v2)                   user text)
``message``, any other role            ``metadata`` kind ``message:<role>`` (the whole message)
``model_change``                       ``metadata`` kind ``model_change`` (provider, modelId)
``thinking_level_change``              ``metadata`` kind ``thinking_level_change`` (thinkingLevel)
``compaction``                         ``compaction`` (summary, first_kept = the id of the entry
                                       ``firstKeptEntryId`` names, or in a v1 file (no ids) the
                                       first entry of the line ``firstKeptEntryIndex`` names: an
                                       index over the file's entries with the header as 0, as
                                       pi's own v1-to-v2 migration reads it; tokens_before =
                                       tokensBefore)
``custom_message``                     ``user`` (its content: pi sends it as user text)
``branch_summary``, ``custom``,        ``metadata`` of that kind (the line's fields)
``label``, ``session_info``
any other type                         ``metadata`` kind ``unknown:<type>`` (the whole line)
whitespace-only text blocks            skipped, counted as ``empty text block``
=====================================  ===============================================================

Ids: newer pi files give every line an ``id`` (so a compaction's ``firstKeptEntryId`` names
one); an entry keeps it (a line that becomes several entries: ``id``, ``id:1``...), a tool call
keeps its own id. Older files (like the shared fixture) have none: entries get
``pi-<line number>``; a v1 compaction's ``firstKeptEntryIndex`` counts the good lines (pi skips a
line that is not JSON the same way), so it names the same entry pi keeps. Timestamps: a message's own ``timestamp`` (ms), else the line's ISO time.
A newer file's lines form a tree (``parentId``); branches are imported in file order, all of
them, not only the path to the last leaf.
"""

from __future__ import annotations

from typing import Any

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User
from aptmem.importers.base import Clock, ImportReport, LineIds, block_text, count, envelope_free

__all__ = ["LINE_TYPES", "PiConverter", "bash_execution_text", "input_side"]

FORMAT = "pi"
_METADATA_TYPES = frozenset({"model_change", "thinking_level_change", "branch_summary", "custom", "label",
                             "session_info"})
#: The line types this importer knows.
LINE_TYPES = frozenset({"session", "message", "compaction", "custom_message", *_METADATA_TYPES})
#: Message roles pi sends to the model as user text (``hookMessage`` is v2's name of ``custom``).
_USER_TEXT_ROLES = frozenset({"custom", "hookMessage"})


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
    # bashExecution (a command the user ran with ``!``)
    command: str | None = None
    output: str | None = None
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool = False


class _Line(msgspec.Struct, rename="camel"):
    """The fields of a pi line the importer reads (unknown fields are tolerated)."""

    type: str
    id: str | None = None
    timestamp: Any = None
    message: _Message | None = None
    summary: str | None = None
    first_kept_entry_id: str | None = None
    #: pi session format v1: the first kept entry as an index over the file's entries (header = 0)
    first_kept_entry_index: int | None = None
    tokens_before: int | None = None
    #: a custom_message line's content
    content: str | list[Any] | None = None


def input_side(usage: dict[str, Any] | None) -> int | None:
    """The input-side tokens a pi usage reports: input + cacheRead + cacheWrite."""
    if not usage or "input" not in usage:
        return None
    return sum(v for k in ("input", "cacheRead", "cacheWrite") if isinstance(v := usage.get(k), int) and not isinstance(v, bool))


def bash_execution_text(message: _Message) -> str:
    """The user text pi sends for a command the user ran (``!cmd``): the command, its output, how it ended."""
    parts = [f"Ran `{message.command}`\n", f"```\n{message.output}\n```" if message.output else "(no output)"]
    if message.cancelled:
        parts.append("\n\n(command cancelled)")
    elif message.exit_code:
        parts.append(f"\n\nCommand exited with code {message.exit_code}")
    if message.truncated and message.full_output_path:
        parts.append(f"\n\n[Output truncated. Full output: {message.full_output_path}]")
    return "".join(parts)


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
        #: per good line (0 = the header), the id of the first entry it produced: what a v1
        #: compaction's firstKeptEntryIndex names
        self._line_ids: list[str | None] = []

    def feed(self, number: int, obj: dict[str, Any]) -> list[Entry]:
        """The entries one good line produces."""
        entries = self._convert(number, obj)
        self._line_ids.append(next((e.id for e in entries if e.id is not None), None))
        return entries

    def _convert(self, number: int, obj: dict[str, Any]) -> list[Entry]:
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
            return [Compaction(ts=ts, id=ids.next(), summary=line.summary or "", first_kept=self._first_kept(number, line),
                               tokens_before=line.tokens_before, notes=["imported from a pi compaction entry"])]
        if line.type == "custom_message":
            return [User(ts=ts, id=ids.next(), content=block_text(line.content))]
        if line.type in _METADATA_TYPES:
            return [Metadata(ts=ts, id=ids.next(), kind=line.type, data=envelope_free(obj))]
        return [Metadata(ts=ts, id=ids.next(), kind=f"unknown:{line.type}", data=dict(obj))]

    def _first_kept(self, number: int, line: _Line) -> str | None:
        """The id of the entry a compaction keeps first: named by id, or (v1) by its line's index."""
        if line.first_kept_entry_id is not None or line.first_kept_entry_index is None:
            return line.first_kept_entry_id
        index = line.first_kept_entry_index
        # Only a line before the compaction can be kept; the header (index 0) is not an entry.
        if 0 < index < len(self._line_ids) and self._line_ids[index] is not None:
            return self._line_ids[index]
        self.report.notes.append(f"line {number}: firstKeptEntryIndex {index} names no earlier entry; "
                                 "only what follows the compaction is live")
        return None

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
        if message.role == "bashExecution" and message.command is not None and not message.exclude_from_context:
            return [User(ts=ts, id=ids.next(), content=bash_execution_text(message))]
        if message.role in _USER_TEXT_ROLES:
            return [User(ts=ts, id=ids.next(), content=block_text(message.content))]
        return [Metadata(ts=ts, id=ids.next(), kind=f"message:{message.role}", data=raw)]

    def _assistant(self, message: _Message, ids: LineIds, ts: int) -> list[Entry]:
        report = self.report
        head_id = ids.next()
        texts: list[str] = []
        thinking: list[str] = []
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
            elif kind == "thinking" and block.get("redacted"):
                extra.append(Metadata(ts=ts, id=ids.next(), kind="thinking", data={"redacted": True}))
            elif kind == "thinking":
                text = block.get("thinking")
                if isinstance(text, str) and text.strip():
                    thinking.append(text)
                else:
                    count(report.skipped, "empty thinking block")
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
        head = Assistant(ts=ts, id=head_id, content="\n\n".join(texts), model=message.model, usage=usage,
                         thinking="\n\n".join(thinking))
        return [head, *extra]
