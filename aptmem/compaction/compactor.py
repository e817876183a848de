"""Running a compaction: plan it, summarize, build the compaction entry; how it is shown.

Persisting is the store's job, under the session's writer lock
(:meth:`aptmem.store.SessionStore.compact`): the live context is read, planned and written
while no one else can append, so nothing appended meanwhile is lost. Two ways, both crash-safe:

* ``append``: one line, the compaction entry, is appended. It names the entries it keeps by
  position: ``kept_before`` N, the N entries nearest before it that are not compactions
  (whether or not they carry ids), and the kept entries shown shortened by their position
  (``truncated_at``). The full history stays on disk (as Claude Code and pi do). A torn marker
  is a torn tail that recovery cuts.
* ``rewrite``: the session becomes the compaction entry (``kept_before`` 0) followed by the
  kept entries, copied byte for byte (shortening is a view, recorded in ``truncated_at`` as for
  ``append``), through an atomic replace; entries no summary stands for (metadata, unknown
  types) are carried over before the marker, damage goes to the quarantine.

A compaction with nothing to summarize and nothing to shorten writes nothing: its result has
``entry`` None and says why in ``reason``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aptmem.compaction.planner import CompactionPlan, plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.shorten import shorten_entry
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Compaction, Entry, now_ms
from aptmem.store import CompactionWritten

__all__ = ["CompactionResult", "apply_truncations", "build_compaction", "live_truncations"]


@dataclass
class CompactionResult:
    """A compaction: the entry, the new live context (as shown), the figures, what was written.

    ``entry`` is None when there was nothing to compact (``reason`` says why); ``written`` is
    what the store did, once it did it (None before, and when nothing was written).
    """

    entry: Compaction | None
    live: list[Entry]
    plan: CompactionPlan
    tokens_before: int
    tokens_after: int
    reason: str | None = None
    written: CompactionWritten | None = None

    @property
    def changed(self) -> bool:
        """Whether the compaction changes the session (it has an entry to write)."""
        return self.entry is not None


def build_compaction(
    live: Sequence[Entry],
    counts: Sequence[int],
    *,
    policy: CompactionPolicy,
    summarizer: Summarizer,
    count_text: Callable[[str], int],
    count_entry: Callable[[Entry], int],
    fixed_tokens: int,
    stored: Sequence[Entry] | None = None,
) -> CompactionResult:
    """Plan and summarize a compaction of ``live`` (as shown; ``stored``: as stored); nothing is written.

    ``counts[i]`` is the token count of ``live[i]``. Returns a result without an entry when
    nothing would be summarized or shortened.
    """
    stored = list(live) if stored is None else list(stored)
    tokens_before = fixed_tokens + sum(counts)
    plan = plan_compaction(live, counts, policy=policy, fixed_tokens=fixed_tokens, count_entry=count_entry,
                           originals=stored)
    if not plan.summarized and not plan.truncated:
        body = len(live) - (plan.previous_summary is not None)
        reason = (f"nothing to summarize: the {body} entries of the live context are the {plan.kept_turns} "
                  f"turns kept verbatim, and none needs shortening")
        return CompactionResult(entry=None, live=list(live), plan=plan, tokens_before=tokens_before,
                                tokens_after=tokens_before, reason=reason)
    # The summary stands for what leaves the context, as the context showed it: the summarized
    # entries, and the kept entries this compaction shortens (what the cut takes out was shown).
    summary = summarizer.summarize(plan.leaving, previous=plan.previous_summary,
                                   budget=plan.summary_budget, count=count_text)
    if not summary and plan.summary_budget > policy.summary_budget:
        # A summarizer that keeps nothing (the ``none`` strategy's) has no memory to keep a floor
        # for: the room goes back to the kept turns.
        plan = plan_compaction(live, counts, policy=dataclasses.replace(policy, memory_floor=0), fixed_tokens=fixed_tokens,
                               count_entry=count_entry, originals=stored)
        summary = summarizer.summarize(plan.leaving, previous=plan.previous_summary,
                                       budget=plan.summary_budget, count=count_text)
    notes = list(plan.notes)
    shown = _carried_truncations(stored, plan)
    entry = Compaction(
        summary=summary,
        first_kept=plan.kept[0].id if plan.kept and policy.persist == "append" else None,
        tokens_before=tokens_before,
        notes=notes,
        summarized=len(plan.summarized),
        kept_turns=plan.kept_turns,
        kept_before=len(plan.kept) if policy.persist == "append" else 0,
        truncated_at=shown,
        ts=now_ms(),
        id=f"compaction-{uuid.uuid4().hex[:16]}",
    )
    tokens_after = fixed_tokens + count_entry(entry) + plan.kept_tokens
    if tokens_after > policy.target_tokens:
        notes.append(f"ended at {tokens_after} tokens, over the target of {policy.target_tokens}")
    entry.tokens_after = tokens_after
    return CompactionResult(entry=entry, live=[entry, *plan.kept], plan=plan,
                            tokens_before=tokens_before, tokens_after=tokens_after)


def _carried_truncations(stored: Sequence[Entry], plan: CompactionPlan) -> dict[int, int]:
    """How the new compaction shows its kept entries: newly shortened ones as planned, and ones
    the previous compaction showed shortened (and that stay kept) as it did."""
    previous = live_truncations(stored)
    first = len(stored) - len(plan.kept)
    shown = {i: previous[first + i] for i in range(len(plan.kept)) if first + i in previous}
    shown.update(plan.truncated)
    return dict(sorted(shown.items()))


def live_truncations(live: Sequence[Entry]) -> dict[int, int]:
    """Which entries of a live context (as stored) its compaction shows shortened: index in
    ``live`` -> characters kept. Positions (``truncated_at``) or, from older writers, ids."""
    if not live or not isinstance(live[0], Compaction):
        return {}
    marker = live[0]
    if marker.truncated_at:
        return {1 + i: keep for i, keep in marker.truncated_at.items() if 1 + i < len(live)}
    if marker.truncated:
        return {i: marker.truncated[e.id] for i, e in enumerate(live) if i and e.id in marker.truncated}
    return {}


def apply_truncations(live: Sequence[Entry]) -> list[Entry]:
    """Show a live context (as stored) as its compaction asked: the entries it names shortened."""
    shown = live_truncations(live)
    if not shown:
        return list(live)
    return [shorten_entry(e, shown[i]) if i in shown else e for i, e in enumerate(live)]
