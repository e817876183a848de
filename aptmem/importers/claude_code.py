"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as aptmem entries.

Every source line type, and what it becomes (nothing else is left out):

==========================================  ========================================================
source line                                 aptmem
==========================================  ========================================================
first line that names ``sessionId``         also a ``metadata`` entry, kind ``session`` (sessionId,
                                            cwd, version, gitBranch, userType: fields every line repeats)
``assistant`` (one reply may span several   one ``assistant`` per reply (``message.id``): its text
lines sharing ``message.id``)               blocks joined by blank lines, its ``thinking`` blocks'
                                            text joined by blank lines (the opaque signature is left
                                            out), ``model``, ``usage`` (the provider's integer counts:
                                            input_tokens, cache_creation_input_tokens,
                                            cache_read_input_tokens, output_tokens; nested breakdowns
                                            are left out); then a ``metadata`` kind ``thinking``
                                            (``redacted``) per ``redacted_thinking`` block (encrypted:
                                            no text to keep); then a ``tool_call`` per ``tool_use``
                                            block (id = the tool_use id, args = input)
``user`` with text (a string or blocks)     ``user``; image and document blocks become ``[image]`` ...
``user`` ``tool_result`` blocks             ``tool_result`` (call_id = tool_use_id, is_error, the
                                            tool's name from its call; the UI copy ``toolUseResult``
                                            is left out: the model sees the block's content)
``user`` with ``isCompactSummary``          ``compaction`` (summary; tokens_before = the preceding
                                            boundary's preTokens; first_kept none: Claude Code keeps
                                            only the summary)
``system`` ``compact_boundary``             ``metadata`` kind ``compact_boundary`` (compactMetadata...)
``system``, any other subtype               ``metadata`` kind ``system`` (subtype, content, level...)
``progress`` ``agent_progress``             ``metadata`` kind ``subagent`` (agentId and the subagent's
                                            message: a subagent's own context, not this session's)
``user`` / ``assistant`` with isSidechain   ``metadata`` kind ``subagent`` (older versions wrote
                                            subagent messages into the main file)
``summary``                                 ``metadata`` kind ``title`` (the session's title line)
``progress``, any other kind (hooks)        skipped, counted as ``progress:<kind>``
``file-history-snapshot``                   skipped, counted (file backups for the UI's rewind)
``queue-operation``                         skipped, counted (input typed while the agent worked;
                                            the message itself arrives later as a user line)
any other type                              ``metadata`` kind ``unknown:<type>`` (the whole line)
whitespace-only text blocks of a reply      skipped, counted as ``empty text block`` (thinking blocks:
                                            ``empty thinking block``)
==========================================  ========================================================

Ids: an entry keeps its source line's ``uuid`` (a line that becomes several entries: ``uuid``,
``uuid:1``...), a tool call its ``tool_use`` id; a line without a uuid gets ``cc-<line number>``.
Timestamps are the lines' ISO times in ms.

A reply is flushed (its entries produced) when a line of another kind that produces entries
arrives, or another reply starts: a tool's result must follow its call. Claude Code sometimes
writes a tool's result while the reply that called it is still streaming; the reply's later
lines then continue it (counted as ``continued_lines``): their tool calls follow as ``tool_call``
entries, their text as an ``assistant`` entry without usage (the request was already counted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User
from aptmem.importers.base import Clock, ImportReport, LineIds, block_text, count, envelope_free

__all__ = ["ClaudeCodeConverter", "LINE_TYPES", "input_side"]

FORMAT = "claude-code"
#: The line types this importer knows.
LINE_TYPES = frozenset({"user", "assistant", "system", "progress", "file-history-snapshot", "queue-operation", "summary"})
_SKIPPED = frozenset({"file-history-snapshot", "queue-operation"})


class _Message(msgspec.Struct):
    """The ``message`` of a user or assistant line (unknown fields are tolerated)."""

    role: str = ""
    content: str | list[Any] = ""
    id: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None


class _Line(msgspec.Struct, rename="camel"):
    """The fields of a Claude Code line the importer reads (unknown fields are tolerated)."""

    type: str
    uuid: str | None = None
    session_id: str | None = None
    timestamp: Any = None
    message: _Message | None = None
    subtype: str | None = None
    is_compact_summary: bool = False
    is_sidechain: bool = False
    compact_metadata: dict[str, Any] | None = None
    data: dict[str, Any] | None = None


def input_side(usage: dict[str, Any] | None) -> int | None:
    """The input-side tokens a Claude (Anthropic API) usage reports: input + cache creation + cache read."""
    if not usage or "input_tokens" not in usage:
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(v for k in keys if isinstance(v := usage.get(k), int) and not isinstance(v, bool))


def _ints(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """The provider's top-level integer counts of a usage object (nested breakdowns left out)."""
    if not usage:
        return None
    return {k: v for k, v in usage.items() if type(v) is int}


def looks_like(obj: dict[str, Any]) -> str | None:
    """None if ``obj`` (a first good line) looks like a Claude Code line, else why not."""
    kind = obj.get("type")
    if kind not in LINE_TYPES:
        return f"its first line has type {kind!r}, not one of Claude Code's"
    if kind in ("user", "assistant") and not isinstance(obj.get("message"), dict):
        return f"its first line is a {kind!r} line without a 'message' object"
    return None


@dataclass
class _Reply:
    """An assistant reply being gathered from its lines."""

    message_id: str
    ident: str
    ts: int
    model: str | None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    extra: list[Entry] = field(default_factory=list)  # redacted-thinking metadata and tool calls, in order
    usage: dict[str, Any] | None = None


class ClaudeCodeConverter:
    """Turns Claude Code lines into aptmem entries, one line at a time; see the module docstring."""

    fmt = FORMAT
    looks_like = staticmethod(looks_like)

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.clock = Clock()
        self._reply: _Reply | None = None
        self._closed: set[str] = set()  # message ids of replies already flushed
        self._names: dict[str, str] = {}  # tool_use id -> tool name, for the results
        self._pre_tokens: int | None = None
        self._sessions: set[str] = set()

    # -- lines ---------------------------------------------------------------------------------

    def feed(self, number: int, obj: dict[str, Any]) -> list[Entry]:
        """The entries one good line produces (maybe none, maybe a flushed reply's)."""
        report = self.report
        try:
            line = msgspec.convert(obj, _Line)
        except msgspec.ValidationError as exc:
            report.refuse_line(number, f"invalid claude-code {obj.get('type')!r} line: {exc}")
            return []
        if line.type in ("user", "assistant") and line.message is None:
            report.refuse_line(number, f"a claude-code {line.type!r} line without a 'message' object")
            return []
        count(report.line_types, line.type)
        ts = self.clock(line.timestamp)
        base = line.uuid or f"cc-{number}"
        out: list[Entry] = []
        if line.session_id and line.session_id not in self._sessions:
            self._sessions.add(line.session_id)
            if report.source_session_id is None:
                report.source_session_id = line.session_id
                out.append(Metadata(ts=ts, kind="session", data={"format": FORMAT, **{
                    k: obj[k] for k in ("sessionId", "cwd", "version", "gitBranch", "userType") if k in obj}}))
            else:
                report.notes.append(f"line {number}: another source session id {line.session_id}")
        if line.type == "assistant" and line.message is not None and not line.is_sidechain:
            return out + self._assistant(line.message, base, ts)
        if line.type in _SKIPPED or (line.type == "progress" and (line.data or {}).get("type") != "agent_progress"):
            reason = line.type if line.type != "progress" else f"progress:{(line.data or {}).get('type')}"
            count(report.skipped, reason)
            return out
        # Every other line that produces entries closes the open reply first: its tool calls
        # must come before any result, and the order of the file is kept.
        out = self._flush() + out
        if line.type == "user" and line.message is not None and not line.is_sidechain:
            out += self._user(line, line.message, base, ts)
        elif line.type in ("user", "assistant"):  # a subagent's message (isSidechain)
            out.append(Metadata(ts=ts, id=base, kind="subagent", data={"message": obj.get("message")}))
        elif line.type == "progress":
            data = line.data or {}
            out.append(Metadata(ts=ts, id=base, kind="subagent",
                                data={"agentId": data.get("agentId"), "message": data.get("message")}))
        elif line.type == "system" and line.subtype == "compact_boundary":
            pre = (line.compact_metadata or {}).get("preTokens")
            self._pre_tokens = pre if isinstance(pre, int) else None
            out.append(Metadata(ts=ts, id=base, kind="compact_boundary", data=envelope_free(obj)))
        elif line.type == "system":
            out.append(Metadata(ts=ts, id=base, kind="system", data=envelope_free(obj)))
        elif line.type == "summary":
            out.append(Metadata(ts=ts, id=base, kind="title", data=envelope_free(obj)))
        else:
            out.append(Metadata(ts=ts, id=base, kind=f"unknown:{line.type}", data=dict(obj)))
        return out

    def finish(self) -> list[Entry]:
        """The entries still held at the end of the source: the last reply."""
        if len(self._sessions) > 1:
            self.report.notes.append(f"lines from {len(self._sessions)} source sessions were imported as one")
        return self._flush()

    # -- assistant replies -----------------------------------------------------------------------

    def _assistant(self, message: _Message, base: str, ts: int) -> list[Entry]:
        report = self.report
        key = message.id or base  # a line without a message id is a reply of its own
        out: list[Entry] = []
        reply = self._reply
        if reply is not None and reply.message_id == key:
            report.merged_lines += 1
        else:
            out = self._flush()
            if key in self._closed:
                report.continued_lines += 1
                return out + self._continued(message, base, ts)
            reply = self._reply = _Reply(key, base, ts, message.model)
        self._blocks(reply, message.content, base)
        if message.usage:
            reply.usage = message.usage  # the last line's usage is the latest (output grows while streaming)
        return out

    def _blocks(self, reply: _Reply, content: str | list[Any], base: str) -> None:
        """Add a reply line's content blocks to the reply."""
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if not isinstance(block, dict):
                count(self.report.skipped, "malformed content block")
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text") or ""
                if text.strip():
                    reply.texts.append(text)
                else:
                    count(self.report.skipped, "empty text block")
            elif kind == "thinking":
                text = block.get("thinking")
                if isinstance(text, str) and text.strip():
                    reply.thinking.append(text)
                else:
                    count(self.report.skipped, "empty thinking block")
            elif kind == "redacted_thinking":
                reply.extra.append(Metadata(ts=reply.ts, id=f"{base}:thinking:{len(reply.extra)}", kind="thinking",
                                            data={"redacted": True, "message_id": reply.message_id}))
            elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
                name = str(block.get("name", ""))
                self._names[block["id"]] = name
                args = block.get("input")
                reply.extra.append(ToolCall(ts=reply.ts, id=block["id"], name=name,
                                            args=args if isinstance(args, dict) else {"input": args}))
            else:
                # Other blocks (e.g. a server tool's result) are part of the reply's content.
                reply.texts.append(block_text([block]))

    def _continued(self, message: _Message, base: str, ts: int) -> list[Entry]:
        """Entries of a reply line that came after its reply was flushed."""
        reply = _Reply(message.id or base, base, ts, message.model)
        self._blocks(reply, message.content, base)
        head: list[Entry] = []
        if reply.texts or reply.thinking:
            head.append(Assistant(ts=ts, id=base, content="\n\n".join(reply.texts), model=reply.model,
                                  thinking="\n\n".join(reply.thinking)))
        return head + reply.extra

    def _flush(self) -> list[Entry]:
        """The open reply's entries: the assistant message (with its thinking), then its tool calls."""
        reply, self._reply = self._reply, None
        if reply is None:
            return []
        self._closed.add(reply.message_id)
        report = self.report
        report.replies += 1
        if input_side(reply.usage):
            report.requests_with_usage += 1
        else:
            report.requests_without_usage += 1
        head = Assistant(ts=reply.ts, id=reply.ident, content="\n\n".join(reply.texts), model=reply.model,
                         usage=_ints(reply.usage), thinking="\n\n".join(reply.thinking))
        return [head, *reply.extra]

    # -- user lines ------------------------------------------------------------------------------

    def _user(self, line: _Line, message: _Message, base: str, ts: int) -> list[Entry]:
        ids = LineIds(base)
        if line.is_compact_summary:
            self.report.compactions += 1
            entry = Compaction(ts=ts, id=ids.next(), summary=block_text(message.content), tokens_before=self._pre_tokens,
                               notes=["imported from a Claude Code compaction (isCompactSummary)"])
            self._pre_tokens = None
            return [entry]
        if isinstance(message.content, str):
            return [User(ts=ts, id=ids.next(), content=message.content)]
        out: list[Entry] = []
        text: list[Any] = []
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if text:
                    out.append(User(ts=ts, id=ids.next(), content=block_text(text)))
                    text = []
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    count(self.report.skipped, "tool_result without tool_use_id")
                    continue
                out.append(ToolResult(ts=ts, id=ids.next(), call_id=call_id, content=block_text(block.get("content")),
                                      name=self._names.get(call_id), is_error=bool(block.get("is_error"))))
            else:
                text.append(block)
        if text:
            out.append(User(ts=ts, id=ids.next(), content=block_text(text)))
        return out

