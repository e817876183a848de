"""aptmem entries as OpenAI Responses input items, and back: the mapping of the OpenAI Agents peer.

The Agents SDK's sessions hold ``TResponseInputItem`` values, plain dicts in the shapes of the
Responses API, as its ``Runner`` stores them:

=====================  ==========================================================================
aptmem entry           Responses item
=====================  ==========================================================================
``user``               ``{"role": "user", "content": content}``
``assistant``          ``{"type": "message", "role": "assistant", "id", "status": "completed",
                       "content": [{"type": "output_text", "text": content, "annotations": []}]}``
``tool_call``          ``{"type": "function_call", "call_id": id, "name", "arguments": json.dumps(args)}``
``tool_result``        ``{"type": "function_call_output", "call_id", "output": content}``
``compaction``         ``{"role": "system", "content": summary}``: the API's own ``compaction``
                       item holds only encrypted content, so the summary goes as a system message
``metadata``           ``{"type": "aptmem.metadata"}``: the API has no such item
unknown type           ``{"type": "aptmem.unknown"}``
=====================  ==========================================================================

What an item cannot hold (``ts``, ids of user and tool-result entries, ``model`` and ``usage``,
``is_error``, a tool result's ``name``, a compaction's ``first_kept`` and counts, a metadata
entry's fields, an unknown entry's exact bytes) is carried under the item's key ``"aptmem"``. The
SDK stores items as given (``json.dumps`` into its ``message_data`` column); an application that
sends stored items back to the API must drop that key first. Reading lays the extras over the
item's fields, so every entry comes back equal to what was appended; an item without extras
(written by the SDK's ``Runner``) is read by its shape alone, with ``ts`` 0.
"""

from __future__ import annotations

import json
from typing import Any

from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, UnknownEntry, User
from aptmem.errors import InvalidEntry
from strategies.peer_entries import EXTRAS_KEY, entry_fields, entry_from_fields, extras_of, unknown_from_text, unknown_text

__all__ = ["entry_to_item", "item_to_entry", "METADATA_TYPE", "UNKNOWN_TYPE"]

METADATA_TYPE = "aptmem.metadata"
UNKNOWN_TYPE = "aptmem.unknown"
_RAW_KEY = "raw"

Item = dict[str, Any]


def entry_to_item(entry: Entry) -> Item:
    """Map one entry onto the Responses item that holds it (raises :class:`InvalidEntry`)."""
    if isinstance(entry, UnknownEntry):
        return {"type": UNKNOWN_TYPE, EXTRAS_KEY: {_RAW_KEY: unknown_text(entry)}}
    fields = entry_fields(entry)
    if isinstance(entry, User):
        return {"role": "user", "content": entry.content, EXTRAS_KEY: extras_of(fields, ("content",))}
    if isinstance(entry, Assistant):
        item: Item = {"type": "message", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": entry.content, "annotations": []}]}
        if entry.id is not None:
            item["id"] = entry.id
        item[EXTRAS_KEY] = extras_of(fields, ("content", "id"))
        return item
    if isinstance(entry, ToolCall):
        # The API's arguments are a JSON string; the fields are JSON values already.
        item = {"type": "function_call", "call_id": entry.id if entry.id is not None else "", "name": entry.name,
                "arguments": json.dumps(fields.get("args", {}), ensure_ascii=False)}
        extras = extras_of(fields, ("id", "name", "args"))
        if entry.id is None:
            extras["id"] = None  # the API needs a call_id; "" stands in for none
        item[EXTRAS_KEY] = extras
        return item
    if isinstance(entry, ToolResult):
        return {"type": "function_call_output", "call_id": entry.call_id, "output": entry.content,
                EXTRAS_KEY: extras_of(fields, ("call_id", "content"))}
    if isinstance(entry, Compaction):
        return {"role": "system", "content": entry.summary, EXTRAS_KEY: extras_of(fields, ("summary",))}
    return {"type": METADATA_TYPE, EXTRAS_KEY: fields}


def item_to_entry(item: Any, where: str) -> Entry:
    """Map a stored item back to the entry it holds; ``where`` names it in errors."""
    if not isinstance(item, dict):
        raise InvalidEntry(f"{where}: an item is a JSON object, not {type(item).__name__}")
    extras = item.get(EXTRAS_KEY) or {}
    if not isinstance(extras, dict):
        raise InvalidEntry(f"{where}: the item's {EXTRAS_KEY!r} is not an object")
    kind = item.get("type")
    if kind == UNKNOWN_TYPE:
        return unknown_from_text(extras.get(_RAW_KEY), where)
    if kind == METADATA_TYPE:
        return entry_from_fields(extras, where)
    fields = _native_fields(item, kind, where)
    fields.update(extras)
    return entry_from_fields(fields, where)


def _native_fields(item: Item, kind: Any, where: str) -> dict[str, Any]:
    """The entry fields an item holds in the API's own keys (``ts`` 0 unless extras give it)."""
    if kind == "function_call":
        try:
            args = json.loads(item.get("arguments") or "{}")
        except (TypeError, ValueError) as exc:
            raise InvalidEntry(f"{where}: function_call arguments are not JSON ({exc})") from None
        return {"type": "tool_call", "ts": 0, "id": item.get("call_id"), "name": item.get("name"), "args": args}
    if kind == "function_call_output":
        return {"type": "tool_result", "ts": 0, "call_id": item.get("call_id"), "content": _text(item.get("output"), where)}
    if kind in (None, "message"):
        role = item.get("role")
        text = _text(item.get("content"), where)
        if role == "user":
            return {"type": "user", "ts": 0, "content": text}
        if role == "assistant":
            fields: dict[str, Any] = {"type": "assistant", "ts": 0, "content": text}
            if item.get("id") is not None:
                fields["id"] = item["id"]
            return fields
        if role in ("system", "developer"):
            return {"type": "compaction", "ts": 0, "summary": text}
    raise InvalidEntry(f"{where}: an item of type {kind!r} maps onto no aptmem entry")


def _text(content: Any, where: str) -> str:
    """One string from an item's content: a string, or the text of its text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) and isinstance(part.get("text"), str) for part in content):
        return "".join(part["text"] for part in content)
    raise InvalidEntry(f"{where}: content that is not text maps onto no aptmem entry")
