"""The context model: every part of a request a provider bills, estimated from a session.

A provider counts more than the messages a session holds (DESIGN.md, "Counting the context the
provider counts"). The model adds up:

* the **fixed part**: system prompt and tool definitions. Given as text or files (counted), as
  a token count, or learned from the first usage the provider reports (what it counted minus
  what the entries account for); until then, the fixed part the profile saw;
* the **entries**, as the request carries them, in the provider's tokens: the reference
  tokenizer's count times the profile's ``ratio``;
* **framing**: the profile's tokens per message beyond its text;
* **thinking**: a reply's reasoning text, counted like its text (a provider that keeps earlier
  turns' thinking bills it; one that drops it is overcounted, the safe side).

The text of an entry comes from :func:`sent_parts`, the one place that depends on how an entry
is rendered (today :func:`aptmem.tokens.render.render_entry`): switching the renderer means
changing that function and recalibrating the profiles with the same command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from aptmem.entries import Assistant, Entry, ToolCall
from aptmem.tokens.base import Estimator
from aptmem.tokens.profile import ProviderProfile
from aptmem.tokens.render import message_count, render_entry

__all__ = ["ContextModel", "sent_parts"]


def messages_added(entry: Entry) -> int:
    """How many messages ``entry`` adds to a request as it is appended.

    A call without an inline result is one message: the placeholder answer a rendering gives it
    alone is replaced by its result, which counts its own message when it comes.
    """
    if isinstance(entry, ToolCall) and entry.result is None:
        return 1
    return message_count(entry)


def sent_parts(entry: Entry) -> tuple[str, str, int]:
    """What a request carries of ``entry``: its text, its thinking, and how many messages it adds."""
    thinking = entry.thinking if isinstance(entry, Assistant) else ""
    return render_entry(entry), thinking, messages_added(entry)


class ContextModel:
    """Counts a request as the provider does, from a profile and a reference-tokenizer estimator.

    ``estimator`` counts the reference tokens (the precise tier of ``profile.reference`` is the
    one the profile was fitted with; a cheaper tier trades accuracy for speed). ``fixed`` is the
    fixed part in provider tokens; None takes the profile's until :meth:`learn_fixed`.
    """

    def __init__(self, profile: ProviderProfile, estimator: Estimator, *, fixed: int | None = None) -> None:
        self.profile = profile
        self.estimator = estimator
        self.ratio = profile.ratio
        self.framing = profile.framing
        self.fixed = profile.fixed if fixed is None else fixed
        #: where the fixed part comes from: profile, given, text, learned
        self.fixed_source = "profile" if fixed is None else "given"

    @classmethod
    def with_fixed_text(cls, profile: ProviderProfile, estimator: Estimator, texts: Iterable[str]) -> ContextModel:
        """A model whose fixed part is ``texts`` (the system prompt, each tool definition), counted."""
        model = cls(profile, estimator)
        parts = [t for t in texts if t]
        model.fixed = sum(model.count_text(t) for t in parts) + round(model.framing * len(parts))
        model.fixed_source = "text"
        return model

    @classmethod
    def with_fixed_files(cls, profile: ProviderProfile, estimator: Estimator,
                         paths: Iterable[str | os.PathLike[str]]) -> ContextModel:
        """A model whose fixed part is the text of ``paths`` (UTF-8), counted; an unreadable file raises OSError."""
        return cls.with_fixed_text(profile, estimator, [Path(p).read_text(encoding="utf-8") for p in paths])

    def learn_fixed(self, reported: int, entries: int) -> int:
        """Take the fixed part from a reported request: ``reported`` minus the ``entries``' estimate; return it."""
        self.fixed = max(0, reported - entries)
        self.fixed_source = "learned"
        return self.fixed

    def count_text(self, text: str) -> int:
        """Provider tokens of a text (no framing)."""
        return round(self.ratio * self.estimator.count(text)) if text else 0

    def count_entry(self, entry: Entry) -> int:
        """Provider tokens of an entry in a request: its text and thinking times the ratio, plus framing."""
        text, thinking, messages = sent_parts(entry)
        if not messages:
            return 0
        tokens = self.estimator.count(text) + (self.estimator.count(thinking) if thinking else 0)
        return round(self.ratio * tokens + self.framing * messages)

    def __repr__(self) -> str:
        return (f"ContextModel({self.profile.name}, {self.estimator.name}, ratio={self.ratio:g}, "
                f"framing={self.framing:g}, fixed={self.fixed} ({self.fixed_source}))")
