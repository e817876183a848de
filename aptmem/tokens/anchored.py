"""The ``anchored`` tier: the provider's latest count of a request, plus what was appended since.

What the agents themselves do (Claude Code, pi): the best count of the next request is the
input side the provider reported for the latest one, plus an estimate of everything the
session appended after it. Only the increment is estimated, so the fixed part, the provider's
tokenizer and its framing are already in the anchor. Per step:

* the reply that carried the usage comes back in the next request: it counts as the larger of
  its estimate (text, thinking, its tool calls, in the context model) and the output the
  provider reported for it plus framing, because a provider that shows only a summary of its
  thinking, or none, still counts all of it in the output (and in the next input);
* the entries after the reply (tool results, user messages) count by the context model;
* a compaction drops the anchor: the request it makes holds the summary and the kept entries,
  not what the anchor counted. Until the first usage after it, the count is the context model's
  (fixed part + live context + what the profile saw agents re-attach after a compaction); that
  usage is the new anchor;
* before any usage, the count is the context model's; the first usage also teaches the model
  the session's fixed part (reported minus the entries' estimate).

A reply whose usage reports no input (an aborted request) is not an anchor; it counts as appended.
"""

from __future__ import annotations

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall
from aptmem.tokens.context_model import ContextModel, messages_added
from aptmem.tokens.live import LiveCounts
from aptmem.tokens.usage_fields import input_side, output_side

__all__ = ["AnchoredCounter", "ModelCounter"]


class ModelCounter:
    """The context model alone: fixed part plus the live context, each entry counted by the model."""

    def __init__(self, model: ContextModel) -> None:
        self.model = model
        self.live = LiveCounts()

    def add(self, entry: Entry) -> None:
        """Count ``entry`` into the live context."""
        self.live.add(entry, self.model.count_entry(entry))

    @property
    def total(self) -> int:
        """The model's count of the request the live context makes now."""
        return self.model.fixed + self.live.total


class AnchoredCounter:
    """The anchored tier over a context model (see the module docstring).

    ``learn_fixed``: take the session's fixed part from its first reported usage (default); off,
    the model keeps the fixed part it was given.
    """

    def __init__(self, model: ContextModel, *, learn_fixed: bool = True) -> None:
        self.model = model
        self.live = LiveCounts()
        self._learn = learn_fixed
        self._anchor: int | None = None
        self._reply = 0  # model tokens of the anchor's reply: the assistant entry and its tool calls
        self._reply_reported = 0  # the provider's output count of that reply, plus its framing
        self._in_reply = False
        self._since = 0  # model tokens appended after the reply
        self._after_compaction = False
        #: requests with usage seen, and compactions seen
        self.anchors = 0
        self.compactions = 0

    @property
    def anchored(self) -> bool:
        """Whether the count rests on a reported usage (else it is the context model's)."""
        return self._anchor is not None

    @property
    def total(self) -> int:
        """Tokens of the next request."""
        if self._anchor is None:
            reattached = self.model.profile.reattached if self._after_compaction else 0
            return self.model.fixed + self.live.total + reattached
        return self._anchor + max(self._reply, self._reply_reported) + self._since

    def add(self, entry: Entry) -> None:
        """Take the next entry of the session."""
        count = self.model.count_entry(entry)
        before = self.live.total
        self.live.add(entry, count)
        if isinstance(entry, Compaction):
            self.compactions += 1
            self._anchor = None
            self._after_compaction = True
            return
        reported = input_side(entry.usage) if isinstance(entry, Assistant) else None
        if reported:
            if self._learn and self.anchors == 0:
                self.model.learn_fixed(reported, before)
            self.anchors += 1
            self._anchor = reported
            self._after_compaction = False
            output = output_side(entry.usage) or 0
            self._reply_reported = output + round(self.model.framing * messages_added(entry))
            self._reply, self._since, self._in_reply = count, 0, True
            return
        if self._in_reply and isinstance(entry, ToolCall):
            self._reply += count
            self._reply_reported += round(self.model.framing * messages_added(entry))
            return
        if self._in_reply and isinstance(entry, Metadata):
            return  # bookkeeping of the reply (a stop reason, a redacted block): not sent, nothing ends
        self._in_reply = False
        self._since += count
