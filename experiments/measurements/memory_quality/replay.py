"""One run of the memory-quality workload through one memory strategy at one window.

The sessions are appended, one after the other, through real :class:`aptmem.session.Session` s
on the JSONL store of a scratch root, each continued from the one before by
:func:`aptmem.memory.handoff.continue_with_memory` (so each strategy carries over what it
declares). The context is rendered and scored (:mod:`experiments.core.knowledge`) at every *checkpoint*: right
after each compaction, right after each hand-over to the next session, and at the end; at the
end every item is also asked in its three wordings, within each packet budget. Each check
records whether all of an item's answers are present.

Each *plant* (an entry of an item's evidence, and the answers that entry carries: an update's
old value in the first statement, its new one in the second; one member of a set) is scored
once more, at the first compaction or hand-over after it was appended: are the answers it
carried in the context then (``memory_plants``; what ``present_first`` averages)? A plant after
the run's last compaction was never compacted and is not scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aptmem.compaction.compactor import CompactionResult
from aptmem.compaction.policy import CompactionPolicy
from aptmem.continuation import create_session
from aptmem.jsonl_store import JsonlStore
from aptmem.memory.base import MemoryStrategy
from aptmem.memory.handoff import continue_with_memory
from aptmem.memory.lexical import Ranker
from aptmem.memory.registry import record_strategy
from aptmem.session import Session
from aptmem.tokens import Estimator, render_entry
from aptmem.working_memory import WorkingMemory
from experiments.core.knowledge import Unit, judge, packet, present, rendered, searched, units, where
from experiments.measurements.memory_quality.workload import Workload

__all__ = ["BUDGET_FIGURES", "CompactionBudget", "RunRows", "WORDINGS", "budget_figures", "replay_workload"]

WORDINGS = ("template", "paraphrase", "other_language")


@dataclass(frozen=True)
class CompactionBudget:
    """Where the context's tokens went right after one compaction (by the deciding tier)."""

    #: the system part: system prompt and what the memory strategy renders beside it
    fixed: int
    #: the compaction's summary
    summary: int
    #: the entries kept verbatim (shortened ones as shown)
    kept: int
    kept_turns: int
    #: kept entries shown shortened
    shortened: int
    #: the summary's budget was raised so that memory keeps its floor (the last turns did not fit whole)
    floored: bool


#: The run-level figures :func:`budget_figures` derives from a run's compactions (columns of ``memory_runs``).
BUDGET_FIGURES = ("post_fixed_tokens", "post_summary_tokens", "post_kept_tokens", "post_kept_turns",
                  "shortened_share", "floored_share", "memory_empty_share")


def budget_figures(budgets: list[CompactionBudget]) -> dict[str, float | None]:
    """Means over a run's compactions: tokens of each part of the context right after, kept turns, and the
    share of compactions that shortened kept entries, raised the summary to the memory floor, or left no
    memory at all (nothing rendered beside the history and an empty summary). None without compactions."""
    n = len(budgets)
    if not n:
        return dict.fromkeys(BUDGET_FIGURES)
    return {"post_fixed_tokens": sum(b.fixed for b in budgets) / n, "post_summary_tokens": sum(b.summary for b in budgets) / n,
            "post_kept_tokens": sum(b.kept for b in budgets) / n, "post_kept_turns": sum(b.kept_turns for b in budgets) / n,
            "shortened_share": sum(b.shortened > 0 for b in budgets) / n, "floored_share": sum(b.floored for b in budgets) / n,
            "memory_empty_share": sum(b.fixed == 0 and b.summary == 0 for b in budgets) / n}


class _Observed(Session):
    """A session that calls ``on_compaction`` after each compaction, times them and records their budgets."""

    def __init__(self, *args: Any, on_compaction: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_compaction = on_compaction
        self.compaction_ns = 0
        self.compactions = 0
        self.compaction_budgets: list[CompactionBudget] = []

    def compact(self) -> CompactionResult:
        """Compact as a Session does; then record where the tokens went, and report."""
        started = time.perf_counter_ns()
        result = super().compact()
        self.compaction_ns += time.perf_counter_ns() - started
        self.compactions += 1
        if result.entry is not None:
            judge = self._judge()
            plan = result.plan
            self.compaction_budgets.append(CompactionBudget(
                fixed=judge.base, summary=judge.estimator.count(result.entry.summary), kept=plan.kept_tokens,
                kept_turns=plan.kept_turns, shortened=len(plan.truncated),
                floored=plan.summary_budget > self.policy.summary_budget))
        self._on_compaction()
        return result


@dataclass
class RunRows:
    """What one run measured: a row per checkpoint and item, per asked question and budget, and the run's figures."""

    checks: list[dict[str, object]] = field(default_factory=list)
    answers: list[dict[str, object]] = field(default_factory=list)
    plants: list[dict[str, object]] = field(default_factory=list)
    run: dict[str, object] = field(default_factory=dict)


class _Run:
    def __init__(self, workload: Workload, strategy: MemoryStrategy, policy: CompactionPolicy, estimator: Estimator,
                 budgets: list[int], root: Path) -> None:
        self.workload, self.strategy, self.policy, self.estimator, self.budgets = workload, strategy, policy, estimator, budgets
        self.root = root
        self.rows = RunRows()
        self.seq = 0  # appends so far
        self.turn = -1
        self.planted: dict[str, tuple[int, int]] = {}  # item id -> (seq, turn) when its last evidence went in
        # plants not yet compacted: (item id, evidence id, the answers that entry carries, seq, turn)
        self.unscored: list[tuple[str, str, tuple[str, ...], int, int]] = []
        self.checkpoints: list[int] = []  # seq of every checkpoint so far
        self._pending = {item.id: set(item.evidence) for item in workload.items if item.evidence}
        self._items = {item.id: item for item in workload.items}
        self._carries: dict[str, list[str]] = {}
        for item in workload.items:
            for ident in item.evidence:
                self._carries.setdefault(ident, []).append(item.id)
        self.session: _Observed | None = None
        self.compactions = 0
        self.compaction_ns = 0
        self.compaction_budgets: list[CompactionBudget] = []

    def _open(self, store: JsonlStore, session_id: str) -> _Observed:
        return _Observed(store, session_id, policy=self.policy, estimator=self.estimator,
                         memory=WorkingMemory(self.root, session_id), memory_strategy=self.strategy,
                         on_compaction=lambda: self.checkpoint("compaction"))

    def checkpoint(self, at: str) -> None:
        """Score every planted item on the context as it is now."""
        assert self.session is not None
        self.checkpoints.append(self.seq)
        number = len(self.checkpoints)
        messages = rendered(self.session)
        text = "\n\x00\n".join(t for _, t in messages)
        if at != "end":  # the first compaction or hand-over after a plant: is what it carried still there?
            for ident, evidence, carried, seq, turn in self.unscored:
                self.rows.plants.append({"item": ident, "evidence": evidence, "checkpoint": number, "at": at,
                                         "seq": seq, "age_turns": self.turn - turn,
                                         "present": all(a in text for a in carried)})
            self.unscored.clear()
        for item in self.workload.items:
            if item.id not in self.planted or item.type == "absent":
                continue
            seq, turn = self.planted[item.id]
            since = sum(1 for s in self.checkpoints if s >= seq)
            judged = item.judged()
            self.rows.checks.append({"item": item.id, "checkpoint": number, "at": at, "seq": self.seq, "turn": self.turn,
                                     "age_checkpoints": since, "age_turns": self.turn - turn,
                                     "present": present(judged, text), "where": where(judged, messages)})

    def run(self) -> RunRows:
        started = time.perf_counter()
        handoff_ns = 0
        tokens: list[int] = []
        with JsonlStore(self.root) as store:
            session_id = create_session(store, self.root)
            # The sidecar names the strategy, so `aptmem context` renders what is scored here (continuations inherit it).
            record_strategy(WorkingMemory(self.root, session_id), self.strategy, window=self.policy.window,
                            estimator=self.estimator)
            for number, entries in enumerate(self.workload.sessions):
                if number:
                    self._close_session()
                    t0 = time.perf_counter_ns()
                    session_id = continue_with_memory(self.strategy, store, self.root, session_id, policy=self.policy,
                                                      count=self.estimator.count)
                    handoff_ns += time.perf_counter_ns() - t0
                    self.session = self._open(store, session_id)
                    self.checkpoint("handoff")
                else:
                    self.session = self._open(store, session_id)
                for entry in entries:
                    self.seq += 1
                    self.turn = self.workload.turn_of[entry.id or ""]
                    for ident in self._carries.get(entry.id or "", ()):
                        pending = self._pending[ident]
                        pending.discard(entry.id or "")
                        if not pending:
                            self.planted[ident] = (self.seq, self.turn)
                        text = render_entry(entry)
                        carried = tuple(a for a in self._items[ident].answers if a in text)
                        if carried:  # this entry plants (part of) the item's answers
                            self.unscored.append((ident, entry.id or "", carried, self.seq, self.turn))
                    outcome = self.session.append(entry)
                    tokens.append(outcome.tokens_after)
            self.checkpoint("end")
            assert self.session is not None
            end_tokens = self.session.tokens()
            self._ask(self.session)
            self._close_session()
        self.rows.run = {"appends": self.seq, "compactions": self.compactions, "handoffs": len(self.workload.sessions) - 1,
                         "mean_context_tokens": sum(tokens) / max(len(tokens), 1), "max_context_tokens": max(tokens, default=0),
                         "end_context_tokens": end_tokens, "compaction_seconds": self.compaction_ns / 1e9,
                         "handoff_seconds": handoff_ns / 1e9, "seconds": time.perf_counter() - started,
                         **budget_figures(self.compaction_budgets)}
        return self.rows

    def _close_session(self) -> None:
        """Add the figures of the session that ends to the run's."""
        assert self.session is not None
        self.compactions += self.session.compactions
        self.compaction_ns += self.session.compaction_ns
        self.compaction_budgets += self.session.compaction_budgets

    def _ask(self, session: Session) -> None:
        """Ask every item in every wording: whole context and each packet budget."""
        count = self.estimator.count
        base = rendered(session)
        index: dict[int, tuple[list[Unit], Ranker, dict[int, int]]] = {}
        try:
            for item in self.workload.items:
                judged = item.judged()
                for wording, question in zip(WORDINGS, item.questions, strict=True):
                    messages = rendered(session, question)
                    key = 0 if messages == base else hash(tuple(messages))
                    if key not in index:
                        parts = units(messages)  # (a query-dependent rendering differs only in its system message)
                        index[key] = (parts, Ranker([searched(u) for u in parts]), {})
                    parts, ranker, costs = index[key]

                    def cost_of(i: int, parts: list[Unit] = parts, costs: dict[int, int] = costs) -> int:
                        if i not in costs:
                            costs[i] = count(parts[i].shown) + 1
                        return costs[i]

                    ranked = ranker.rank(question)
                    for budget in [None, *self.budgets]:
                        chosen = packet(ranked, parts, budget, cost_of, question)
                        self.rows.answers.append({"item": item.id, "wording": wording, "budget": budget,
                                                  "answerable": judge(judged, chosen),
                                                  "packet_tokens": sum(cost_of(u.position) for u in chosen)})
                    if key != 0:  # a query-dependent rendering is not reused
                        index.pop(key)[1].close()
        finally:
            for _, ranker, _ in index.values():
                ranker.close()


def replay_workload(workload: Workload, strategy: MemoryStrategy, policy: CompactionPolicy, estimator: Estimator,
                    budgets: list[int], root: Path) -> RunRows:
    """Run ``workload`` through ``strategy`` in ``root`` (an empty folder); return the rows."""
    return _Run(workload, strategy, policy, estimator, budgets, root).run()
