"""What a session's trigger counts when it knows its provider: the anchored tier whenever usage is present.

A :class:`~aptmem.session.Session` given a :class:`~aptmem.tokens.context_model.ContextModel`
counts its next request as the provider will (DESIGN.md, "Counting the context the provider
counts"): the input the provider reported for the latest request plus the model's estimate of
what was appended since (:class:`~aptmem.tokens.anchored.AnchoredCounter`), and, before any usage
or after a compaction until the first usage after it, the context model alone (fixed part, the
entries in provider tokens, framing, thinking).

After the session's own compaction (and when a session is opened from its store) the count starts
again from the live context (the summary and the kept entries), by the model: that request is not
what any earlier usage counted. Nothing is
re-attached by aptmem's own compaction, so the profile's ``reattached`` (what agents send again
after theirs) is not added.

A compaction the session plans while it counts this way plans in the same units
(:meth:`ProviderCount.count_entry`, :attr:`ProviderCount.fixed`): its target then leaves room for
the fixed part (system prompt and tool definitions) the provider bills on every request, so the
request right after it is at the target by this count too.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import msgspec

from aptmem.entries import Assistant, Entry
from aptmem.tokens.anchored import AnchoredCounter
from aptmem.tokens.context_model import ContextModel

__all__ = ["ProviderCount"]


class ProviderCount:
    """The anchored count of a session's next request over one context model (see the module docstring)."""

    def __init__(self, model: ContextModel) -> None:
        # A copy: the caller's model keeps its profile (what agents re-attach is theirs, not aptmem's).
        self.model = copy.copy(model)
        self.model.profile = msgspec.structs.replace(model.profile, reattached=0)
        self._counter = AnchoredCounter(self.model)
        # Entry counts for planning a compaction, by object (the entry is held so its id is not reused).
        self._counts: dict[int, tuple[Entry, int]] = {}

    @property
    def anchored(self) -> bool:
        """Whether the count rests on a usage the provider reported (else it is the context model's)."""
        return self._counter.anchored

    @property
    def total(self) -> int:
        """Tokens of the next request, as the provider will count them."""
        return self._counter.total

    @property
    def fixed(self) -> int:
        """The fixed part (system prompt, tool definitions) in provider tokens: given, or learned from usage."""
        return self.model.fixed

    def count_entry(self, entry: Entry) -> int:
        """Provider tokens of ``entry`` as the next request carries it (remembered per entry object)."""
        held = self._counts.get(id(entry))
        if held is not None and held[0] is entry:
            return held[1]
        count = self.model.count_entry(entry)
        self._counts[id(entry)] = (entry, count)
        return count

    def count_text(self, text: str) -> int:
        """Provider tokens of a text (a summary), without framing."""
        return self.model.count_text(text)

    def add(self, entry: Entry) -> None:
        """Take an entry the session appended."""
        self._counter.add(entry)

    def reset(self, live: Iterable[Entry]) -> None:
        """Count afresh from ``live`` (after a compaction, or a session opened from its store).

        The usage a kept reply carries counted a request from before the compaction, not the one
        the live context makes now: it is no anchor, so ``live`` is counted by the model alone.
        The fixed part the model learned stays; the next usage appended anchors the count again.
        """
        self._counter = AnchoredCounter(self.model, learn_fixed=self.model.fixed_source != "learned")
        self._counts.clear()  # what left the context need not be remembered
        for entry in live:
            if isinstance(entry, Assistant) and entry.usage is not None:
                entry = msgspec.structs.replace(entry, usage=None)
            self._counter.add(entry)
