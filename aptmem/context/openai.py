"""A rendered context in the OpenAI chat format (``client.chat.completions.create(messages=...)``).

* the system sections (system prompt, working memory, summary) become one ``system`` message,
  first;
* user and assistant texts become messages of their role with the text as ``content``;
* a group of tool calls becomes one ``assistant`` message with ``tool_calls`` (each ``id``,
  ``type: "function"``, ``function.name`` and ``function.arguments`` as a JSON string) and no
  ``content``; each answer follows as a ``tool`` message with its ``tool_call_id``. The chat
  format has no error flag on a tool message: an error's text is sent as it is.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from aptmem.context.render import Message, RenderedContext

__all__ = ["ChatMessage", "FunctionCall", "ToolCallParam", "to_openai"]


class FunctionCall(msgspec.Struct, kw_only=True):
    """``function`` of a tool call: the name and the arguments as one JSON string."""

    name: str
    arguments: str


class ToolCallParam(msgspec.Struct, kw_only=True):
    """One entry of an assistant message's ``tool_calls``."""

    id: str
    function: FunctionCall
    type: Literal["function"] = "function"


class ChatMessage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One chat message; fields left at None are not sent."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCallParam] | None = None
    tool_call_id: str | None = None


def _message(message: Message) -> ChatMessage:
    if message.role == "tool":
        return ChatMessage(role="tool", content=message.text, tool_call_id=message.call_id)
    if message.calls:
        calls = [ToolCallParam(id=u.id, function=FunctionCall(name=u.name, arguments=u.arguments)) for u in message.calls]
        return ChatMessage(role="assistant", content=message.text or None, tool_calls=calls)
    return ChatMessage(role=message.role, content=message.text)


def chat_messages(rendered: RenderedContext) -> list[ChatMessage]:
    """The typed messages of the OpenAI rendering, system message first."""
    out = [ChatMessage(role="system", content=rendered.system_text)] if rendered.system else []
    out.extend(_message(m) for m in rendered.messages)
    return out


def to_openai(rendered: RenderedContext) -> dict[str, Any]:
    """``{"messages": [...]}``: the request body's messages, as plain JSON values."""
    return {"messages": msgspec.to_builtins(chat_messages(rendered))}
