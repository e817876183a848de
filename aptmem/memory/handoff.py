"""Continuing a session with a memory strategy's memory, and running a history through a strategy.

:func:`continue_with_memory` hands a session over to a new one the way its strategy declares
(:attr:`~aptmem.memory.base.MemoryStrategy.carry`):

* ``memory``: the new session inherits the sidecar only (working memory, working dict and
  whatever the strategy keeps there);
* ``summary``: also a summary of the old *live* context as the model was shown it (shortened
  and masked as it was), the latest summary folded in, so the turns the last compaction kept
  are not lost at the hand-over; the strategy then remembers those entries in the new
  session's memory as it does after a compaction;
* ``history``: also every old entry (the full-history oracle).

:func:`run_with_memory` appends a history through a fresh session of a root under a strategy
(``aptmem replay --memory NAME --root DIR``) and keeps it there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from aptmem.compaction.compactor import apply_truncations
from aptmem.compaction.policy import CompactionPolicy
from aptmem.continuation import continue_session, create_session
from aptmem.entries import Compaction, Entry, now_ms
from aptmem.memory.base import MemoryStrategy
from aptmem.compaction.replay import ReplayReport, replay
from aptmem.memory.registry import record_strategy
from aptmem.session import Session
from aptmem.store import SessionStore
from aptmem.tokens import Estimator
from aptmem.working_memory import WorkingMemory

__all__ = ["continue_with_memory", "run_with_memory"]


def continue_with_memory(
    strategy: MemoryStrategy,
    store: SessionStore,
    root: str | os.PathLike[str],
    old_id: str,
    *,
    policy: CompactionPolicy,
    count: Callable[[str], int],
    new_id: str | None = None,
) -> str:
    """Create a session continuing ``old_id`` with what ``strategy`` carries over; return its id.

    The summary of the old live context takes at most ``policy.summary_budget`` tokens by ``count``.
    The old session is never changed.
    """
    if strategy.carry == "history":
        return continue_session(store, root, old_id, new_id=new_id, with_history=True)
    if strategy.carry == "memory":
        return continue_session(store, root, old_id, new_id=new_id)
    # The summary stands for the old live context as the model was shown it: shortened where its
    # compaction shortened it, and as the strategy shows it (a masked tool output stays masked).
    live = apply_truncations(store.read_live(old_id))
    live = strategy.shown(live, None) or live
    previous = live[0].summary if live and isinstance(live[0], Compaction) else None
    body = live[1:] if previous is not None else live
    summary = strategy.summarizer.summarize(body, previous=previous, budget=policy.summary_budget, count=count)
    new_id = continue_session(store, root, old_id, new_id=new_id)
    store.append(new_id, Compaction(ts=now_ms(), summary=summary, first_kept=None, summarized=len(body),
                                    notes=[f"summary of session {old_id}'s live context, carried over by {strategy.name}"]))
    strategy.remember(body, summary, WorkingMemory(root, new_id), count=count)
    return new_id


def run_with_memory(
    entries: Iterable[Entry],
    store: SessionStore,
    root: str | os.PathLike[str],
    *,
    strategy: MemoryStrategy,
    policy: CompactionPolicy,
    estimator: Estimator,
    confirm: Estimator | None = None,
    system_prompt: str = "",
    title: str = "",
    source_compactions: str = "honour",
) -> tuple[Session, ReplayReport]:
    """Append ``entries`` through a new session of ``root`` (log and sidecar) under ``strategy``.

    The sidecar records the strategy (:func:`~aptmem.memory.registry.record_strategy`), so ``aptmem
    context`` renders the session as the strategy shows it. Returns the session (open on ``store``) and
    the replay's report. Compactions among ``entries`` are honoured or stripped as
    :func:`aptmem.compaction.replay.replay` says.
    """
    session_id = create_session(store, root, title=title)
    record_strategy(WorkingMemory(root, session_id), strategy, window=policy.window, estimator=estimator)

    def open_session() -> Session:
        return Session(store, session_id, policy=policy, estimator=estimator, confirm=confirm,
                       system_prompt=system_prompt, memory=WorkingMemory(root, session_id), memory_strategy=strategy)

    session = open_session()
    report, _ = replay(entries, session, source_compactions=source_compactions, reopen=open_session)
    if report.source_compactions:
        session = open_session()  # the replay went on in a session reopened from the history's compaction
    return session, report
