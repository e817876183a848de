"""Running a compaction: plan it, summarize, build the compaction entry, persist it.

Two ways to persist, both crash-safe:

* ``append``: one line, the compaction entry, is appended; it names the first kept entry and
  the entries to show shortened. The full history stays on disk (as Claude Code and pi do). The
  append is one ``os.write`` of one line, so a crash leaves the old session or the new one; a
  torn marker is a torn tail that recovery cuts.
* ``rewrite``: the session becomes the compaction entry plus the kept entries (shortened where
  planned), through the store's atomic ``replace`` (temp file, fsync, rename, folder fsync).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aptmem.compaction.planner import CompactionPlan, plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.shorten import shorten_entry
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Compaction, Entry, now_ms
from aptmem.store import SessionStore

__all__ = ["CompactionResult", "build_compaction", "persist_compaction", "apply_truncations"]


@dataclass
class CompactionResult:
    """A compaction ready to persist: the entry, the new live context, and the figures."""

    entry: Compaction
    live: list[Entry]  # the new live context: the compaction entry, then the kept entries
    plan: CompactionPlan
    tokens_before: int
    tokens_after: int


def build_compaction(
    live: Sequence[Entry],
    counts: Sequence[int],
    *,
    policy: CompactionPolicy,
    summarizer: Summarizer,
    count_text: Callable[[str], int],
    count_entry: Callable[[Entry], int],
    fixed_tokens: int,
) -> CompactionResult:
    """Plan and summarize a compaction of ``live``; nothing is written yet."""
    tokens_before = fixed_tokens + sum(counts)
    plan = plan_compaction(live, counts, policy=policy, fixed_tokens=fixed_tokens, count_entry=count_entry)
    summary = summarizer.summarize(plan.summarized, previous=plan.previous_summary,
                                   budget=policy.summary_budget, count=count_text)
    notes = list(plan.notes)
    entry = Compaction(
        summary=summary,
        first_kept=plan.kept[0].id if plan.kept else None,
        tokens_before=tokens_before,
        notes=notes,
        summarized=len(plan.summarized),
        kept_turns=plan.kept_turns,
        truncated=_truncations(live, plan) if policy.persist == "append" else {},
        ts=now_ms(),
        id=f"compaction-{uuid.uuid4().hex[:16]}",
    )
    tokens_after = fixed_tokens + count_entry(entry) + plan.kept_tokens
    if tokens_after > policy.target_tokens:
        notes.append(f"ended at {tokens_after} tokens, over the target of {policy.target_tokens}")
    entry.tokens_after = tokens_after
    return CompactionResult(entry=entry, live=[entry, *plan.kept], plan=plan,
                            tokens_before=tokens_before, tokens_after=tokens_after)


def _truncations(live: Sequence[Entry], plan: CompactionPlan) -> dict[str, int]:
    """What the new marker shortens: this plan's cuts, and the previous marker's cuts of entries it keeps.

    A kept entry the previous compaction shortened is shown shortened; the new marker must say so
    too, or a reopened session would show it whole (only the latest marker is read back).
    """
    previous = live[0].truncated if live and isinstance(live[0], Compaction) else {}
    kept_ids = {e.id for e in plan.kept if e.id is not None}
    carried = {k: v for k, v in previous.items() if k in kept_ids}
    return {**carried, **{k: min(v, carried.get(k, v)) for k, v in plan.truncated.items()}}


def persist_compaction(store: SessionStore, session_id: str, result: CompactionResult, way: str) -> None:
    """Write a compaction the chosen way (``append`` or ``rewrite``)."""
    if way == "append":
        store.append(session_id, result.entry)
    elif way == "rewrite":
        store.replace(session_id, result.live)
    else:
        raise ValueError(f"unknown way to persist a compaction: {way!r} (append or rewrite)")


def apply_truncations(live: Sequence[Entry]) -> list[Entry]:
    """Show a live context as its compaction asked: named entries shortened (append layout)."""
    if not live or not isinstance(live[0], Compaction) or not live[0].truncated:
        return list(live)
    keep = live[0].truncated
    return [shorten_entry(e, keep[e.id]) if e.id in keep else e for e in live]
