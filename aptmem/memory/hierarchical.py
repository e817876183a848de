"""``hier_summary``: every compaction's summary kept and reachable, under a rolling top summary.

The top level is the compaction summary itself, rolled over at every compaction as usual. Below
it, each compaction leaves a *leaf*: a summary of only the entries it took out of the context
(no previous summary folded in), kept in the sidecar under ``aptmem.summaries`` with the time
span it covers. A leaf is never rewritten, so what the rolling summary had to drop to stay in
budget is still there.

Leaves are reached by the current turn (or a question): their lines are ranked against it by
keyword (:func:`aptmem.memory.lexical.rank`) and the best, not already in the top summary,
are rendered where the system message goes, within ``share`` of the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from aptmem.compaction.extractive import parse_summary
from aptmem.compaction.salient import SalientSummarizer
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Entry
from aptmem.errors import MemoryStrategyError
from aptmem.memory.base import RESERVED_PREFIX, Carry, check_carry, render_working
from aptmem.memory.lexical import Ranker
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["HierarchicalSummaries", "Leaf", "SUMMARIES_KEY"]

#: The working-dict key the leaves (and the latest top summary) live under.
SUMMARIES_KEY = RESERVED_PREFIX + "summaries"


class Leaf(msgspec.Struct, kw_only=True):
    """The summary of what one compaction took out of the context, and the time span it covers."""

    number: int
    since: int
    until: int
    lines: list[str]


class _Tree(msgspec.Struct, kw_only=True):
    top: str = ""
    leaves: list[Leaf] = []


class HierarchicalSummaries:
    """A rolling top summary, and one retrievable leaf per compaction."""

    name = "hier_summary"
    compacts = True

    def __init__(self, summarizer: Summarizer | None = None, *, leaf_tokens: int = 1200, share: float = 0.1,
                 carry: Carry = "summary") -> None:
        if not 0 < share < 1 or leaf_tokens < 64:
            raise ValueError("share must be in (0, 1) and leaf_tokens at least 64")
        self.summarizer = summarizer or SalientSummarizer()
        self.leaf_tokens = leaf_tokens
        self.share = share
        self.carry = check_carry(carry)
        self._index: tuple[tuple[str, ...], Ranker] | None = None

    def _ranker(self, lines: list[str]) -> Ranker:
        """The keyword index of ``lines``; the last one is kept, since the leaves change only at a compaction."""
        key = tuple(lines)
        if self._index is None or self._index[0] != key:
            if self._index is not None:
                self._index[1].close()
            self._index = (key, Ranker(lines))
        return self._index[1]

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """Keep the view as it is."""
        return None

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Keep a leaf summary of ``summarized`` alone, and the new top summary."""
        if memory is None:
            raise MemoryStrategyError(f"{self.name} keeps its summaries in the working dict: the session needs a WorkingMemory")
        if not summarized:
            return
        leaf_text = self.summarizer.summarize(summarized, previous=None, budget=self.leaf_tokens, count=count)
        stamps = [e.ts for e in summarized if e.ts]

        def add(meta: SessionMeta) -> None:
            tree = msgspec.convert(meta.working.get(SUMMARIES_KEY, {}), _Tree)
            tree.leaves.append(Leaf(number=len(tree.leaves) + 1, since=min(stamps, default=0), until=max(stamps, default=0),
                                    lines=[text for _, text in parse_summary(leaf_text)]))
            tree.top = summary
            meta.working[SUMMARIES_KEY] = msgspec.to_builtins(tree)

        memory.update(add)

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The working memory, then the leaf lines that best match ``query`` within ``share`` of the window."""
        base = render_working(meta)
        tree = msgspec.convert(meta.working.get(SUMMARIES_KEY, {}), _Tree) if meta is not None else _Tree()
        in_top = {text for _, text in parse_summary(tree.top)}
        lines = list(dict.fromkeys(line for leaf in tree.leaves for line in leaf.lines if line not in in_top))
        if not lines or not query:
            return base
        head = "From earlier summaries (matching the current turn):"
        budget = int(window * self.share) - count(head)
        chosen: list[int] = []
        for index in self._ranker(lines).rank(query):
            cost = count(f"- {lines[index]}") + 1
            if cost > budget:
                continue
            budget -= cost
            chosen.append(index)
        if not chosen:
            return base
        recalled = "\n".join([head, *(f"- {lines[i]}" for i in sorted(chosen))])
        return "\n\n".join(part for part in (base, recalled) if part)
