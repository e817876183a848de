"""What a model is sent of session entries, and what that costs in tokens.

The counts are of the rendering a provider is sent (:mod:`aptmem.context.render`): each message's
framing (:data:`MESSAGE_OVERHEAD` and its role), its text, each tool use's id, name and JSON
arguments, a tool message's call id. Entries are counted in their context, because a tool
result's tokens depend on the call it answers (it takes over that call's answer), and a call
with no answer is sent with a placeholder answer:

* :func:`count_entries` counts a sequence of entries as one rendering (what a request carries);
* :func:`count_entry` counts one entry's share of a well-formed context (a call without its
  answer, a result as the message answering its call), for callers that count entry by entry.

:func:`render_entry` is something else: a plain-text line per entry (``"<role>\\n<content>"``, a
call as ``"assistant tool_call <name>\\n<args as JSON>"``, a summary as ``"summary\\n..."``), for
transcripts a summarizer reads and for searching a context's text. It is not what is counted.
:func:`role_of` names the chat role of the message an entry becomes (``system`` for a summary).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from aptmem.context.render import MESSAGE_OVERHEAD, NO_RESULT, ContextBuilder
from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, UnknownEntry, User
from aptmem.tokens.base import Estimator

__all__ = ["MESSAGE_OVERHEAD", "count_entries", "count_entry", "message_count", "render_entry", "role_of"]

_encoder = msgspec.json.Encoder()


def _json(value: object) -> str:
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return repr(value)  # arguments built in memory may hold what JSON cannot: show something


def render_entry(entry: Entry) -> str:
    """A plain-text line for ``entry`` ("" for metadata); see the module docstring."""
    if isinstance(entry, User):
        return "user\n" + entry.content
    if isinstance(entry, Assistant):
        return "assistant\n" + entry.content
    if isinstance(entry, ToolCall):
        text = f"assistant tool_call {entry.name}\n{_json(entry.args)}"
        if entry.result is not None:
            text += f"\ntool {entry.name}\n{entry.result}"
        return text
    if isinstance(entry, ToolResult):
        head = "tool" + (f" {entry.name}" if entry.name else "") + (" error" if entry.is_error else "")
        return f"{head}\n{entry.content}"
    if isinstance(entry, Compaction):  # CompactionMarker is a Compaction
        return "summary\n" + entry.summary
    if isinstance(entry, Metadata):
        return ""
    if isinstance(entry, UnknownEntry):
        return entry.raw.decode("utf-8", "replace")
    raise TypeError(f"not a session entry: {type(entry).__name__}")


def role_of(entry: Entry) -> str:
    """The chat role of the (first) message ``entry`` becomes: ``user``, ``assistant``, ``tool`` or
    ``system`` (a compaction summary); ``""`` for metadata and unknown types, which are not sent.
    """
    if isinstance(entry, (Assistant, ToolCall)):
        return "assistant"
    if isinstance(entry, ToolResult):
        return "tool"
    if isinstance(entry, Compaction):
        return "system"
    if isinstance(entry, User):
        return "user"
    if isinstance(entry, (Metadata, UnknownEntry)):
        return ""
    raise TypeError(f"not a session entry: {type(entry).__name__}")


def message_count(entry: Entry) -> int:
    """How many messages ``entry`` alone becomes (a call: itself and its answer; metadata: none)."""
    rendered = ContextBuilder()
    rendered.add(entry)
    out = rendered.rendered()
    return len(out.messages) + bool(out.system)


def count_entries(estimator: Estimator, entries: Iterable[Entry]) -> int:
    """Tokens of ``entries`` rendered together, counted afresh (no system prompt)."""
    builder = ContextBuilder(count=estimator.count)
    builder.extend(entries)
    return builder.total


def count_entry(estimator: Estimator, entry: Entry) -> int:
    """Tokens of ``entry``'s share of a well-formed context, counted alone.

    A call is its tool use in an assistant message (with its inline result as its answer when it
    has one); a result is the ``tool`` message answering its call (frame, call id, content); any
    other entry is counted as it is rendered. Summed over a session this is
    :func:`count_entries` but for what only the whole context shows: calls sharing one message,
    the placeholder answer of an unanswered call, results that answer no call.
    """
    n = estimator.count
    if isinstance(entry, ToolResult):
        ident = entry.call_id or entry.name or ""
        return MESSAGE_OVERHEAD + n("tool") + (n(ident) if ident else 0) + (n(entry.content) if entry.content else 0)
    builder = ContextBuilder(count=n)
    builder.add(entry)
    if isinstance(entry, ToolCall) and entry.result is None:
        # Alone, the call is counted with a placeholder answer; its share leaves the answer to its result.
        call_id = builder.rendered().messages[0].calls[0].id
        return builder.total - (MESSAGE_OVERHEAD + n("tool") + n(call_id) + n(NO_RESULT))
    return builder.total
