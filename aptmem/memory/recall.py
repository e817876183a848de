"""Memory strategies that recall across sessions: a rolling summary in context, plus what the
recall index (:mod:`aptmem.recall`) finds for the current turn.

* ``l2_sessions``: L2 records only (each session's title, times, working memory, latest summary);
* ``l3_keyword``: L2 and L3 chunks of every entry, by SQLite FTS5 (no extra dependency);
* ``l3_embed``: the same records by meaning (WordLlama embeddings, extra ``recall-embed``);
* ``l3_hybrid``: the keyword candidates and the records nearest in meaning, united before the keyword
  rerank (engine ``hybrid_union``);
* ``l3_keyword_facts``, ``l3_embed_facts``, ``l3_hybrid_facts``: the L3 variant of extracted facts
  (single statements) instead of raw chunks.

Compaction writes one rolling summary (as ``extractive`` does); the recall packet is rendered where
the system message goes, after the working memory, within ``budget`` tokens and at most ``share`` of
the window. The compaction policy persists by ``append`` by default, so the history a compaction
took out of the context stays on disk, where the index finds it.

What is recalled is what the context no longer holds: records of other sessions, and of the
current session only L3 records of entries a compaction took out (their time at most that of the
last entry summarized); the current session's own L2 record (its latest summary) is in context.

Which folder to recall from: ``root`` when given; else the folder of the session's own sidecar.
The strategy learns both when it keeps something for a session (at each compaction and at a
hand-over) and records them in the sidecar under :data:`STATE_KEY` (a :class:`RecallState`), so
the strategy object itself stays stateless: one instance may serve sessions of several roots (it
only caches the last index it opened), and a reopened session recalls what it recalled before.
Before the first compaction or hand-over nothing is recalled: everything is still in context.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import msgspec

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Entry
from aptmem.memory.base import RESERVED_PREFIX, Carry, check_carry, render_working
from aptmem.recall.abstain import abstain
from aptmem.recall.api import open_index, pack
from aptmem.recall.index import RecallIndex, level_filter
from aptmem.recall.records import Hit
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["RecallMemory", "RecallState", "STATE_KEY"]

#: The working-dict key of the strategy's :class:`RecallState`.
STATE_KEY = RESERVED_PREFIX + "recall"
#: Hits asked of the index per hit shown: the current session's in-context records are dropped after the search.
_OVERSAMPLE = 3


class RecallState(msgspec.Struct, kw_only=True):
    """What the strategy records in a session's sidecar: where to recall from, and what left the context.

    ``session`` is the session the record was written for (a continued session inherits its
    parent's working dict, and with it a record that is not its own); ``until`` the time of the
    last entry a compaction or hand-over took out of that session's context.
    """

    root: str
    session: str
    until: int


class RecallMemory:
    """A rolling summary in context, and the recall index's best evidence for the current turn.

    ``level`` (``l2``, ``l3``, ``all``), ``l3`` (``chunks``, ``facts``, ``both``) and ``engine``
    (a name of :data:`aptmem.recall.engines.ENGINES`) choose what is searched and how; ``facts``
    makes the index extract facts; ``k`` hits at most, within ``budget`` tokens and ``share`` of
    the window; ``min_coverage`` > 0 abstains (recalls nothing) when the best hits cover less of
    the question's terms (:mod:`aptmem.recall.abstain`).

    ``k`` is 20: the packet gives every hit its best line before any hit a second
    (:func:`aptmem.recall.api.pack`), so twenty hits fit in 1,024 tokens, and the evidence is
    often ranked below tenth (memory-quality benchmark, development seed 100 at 8k, l3_keyword
    answerable within 1,024 tokens over the five generators: k = 10 297 of 462, k = 20 304, k = 30 305).
    """

    compacts = True

    def __init__(self, summarizer: Summarizer | None = None, *, name: str, level: str = "all", l3: str = "chunks",
                 engine: str = "fts", facts: bool = False, k: int = 20, budget: int = 1024, share: float = 0.15,
                 carry: Carry = "summary", root: str | None = None, min_coverage: float = 0.0) -> None:
        level_filter(level, l3)  # a wrong level or variant fails here, not at the first turn
        if k < 1 or budget < 64 or not 0 < share < 1:
            raise ValueError("k must be at least 1, budget at least 64 tokens and share in (0, 1)")
        if not 0 <= min_coverage <= 1:
            raise ValueError("min_coverage is a share of the question's terms, in [0, 1]")
        if l3 in ("facts", "both") and not facts:
            raise ValueError(f"l3={l3!r} searches extracted facts: set facts=True")
        self.summarizer = summarizer or ExtractiveSummarizer()
        self.name = name
        self.level, self.l3, self.engine, self.facts = level, l3, engine, facts
        self.k, self.budget, self.share = k, budget, share
        self.carry = check_carry(carry)
        self.root = root
        self.min_coverage = min_coverage
        self._open: tuple[str, RecallIndex] | None = None

    # -- the index -----------------------------------------------------------------------------

    def index_at(self, root: str | os.PathLike[str]) -> RecallIndex:
        """The recall index of ``root`` with this strategy's engine and fact setting (opened once, cached)."""
        key = os.path.abspath(root)
        if self._open is not None and self._open[0] == key:
            return self._open[1]
        self.close()
        index = open_index(key, engines=(self.engine,), facts=self.facts)
        self._open = (key, index)
        return index

    def close(self) -> None:
        """Close the cached index (a later recall opens it again)."""
        if self._open is not None:
            _, index = self._open
            self._open = None
            index.close()
            index.store.close()

    @staticmethod
    def _state(meta: SessionMeta | None) -> RecallState | None:
        raw = meta.working.get(STATE_KEY) if meta is not None else None
        if raw is None:
            return None
        try:
            return msgspec.convert(raw, RecallState)
        except msgspec.ValidationError:  # written by something else: recall nothing rather than guess
            return None

    @staticmethod
    def _out_of_context(hit: Hit, session_id: str, until: int | None) -> bool:
        """Whether ``hit`` holds something the context does not: another session's, or a compacted entry's."""
        if hit.session_id != session_id:
            return True
        # A ts of 0 is "no time" (remember() skips such entries too): it cannot be known to be compacted.
        return hit.level == "l3" and until is not None and bool(hit.ts) and hit.ts <= until

    # -- the seam ------------------------------------------------------------------------------

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """Keep the view as it is."""
        return None

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Record where to recall from and what left the context (the history stays in the logs, for the index)."""
        if memory is None:
            return
        stamps = [e.ts for e in summarized if e.ts]
        state = RecallState(root=os.path.abspath(self.root or memory.root), session=memory.session_id,
                            until=max(stamps, default=0))
        memory.set(STATE_KEY, msgspec.to_builtins(state))

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The working memory, then the recall packet for ``query`` (evidence headed by session and entry)."""
        base = render_working(meta)
        state = self._state(meta)
        if meta is None or state is None or not query.strip() or not os.path.isdir(state.root):
            return base
        until = state.until if state.session == meta.session_id else None
        index = self.index_at(state.root)
        index.refresh()
        found = index.search(query, k=self.k * _OVERSAMPLE, level=self.level, l3=self.l3, engine=self.engine)
        hits = abstain(query, [h for h in found if self._out_of_context(h, meta.session_id, until)][: self.k],
                       self.min_coverage)
        budget = min(self.budget, int(window * self.share))
        packet = pack(query, hits, budget)
        return "\n\n".join(part for part in (base, packet.text) if part)
