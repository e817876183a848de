"""The token counts a provider reports on a reply, read the same way whatever the spelling.

An assistant entry's ``usage`` is the provider's own integer counts as the agent wrote them:

* Anthropic (Claude Code): ``input_tokens`` (uncached), ``cache_creation_input_tokens``,
  ``cache_read_input_tokens``, ``output_tokens``;
* pi: ``input``, ``cacheRead``, ``cacheWrite``, ``output`` (and ``totalTokens``);
* OpenAI: ``prompt_tokens`` / ``completion_tokens`` (Chat Completions), or ``input_tokens`` /
  ``output_tokens`` with the cached part already inside ``input_tokens`` (Responses).

The input side is the size of the request that produced the reply: every part of it the
provider billed (system prompt, tool definitions, messages, framing), cached or not.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["input_side", "output_side"]

#: Input-side keys by spelling; a usage holds the keys of one spelling.
_INPUT_KEYS = (
    ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
    ("input", "cacheRead", "cacheWrite"),
    ("prompt_tokens",),
)
_OUTPUT_KEYS = ("output_tokens", "output", "completion_tokens")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def input_side(usage: Mapping[str, object] | None) -> int | None:
    """The tokens of the request a usage reports (None when it names no input count)."""
    if not usage:
        return None
    for keys in _INPUT_KEYS:
        if keys[0] in usage:
            return sum(v for k in keys if (v := _int(usage.get(k))) is not None)
    return None


def output_side(usage: Mapping[str, object] | None) -> int | None:
    """The tokens the provider reports it generated for the reply (text, thinking, tool calls), or None."""
    if not usage:
        return None
    for key in _OUTPUT_KEYS:
        if (value := _int(usage.get(key))) is not None:
            return value
    return None
