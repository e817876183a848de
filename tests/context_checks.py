"""Checks of a rendered context beyond its types: what a provider refuses even when every field fits.

* OpenAI chat: the system message only first; every assistant message with ``tool_calls`` is
  followed at once by one ``tool`` message per call, with its id; no other ``tool`` message; call
  ids unique in the request.
* Anthropic Messages: roles alternate; every ``tool_use`` of an assistant message is answered by a
  ``tool_result`` at the head of the next user message, and every ``tool_result`` answers one of
  the previous message's; ids unique and of ``[A-Za-z0-9_-]``; no empty text block; a final
  assistant text does not end in white space.
"""

from __future__ import annotations

import re
from typing import Any

from sdk_schema import anthropic_request, openai_request

__all__ = ["check_anthropic", "check_openai", "check_both"]

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_openai(body: dict[str, Any]) -> None:
    """Validate ``{"messages": [...]}`` against the SDK's types and the ordering rules."""
    openai_request(body)
    messages = body["messages"]
    ids: set[str] = set()
    i = 0
    while i < len(messages):
        m = messages[i]
        assert m["role"] != "system" or i == 0, f"message {i}: a system message after the first"
        assert m["role"] != "tool", f"message {i}: a tool message that answers no call just before it"
        i += 1
        calls = [c["id"] for c in m.get("tool_calls", [])]
        if not calls:
            continue
        assert len(set(calls)) == len(calls) and not ids & set(calls), f"message {i - 1}: a call id used twice"
        ids |= set(calls)
        answers = [x.get("tool_call_id") for x in messages[i : i + len(calls)] if x["role"] == "tool"]
        assert sorted(answers) == sorted(calls), f"message {i - 1}: calls {calls} answered by {answers}"
        for x in messages[i : i + len(calls)]:
            assert isinstance(x["content"], str)
        i += len(calls)


def check_anthropic(body: dict[str, Any]) -> None:
    """Validate ``{"system": ..., "messages": [...]}`` against the SDK's types and the pairing rules."""
    anthropic_request(body)
    assert body.get("system", "x") != "", "an empty system is left out"
    messages = body["messages"]
    ids: set[str] = set()
    for i, m in enumerate(messages):
        if i:
            assert m["role"] != messages[i - 1]["role"], f"message {i}: two {m['role']} messages in a row"
        blocks = m["content"]
        assert blocks, f"message {i}: no content"
        for b in blocks:
            if b["type"] == "text":
                assert b["text"], f"message {i}: an empty text block"
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        for ident in uses:
            assert _ID.fullmatch(ident) and ident not in ids, f"message {i}: bad or reused tool_use id {ident!r}"
            ids.add(ident)
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if results:
            lead = [b["type"] for b in blocks[: len(results)]]
            assert lead == ["tool_result"] * len(results), f"message {i}: tool results must come first"
            previous = [b["id"] for b in messages[i - 1]["content"] if b["type"] == "tool_use"] if i else []
            assert sorted(results) == sorted(previous), f"message {i}: results {results} for calls {previous}"
        if uses:
            following = messages[i + 1]["content"] if i + 1 < len(messages) else []
            answered = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
            assert sorted(answered) == sorted(uses), f"message {i}: calls {uses} answered by {answered}"
    if messages and messages[-1]["role"] == "assistant":
        last = messages[-1]["content"][-1]
        assert last["type"] != "text" or last["text"] == last["text"].rstrip(), "a final assistant text ends in white space"


def check_both(context: Any) -> None:
    """Check a :class:`~aptmem.context.assemble.Context` in both formats."""
    check_openai(context.openai())
    check_anthropic(context.anthropic())
