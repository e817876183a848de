"""aptmem entries as LangChain messages, and back: the mapping the LangChain peer store uses.

=====================  ==========================================================================
aptmem entry           LangChain message (``langchain_core.messages``)
=====================  ==========================================================================
``user``               ``HumanMessage(content, id)``
``assistant``          ``AIMessage(content, id, response_metadata={"model_name": model})``
``tool_call``          ``AIMessage(content="", tool_calls=[{"name", "args", "id"}])``, one call a message
``tool_result``        ``ToolMessage(content, tool_call_id=call_id, name, status="error"|"success", id)``
``compaction``         ``SystemMessage(content=summary, id)``: the summary, as LangChain's own
                       summarizing memories hand it to the model
``metadata``           ``ChatMessage(role="aptmem.metadata", content="")``: LangChain has no such message
unknown type           ``ChatMessage(role="aptmem.unknown", content="")``
=====================  ==========================================================================

What a message's own fields cannot hold (every entry's ``ts``; an assistant's provider
``usage``, whose keys are free, unlike LangChain's fixed ``usage_metadata``; a compaction's
``first_kept``, token counts and notes; a legacy inline tool ``result``; a metadata entry's
fields; an unknown entry's exact bytes) travels in the message's ``additional_kwargs`` under the
key ``"aptmem"``, LangChain's own place for fields beyond its schema. Reading takes the message's
fields and lays those extras over them, so every entry comes back equal to what was appended. A
message without extras (written by LangChain itself) is read by its type alone, with ``ts`` 0.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage

from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, UnknownEntry, User
from aptmem.errors import InvalidEntry
from strategies.peer_entries import EXTRAS_KEY, entry_fields, entry_from_fields, extras_of, unknown_from_text, unknown_text

__all__ = ["entry_to_message", "message_to_entry", "METADATA_ROLE", "UNKNOWN_ROLE"]

METADATA_ROLE = "aptmem.metadata"
UNKNOWN_ROLE = "aptmem.unknown"
_RAW_KEY = "raw"


def entry_to_message(entry: Entry) -> BaseMessage:
    """Map one entry onto the LangChain message that holds it (raises :class:`InvalidEntry`)."""
    if isinstance(entry, UnknownEntry):
        return ChatMessage(role=UNKNOWN_ROLE, content="", additional_kwargs={EXTRAS_KEY: {_RAW_KEY: unknown_text(entry)}})
    fields = entry_fields(entry)
    ident = fields.get("id")
    if isinstance(entry, User):
        return HumanMessage(content=entry.content, id=ident, additional_kwargs=_extras(fields, ("content", "id")))
    if isinstance(entry, Assistant):
        meta = {"model_name": entry.model} if entry.model is not None else {}
        return AIMessage(content=entry.content, id=ident, response_metadata=meta,
                         additional_kwargs=_extras(fields, ("content", "id", "model")))
    if isinstance(entry, ToolCall):
        call = {"name": entry.name, "args": fields.get("args", {}), "id": ident, "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call], additional_kwargs=_extras(fields, ("name", "args", "id")))
    if isinstance(entry, ToolResult):
        return ToolMessage(content=entry.content, tool_call_id=entry.call_id, name=entry.name, id=ident,
                           status="error" if entry.is_error else "success",
                           additional_kwargs=_extras(fields, ("content", "call_id", "name", "id", "is_error")))
    if isinstance(entry, Compaction):
        return SystemMessage(content=entry.summary, id=ident, additional_kwargs=_extras(fields, ("summary", "id")))
    return ChatMessage(role=METADATA_ROLE, content="", additional_kwargs={EXTRAS_KEY: fields})


def _extras(fields: dict[str, Any], held: tuple[str, ...]) -> dict[str, Any]:
    """``additional_kwargs`` carrying what the message does not hold (always at least ``type`` and ``ts``)."""
    return {EXTRAS_KEY: extras_of(fields, held)}


def message_to_entry(message: BaseMessage, where: str) -> Entry:
    """Map a LangChain message back to the entry it holds; ``where`` names it in errors."""
    extras = message.additional_kwargs.get(EXTRAS_KEY)
    if extras is not None and not isinstance(extras, dict):
        raise InvalidEntry(f"{where}: additional_kwargs[{EXTRAS_KEY!r}] is not an object")
    extras = extras or {}
    if isinstance(message, ChatMessage) and message.role == UNKNOWN_ROLE:
        return unknown_from_text(extras.get(_RAW_KEY), where)
    if isinstance(message, ChatMessage) and message.role == METADATA_ROLE:
        return entry_from_fields(extras, where)
    fields = _native_fields(message, where)
    if message.id is not None:
        fields["id"] = message.id
    fields.update(extras)
    return entry_from_fields(fields, where)


def _native_fields(message: BaseMessage, where: str) -> dict[str, Any]:
    """The entry fields a message holds in LangChain's own fields (``ts`` 0 unless extras give it)."""
    text = _text(message, where)
    if isinstance(message, HumanMessage):
        return {"type": "user", "ts": 0, "content": text}
    if isinstance(message, AIMessage):
        if message.tool_calls:
            if len(message.tool_calls) != 1 or text:
                raise InvalidEntry(f"{where}: an AI message with text or several tool calls is not one aptmem entry")
            call = message.tool_calls[0]
            fields: dict[str, Any] = {"type": "tool_call", "ts": 0, "name": call["name"], "args": call["args"]}
            if call.get("id") is not None:
                fields["id"] = call["id"]
            return fields
        fields = {"type": "assistant", "ts": 0, "content": text}
        model = message.response_metadata.get("model_name")
        if model is not None:
            fields["model"] = model
        return fields
    if isinstance(message, ToolMessage):
        fields = {"type": "tool_result", "ts": 0, "call_id": message.tool_call_id, "content": text}
        if message.name is not None:
            fields["name"] = message.name
        if message.status == "error":
            fields["is_error"] = True
        return fields
    if isinstance(message, SystemMessage):
        return {"type": "compaction", "ts": 0, "summary": text}
    raise InvalidEntry(f"{where}: a {type(message).__name__} ({message.type!r}) maps onto no aptmem entry")


def _text(message: BaseMessage, where: str) -> str:
    """The message's content, which aptmem holds as one string."""
    if not isinstance(message.content, str):
        raise InvalidEntry(f"{where}: content made of blocks, not one string, maps onto no aptmem entry")
    return message.content
