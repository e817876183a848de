"""Context assembly, as the original design has it: read memory before reasoning.

What a request carries, in order: the system part (the agent's system prompt, its working
memory, the latest compaction summary) and then the live entries as messages
(:mod:`aptmem.context.render`). :class:`Context` holds that rendering with its token total and
writes it in a provider's format; :func:`read_context` assembles it from a session log and its
sidecar without a :class:`~aptmem.session.Session` (for ``aptmem context`` and ``aptmem ls``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec

from aptmem.context.anthropic import to_anthropic
from aptmem.context.openai import to_openai
from aptmem.context.render import RenderedContext, render_context
from aptmem.working_memory import RESERVED_PREFIX, SessionMeta

__all__ = ["Context", "FORMATS", "read_context", "render_working", "system_sections"]

#: The provider formats a context is written in.
FORMATS = ("openai", "anthropic")


def render_working(meta: SessionMeta | None) -> str:
    """The working memory as the context shows it: the free text, then the working dict as JSON.

    Keys a memory strategy reserved (:data:`~aptmem.working_memory.RESERVED_PREFIX`) are left
    out: the strategy that owns them renders them.
    """
    if meta is None:
        return ""
    parts = []
    if meta.memory:
        parts.append(f"Working memory:\n{meta.memory}")
    working = {k: v for k, v in meta.working.items() if not k.startswith(RESERVED_PREFIX)}
    if working:
        parts.append("Working state: " + msgspec.json.encode(working).decode())
    return "\n\n".join(parts)


def system_sections(system_prompt: str = "", meta: SessionMeta | None = None) -> list[str]:
    """The fixed system sections: the system prompt, then the working memory text and dict."""
    return [part for part in (system_prompt, render_working(meta)) if part]


@dataclass
class Context:
    """What a model is sent now: the rendering, its token total and the window it must fit."""

    rendered: RenderedContext
    tokens: int
    window: int

    @property
    def occupancy(self) -> float:
        """The share of the window the context fills."""
        return self.tokens / self.window

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The OpenAI chat messages (system first), ready for ``chat.completions.create(messages=...)``."""
        return self.openai()["messages"]

    def openai(self) -> dict[str, Any]:
        """``{"messages": [...]}`` in the OpenAI chat format."""
        return to_openai(self.rendered)

    def anthropic(self) -> dict[str, Any]:
        """``{"system": "...", "messages": [...]}`` in the Anthropic Messages format."""
        return to_anthropic(self.rendered)

    def as_format(self, fmt: str) -> dict[str, Any]:
        """The context in ``fmt`` (one of :data:`FORMATS`)."""
        if fmt == "openai":
            return self.openai()
        if fmt == "anthropic":
            return self.anthropic()
        raise ValueError(f"unknown context format {fmt!r}; choose one of {', '.join(FORMATS)}")

    def text(self) -> str:
        """Every text the model is sent (system, messages, tool names and arguments), one per line."""
        parts = list(self.rendered.system)
        for message in self.rendered.messages:
            if message.text:
                parts.append(message.text)
            parts.extend(f"{u.name} {u.arguments}" for u in message.calls)
        return "\n".join(parts)


def _through_strategy(live: list[Any], sections: list[str], system_prompt: str,
                      meta: SessionMeta | None) -> tuple[list[Any], list[str]]:
    """The view and system sections of the memory strategy the sidecar names (else as given)."""
    from aptmem.entries import User
    from aptmem.memory.registry import recorded_strategy  # the strategies import this module
    from aptmem.tokens.factory import get_estimator

    recorded = recorded_strategy(meta)
    if recorded is None:
        return live, sections
    strategy, record = recorded
    view = strategy.shown(live, None) or live
    query = next((e.content for e in reversed(view) if isinstance(e, User)), "")
    extra = strategy.system_text(meta, query=query, window=record.window, count=get_estimator(record.tier, record.tokenizer).count)
    return view, [part for part in (system_prompt, extra) if part]


def read_context(path: str | os.PathLike[str], *, system_prompt: str = "", meta: SessionMeta | None = None,
                 count: Any = None, window: int = 0, mode: str = "skip") -> Context:
    """The live context of the session log at ``path`` (from its latest compaction on), rendered.

    ``meta`` is the session's working memory (its sidecar), ``count`` a text -> tokens function
    for :attr:`Context.tokens` (0 without one). A session whose sidecar names the memory strategy
    it ran under (:func:`aptmem.memory.registry.record_strategy`) is rendered through it, as the
    session itself shows it: the strategy's view of the entries and its system text for the
    current turn. The log is read backwards from its end, so this
    costs the live context, not the history.
    """
    from aptmem.compaction.compactor import apply_truncations
    from aptmem.context.render import ContextBuilder
    from aptmem.tailscan import read_live_tail

    live = apply_truncations(read_live_tail(path, mode))
    sections = system_sections(system_prompt, meta)
    live, sections = _through_strategy(live, sections, system_prompt, meta)
    if count is None:
        return Context(render_context(live, sections), 0, window)
    builder = ContextBuilder(sections, count=count)
    builder.extend(live)
    return Context(builder.rendered(), builder.total, window)
