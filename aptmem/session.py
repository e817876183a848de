"""A session: append entries, keep the context's token total, compact past the trigger.

It ties the pieces together: a store persists the history, a cheap estimator counts every
entry once as it is appended (so the running total costs O(1) per append), a precise one
confirms only when the cheap total nears the trigger, and a summarizer writes the compaction.
The context handed to a model is the system prompt with the working memory, the latest summary,
and the live entries.

A compaction plans from the live context the store reads under the session's writer lock, not
from what this object remembers: other processes may have appended (or compacted) since, and
what they wrote is planned with, never lost. Entries this session appended are counted already;
only entries it has not seen are counted then.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from aptmem.compaction.compactor import CompactionResult, apply_truncations, build_compaction
from aptmem.compaction.planner import plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.summarizer import Summarizer
from aptmem.context.assemble import Context
from aptmem.context.render import ContextBuilder, render_context
from aptmem.entries import Entry, UnknownEntry, User
from aptmem.memory.base import MemoryStrategy
from aptmem.memory.strategies import SummaryMemory
from aptmem.store import CompactionWrite, SessionStore
from aptmem.tokens import ContextTally, Estimator, count_entry
from aptmem.tokens.context_model import ContextModel
from aptmem.tokens.provider_count import ProviderCount
from aptmem.working_memory import WorkingMemory

__all__ = ["AppendOutcome", "Context", "Session"]


@dataclass(frozen=True)
class _PlanUnits:
    """The units a compaction is planned in: the deciding tier's, or the provider's count.

    The trigger and the plan must count alike: a session that fires by the provider's count
    (fixed part of system prompt and tool definitions, entries in provider tokens, framing) plans
    by it too, so the target leaves room for that fixed part and is reached by the same count.
    """

    counts_of: Callable[[Sequence[Entry]], list[int]]
    count_entry: Callable[[Entry], int]
    count_text: Callable[[str], int]
    fixed: int


@dataclass
class AppendOutcome:
    """What one append did: the context size after the entry, and the compaction it caused."""

    entry: Entry
    tokens: int  # context tokens after the append, before any compaction (confirming tier if it ran)
    compaction: CompactionResult | None = None
    confirmed: bool = False  # whether the precise tier was consulted
    after: int | None = None  # the provider's count once the compaction is done (with a provider model)

    @property
    def tokens_after(self) -> int:
        """Context tokens once the append (and its compaction, if any) is done."""
        if self.after is not None:
            return self.after
        return self.compaction.tokens_after if self.compaction else self.tokens


class Session:
    """One session of an agent, persisted in ``store`` under ``session_id``.

    Opening a session that exists reads only its live context (``store.read_live``). Entries
    without an ``id`` get one (a compaction names what it keeps by position, so entries other
    writers appended without ids are kept just as well).

    ``provider``, a :class:`~aptmem.tokens.context_model.ContextModel` of the provider the agent
    talks to, makes the trigger count what that provider will bill: the anchored tier whenever a
    reply carried usage, the context model before (:mod:`aptmem.tokens.provider_count`). The
    compaction then plans in the provider's tokens too: its target leaves room for the provider's
    fixed part (system prompt, tool definitions), so the next request is at the target.
    """

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        *,
        policy: CompactionPolicy,
        estimator: Estimator,
        confirm: Estimator | None = None,
        summarizer: Summarizer | None = None,
        system_prompt: str = "",
        memory: WorkingMemory | None = None,
        memory_strategy: MemoryStrategy | None = None,
        provider: ContextModel | None = None,
    ) -> None:
        if memory_strategy is not None and summarizer is not None:
            raise ValueError("give a summarizer or a memory strategy (which has its own summarizer), not both")
        self.store = store
        self.session_id = session_id
        self.policy = policy
        # The memory strategy decides what the context keeps; by default one rolling summary.
        self.strategy: MemoryStrategy = memory_strategy or SummaryMemory(summarizer)
        self.summarizer = self.strategy.summarizer
        self.system_prompt = system_prompt
        self.memory = memory
        self._fixed: list[str] = []  # the system sections: system prompt, working memory
        self.live: list[Entry] = store.read_live(session_id) if store.exists(session_id) else []
        self._view = apply_truncations(self.live)
        self._view = self.strategy.shown(self._view, None) or self._view
        self._cheap = ContextTally(estimator, self._view)
        # The precise tally counts lazily: it holds a prefix of the view, filled in when the
        # cheap total nears the trigger. Without a separate confirming tier, the cheap one decides.
        self._precise = ContextTally(confirm) if confirm is not None and confirm is not estimator else None
        self.refresh_memory()
        # With a provider's context model the trigger counts what the provider will bill: the
        # latest reported usage plus what came after it, else the model (ProviderCount).
        self._provider = ProviderCount(provider) if provider is not None else None
        self._reset_provider()

    # -- counting --------------------------------------------------------------------------------

    def refresh_memory(self) -> None:
        """Re-read the working memory (another process may have changed it) into the fixed part."""
        self._fixed = self.system_sections(self._current_turn())
        for tally in self._tallies():
            tally.set_fixed(self._fixed)

    def system_sections(self, query: str) -> list[str]:
        """The fixed system sections for ``query``: the system prompt, then what the memory
        strategy renders beside it (working memory, its facts, what it retrieves for ``query``)."""
        meta = self.memory.load() if self.memory is not None and self.memory.exists() else None
        extra = self.strategy.system_text(meta, query=query, window=self.policy.window, count=self._cheap.estimator.count)
        return [part for part in (self.system_prompt, extra) if part]

    def system_text(self, query: str) -> str:
        """The system sections for ``query`` as one text (what goes where the system message goes)."""
        return "\n\n".join(self.system_sections(query))

    def _current_turn(self) -> str:
        """The latest user message of the live context (what a retrieving strategy looks up)."""
        for entry in reversed(self._view):
            if isinstance(entry, User):
                return entry.content
        return ""

    def _tallies(self) -> list[ContextTally]:
        return [t for t in (self._cheap, self._precise) if t is not None]

    def _judge(self) -> ContextTally:
        """The tally whose word is final, brought up to date: the precise one if there is one."""
        if self._precise is None:
            return self._cheap
        self._precise.extend(self._view[len(self._precise) :])
        return self._precise

    def tokens(self) -> int:
        """The context's token total by the deciding tier (counting now what it has not yet); with a
        provider's context model, the next request as the provider will count it."""
        return self._provider.total if self._provider is not None else self._judge().total

    def provider_anchored(self) -> bool:
        """Whether :meth:`tokens` rests on a usage the provider reported (False without a provider model)."""
        return self._provider is not None and self._provider.anchored

    def entry_counts(self) -> list[tuple[Entry, int]]:
        """Each live entry (as shown) with its token count by the deciding tier."""
        judge = self._judge()
        return list(zip(self._view, judge.counts))

    def cheap_tokens(self) -> int:
        """The context's token total by the cheap tier (always up to date, O(1))."""
        return self._cheap.total

    # -- appending and compacting -----------------------------------------------------------------

    def append(self, entry: Entry) -> AppendOutcome:
        """Persist ``entry``, count it, and compact if the context reached the trigger."""
        if not isinstance(entry, UnknownEntry) and entry.id is None:
            entry = msgspec.structs.replace(entry, id=uuid.uuid4().hex[:16])
        self.store.append(self.session_id, entry)
        self.live.append(entry)
        self._view.append(entry)
        shown = self.strategy.shown(self._view, entry)
        if shown is not None:  # the strategy shows some entries otherwise (masking): recount those
            self._view = shown
            for tally in self._tallies():
                tally.reset(self._view[: len(tally)])
        self._cheap.add(self._view[-1])
        if isinstance(entry, User):
            self.refresh_memory()  # a new turn: what the memory strategy shows may depend on it
        if self._provider is not None:
            return self._provider_append(entry)
        cheap = self._cheap.total
        # The cheap tier alone decides while it is clearly below the trigger; near it (or past
        # it, with no confirming tier) the deciding tier counts.
        threshold = self.policy.confirm_at * self.policy.trigger_tokens if self._precise is not None else self.policy.trigger_tokens
        if cheap < threshold:
            return AppendOutcome(entry, cheap)
        total = self.tokens()
        outcome = AppendOutcome(entry, total, confirmed=self._precise is not None)
        if total >= self.policy.trigger_tokens and self.strategy.compacts and self._would_change():
            outcome.compaction = self.compact()
        return outcome

    def _units(self) -> _PlanUnits:
        """The units to plan a compaction in: the provider's count if the session has one, else the deciding tier's."""
        if self._provider is not None:
            provider = self._provider
            return _PlanUnits(counts_of=lambda view: [provider.count_entry(e) for e in view],
                              count_entry=provider.count_entry, count_text=provider.count_text, fixed=provider.fixed)
        judge = self._judge()
        estimator = judge.estimator
        return _PlanUnits(counts_of=judge.counts_of, count_entry=lambda e: count_entry(estimator, e),
                          count_text=estimator.count, fixed=judge.base)

    def _would_change(self) -> bool:
        """Whether a compaction of the context as this session sees it would summarize or
        shorten anything (a cheap plan, no summary): if not, one is not even tried."""
        units = self._units()
        plan = plan_compaction(self._view, units.counts_of(self._view), policy=self.policy, fixed_tokens=units.fixed,
                               count_entry=units.count_entry, originals=self.live)
        return bool(plan.summarized or plan.truncated)

    def compact(self) -> CompactionResult:
        """Compact now, whatever the occupancy: summarize the old part, persist, reset the counts.

        The store reads the live context under the writer lock and the plan is made from that
        read, so entries other writers appended are summarized or kept, never lost. With
        nothing to summarize or shorten, nothing is written: the result's ``entry`` is None and
        its ``reason`` says why. If the store or the summarizer fails, nothing changes.
        """
        results: list[tuple[list[Entry], list[Entry], CompactionResult]] = []

        def plan(live: list[Entry]) -> CompactionWrite | None:
            units = self._units()
            view = self._shown(live)
            result = build_compaction(view, units.counts_of(view), policy=self.policy, summarizer=self.summarizer,
                                      count_text=units.count_text, count_entry=units.count_entry,
                                      fixed_tokens=units.fixed, stored=live)
            results.append((live, view, result))
            if result.entry is None:
                return None
            return CompactionWrite(marker=result.entry, kept=len(result.plan.kept), persist=self.policy.persist)

        written = self.store.compact(self.session_id, plan)
        live, view, result = results[-1]
        result.written = written
        if result.entry is None:
            self.live, self._view = live, view
        else:
            # ``live`` is as stored; the kept entries are a suffix of it.
            kept = len(result.plan.kept)
            first = len(live) - kept
            self.live = [result.entry, *live[first:]] if kept else [result.entry]
            # Shown as a reopened session shows it: the stored entries as the new marker shortens
            # them (never a shortening of an already shortened text), then as the strategy shows them.
            self._view = apply_truncations(self.live)
            self._view = self.strategy.shown(self._view, None) or self._view
            # What leaves the context, as the context showed it (what the summary was written from): the
            # summarized entries, and the kept entries this compaction shortens, as shown before the cut.
            # A strategy keeps only what the model was shown (a masked output stays masked).
            self.strategy.remember(result.plan.leaving, result.entry.summary, self.memory, count=self._judge().estimator.count)
            self.refresh_memory()
        for tally in self._tallies():
            tally.reset(self._view)  # unchanged entries keep their counts; the summary is counted
        if result.entry is not None:
            self._reset_provider()
        return result

    def _shown(self, live: list[Entry]) -> list[Entry]:
        """The live context read from the store, as shown.

        What this session already holds (the read starts with it) keeps its shown objects, so
        the tally's counts of them are reused (texts it has counted are not counted again).
        """
        held = len(self.live)
        if live[:held] == self.live:
            view = list(self._view)  # entries after those held are never shown shortened
            for entry in live[held:]:  # each shown as the memory strategy would have on its append
                view.append(entry)
                view = self.strategy.shown(view, entry) or view
        else:
            view = apply_truncations(live)
            view = self.strategy.shown(view, None) or view
        return view

    # -- the context -----------------------------------------------------------------------------

    def context(self, query: str | None = None) -> Context:
        """What to send the model now: the system part (system prompt, what the memory strategy
        renders, the summary) and the live entries as messages (``.openai()``, ``.anthropic()``),
        with their token total.

        ``query`` is what a retrieving memory strategy looks up (default: the current turn); a
        query of its own renders and counts the system part anew.
        """
        if query is None:
            return Context(rendered=render_context(self._view, self._fixed), tokens=self.tokens(),
                           window=self.policy.window)
        builder = ContextBuilder(self.system_sections(query), count=self._judge().estimator.count)
        builder.extend(self._view)
        return Context(rendered=builder.rendered(), tokens=builder.total, window=self.policy.window)

    def _provider_append(self, entry: Entry) -> AppendOutcome:
        """Count ``entry`` by the provider's count and compact once it reaches the trigger."""
        assert self._provider is not None
        self._provider.add(entry)
        outcome = AppendOutcome(entry, self._provider.total)
        if outcome.tokens >= self.policy.trigger_tokens and self.strategy.compacts and self._would_change():
            outcome.compaction = self.compact()
            outcome.after = self._provider.total
        return outcome

    def _reset_provider(self) -> None:
        """Count the live context afresh (opened, or compacted): the next usage anchors it again."""
        if self._provider is not None:
            self._provider.reset(self._view)

    def describe(self) -> dict[str, Any]:
        """Figures for logs and tests: entries live, tokens, occupancy."""
        tokens = self.tokens()
        return {"live_entries": len(self.live), "tokens": tokens, "occupancy": tokens / self.policy.window}
