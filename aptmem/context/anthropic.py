"""A rendered context in the Anthropic Messages format (``client.messages.create(system=..., messages=...)``).

* the system sections (system prompt, working memory, summary) become ``system``, apart from the
  messages (left out when there are none);
* texts become ``text`` blocks, tool calls ``tool_use`` blocks (``id``, ``name``, ``input``) in
  the assistant's message, their answers ``tool_result`` blocks (``tool_use_id``, ``content``,
  ``is_error`` when it failed) in the next user message;
* consecutive messages of one role are merged into one message (tool results first, as the API
  wants them), so roles alternate;
* a tool result of only white space is sent without content; a context that ends with an
  assistant text has its trailing white space cut: the API reads a final assistant message as the
  start of its reply and refuses trailing white space there.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec

from aptmem.context.render import Message, RenderedContext

__all__ = ["AnthropicMessage", "TextBlock", "ToolResultBlock", "ToolUseBlock", "to_anthropic"]


class TextBlock(msgspec.Struct, tag_field="type", tag="text", kw_only=True):
    """A ``text`` content block."""

    text: str


class ToolUseBlock(msgspec.Struct, tag_field="type", tag="tool_use", kw_only=True):
    """A ``tool_use`` content block: a call by the assistant."""

    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(msgspec.Struct, tag_field="type", tag="tool_result", kw_only=True, omit_defaults=True):
    """A ``tool_result`` content block: the answer to a ``tool_use`` of the previous message."""

    tool_use_id: str
    content: str | None = None
    is_error: bool = False


Block = Union[TextBlock, ToolUseBlock, ToolResultBlock]


class AnthropicMessage(msgspec.Struct, kw_only=True):
    """One message: a role and its content blocks."""

    role: Literal["user", "assistant"]
    content: list[Block]


def _blocks(message: Message) -> tuple[Literal["user", "assistant"], list[Block]]:
    if message.role == "tool":
        content = message.text if message.text.strip() else None
        return "user", [ToolResultBlock(tool_use_id=message.call_id or "", content=content, is_error=message.is_error)]
    blocks: list[Block] = [TextBlock(text=message.text)] if message.text else []
    blocks.extend(ToolUseBlock(id=u.id, name=u.name, input=u.args) for u in message.calls)
    return ("user" if message.role == "user" else "assistant"), blocks


def anthropic_messages(rendered: RenderedContext) -> list[AnthropicMessage]:
    """The typed messages of the Anthropic rendering, consecutive roles merged."""
    out: list[AnthropicMessage] = []
    for message in rendered.messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1].role == role:
            out[-1].content.extend(blocks)
        else:
            out.append(AnthropicMessage(role=role, content=blocks))
    if out and out[-1].role == "assistant" and isinstance(out[-1].content[-1], TextBlock):
        last = out[-1].content
        last[-1] = TextBlock(text=last[-1].text.rstrip())  # not empty: texts hold more than white space
    return out


def to_anthropic(rendered: RenderedContext) -> dict[str, Any]:
    """``{"system": "...", "messages": [...]}`` (no ``system`` when empty), as plain JSON values."""
    body: dict[str, Any] = {"system": rendered.system_text} if rendered.system else {}
    body["messages"] = msgspec.to_builtins(anthropic_messages(rendered))
    return body
