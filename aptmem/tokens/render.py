"""What a model sees of a session entry, and what that costs in tokens.

:func:`role_of` gives the chat role of the message an entry becomes (``user``, ``assistant``,
``tool``, ``system`` for a summary); :func:`render_entry` already starts with that role line,
so a caller building chat messages that carry the role separately pays it twice in text.

:func:`render_entry` is the text of an entry as a chat request carries it: the role, the tool
name, the arguments as compact JSON, the content or result. What is sent, per entry type:

* ``user`` / ``assistant``: ``"<role>\\n<content>"``. An assistant's ``model`` and ``usage``
  are bookkeeping, not sent.
* ``tool_call``: ``"assistant tool_call <name>\\n<args as JSON>"``; the original design's inline
  ``result`` follows as a second message, ``"\\ntool <name>\\n<result>"``.
* ``tool_result``: ``"tool <name>\\n<content>"`` (``"tool\\n..."`` when the name is unknown),
  with ``error`` after the name when ``is_error``: providers pass that flag along.
* ``compaction`` (and the original ``compaction_marker``): ``"summary\\n<summary>"``, the text a
  session puts in front of the kept turns. ``first_kept``, the token figures and ``notes`` are
  bookkeeping, not sent.
* ``metadata``: nothing; it is not conversation. It counts 0 tokens and no message.
* an unknown type: its raw JSON line. We cannot know what a newer writer sends, and counting
  too much is the safe side for a context that must not overflow.

Per message, chat formats add tokens the text does not show: OpenAI's cookbook
(``num_tokens_from_messages``) counts ``tokens_per_message = 3`` beside the role and the
content. :data:`MESSAGE_OVERHEAD` is that 3, counted once per message an entry becomes
(:func:`message_count`). With the newline the rendering puts after the role, a message costs
what ChatML's ``<|im_start|>role\\n ... <|im_end|>\\n`` does: "hello world" from the user is
7 cl100k_base tokens (the cookbook's gpt-4-0613 formula says 6).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, UnknownEntry, User
from aptmem.tokens.base import Estimator

__all__ = ["MESSAGE_OVERHEAD", "count_entry", "count_entries", "message_count", "render_entry", "role_of"]

#: Tokens a chat format adds per message beyond its role and content (OpenAI: 3).
MESSAGE_OVERHEAD = 3

_encoder = msgspec.json.Encoder()


def _json(value: object) -> str:
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return repr(value)  # arguments built in memory may hold what JSON cannot: count something


def render_entry(entry: Entry) -> str:
    """Return the text a model sees for ``entry`` ("" for metadata); see the module docstring."""
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
    ``system`` (a compaction summary); ``""`` for metadata, which becomes no message.

    An unknown entry is ``user``: it is counted as one message (its raw line), and a client that
    forwarded it would most plausibly send it as user content.
    """
    if isinstance(entry, (Assistant, ToolCall)):
        return "assistant"
    if isinstance(entry, ToolResult):
        return "tool"
    if isinstance(entry, Compaction):
        return "system"
    if isinstance(entry, Metadata):
        return ""
    if isinstance(entry, (User, UnknownEntry)):
        return "user"
    raise TypeError(f"not a session entry: {type(entry).__name__}")


def message_count(entry: Entry) -> int:
    """How many chat messages ``entry`` becomes: 0 (metadata), 2 (a call with an inline result), else 1."""
    if isinstance(entry, Metadata):
        return 0
    if isinstance(entry, ToolCall) and entry.result is not None:
        return 2
    return 1


def count_entry(estimator: Estimator, entry: Entry) -> int:
    """Tokens of ``entry`` in a request: its rendered text plus :data:`MESSAGE_OVERHEAD` per message."""
    messages = message_count(entry)
    if not messages:
        return 0
    return estimator.count(render_entry(entry)) + messages * MESSAGE_OVERHEAD


def count_entries(estimator: Estimator, entries: Iterable[Entry]) -> int:
    """Tokens of several entries, counted afresh: the sum of :func:`count_entry`."""
    return sum(count_entry(estimator, e) for e in entries)
