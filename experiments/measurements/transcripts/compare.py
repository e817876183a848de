"""Where aptmem compacts a real session, beside where the original agent did (or would have).

For one imported session and one context window, three kinds of compaction events are put side
by side, each placed at an entry of the session and at the request that follows it:

* ``agent``: the compactions the original agent wrote into the file (Claude Code's
  ``compact_boundary`` + summary, with ``preTokens``; pi's ``compaction`` with ``tokensBefore``);
* ``agent_rule``: the first request whose provider-reported input + output reached the agent's own
  trigger for this window (DESIGN.md's reference figures: Claude Code about window - 33k, i.e.
  167k of 200k; pi window - 16,384), i.e. where the agent's rule would fire on the provider's
  count. Only the first: after it the real session was not compacted, so later counts would not
  be what the agent saw;
* ``aptmem``: every compaction of a replay of the session's entries (the original compactions
  left out) through :class:`aptmem.session.Session` under aptmem's policy, counted by a cheap
  tier and confirmed by a precise one. The replay counts only the transcript: the system prompt
  and tool definitions the provider also counted are not in it (the usage tables measure them).
"""

from __future__ import annotations

import bisect
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Compaction, Entry
from aptmem.ids import new_session_id
from aptmem.importers.usage import Request
from aptmem.jsonl_store import JsonlStore
from aptmem.compaction.replay import replay
from aptmem.tokens import Estimator
from experiments.core.observed_session import ObservedSession
from experiments.measurements.transcripts.triggers import agent_trigger

__all__ = ["EVENT_SCHEMA", "REPLAY_SCHEMA", "ReplaySpec", "compare_session"]

#: One row per compaction event. ``entry``: 0-based index of the imported entry at which it fires;
#: ``request``: index of the first request after it (null: none followed); ``tokens``: the count that
#: fired it (aptmem: its estimate; agent: preTokens / tokensBefore; agent_rule: the reported input + output);
#: ``reported_next``: what the provider reported for that next request.
EVENT_SCHEMA = {"format": pl.String, "session": pl.String, "window": pl.Int64, "tier": pl.String, "source": pl.String,
                "event": pl.Int64, "entry": pl.Int64, "request": pl.Int64, "tokens": pl.Int64,
                "trigger_tokens": pl.Int64, "reported_next": pl.Int64, "occupancy": pl.Float64}

#: One row per (session, window, replay tier): the comparison at a glance. ``compactions_over_target``: those
#: that ended above the target; ``appends_over_window``: appends after which the context was over the window.
#: ``reported_at_aptmem_trigger_request``: the first request whose *reported* count reached aptmem's
#: trigger, i.e. where aptmem would have compacted had it known the provider's count.
REPLAY_SCHEMA = {"format": pl.String, "session": pl.String, "window": pl.Int64, "tier": pl.String,
                 "entries": pl.Int64, "requests": pl.Int64, "max_reported": pl.Int64,
                 "agent_compactions": pl.Int64, "agent_first_request": pl.Int64,
                 "agent_trigger": pl.Int64, "agent_rule_first_request": pl.Int64,
                 "aptmem_trigger": pl.Int64, "reported_at_aptmem_trigger_request": pl.Int64,
                 "aptmem_compactions": pl.Int64, "aptmem_first_request": pl.Int64,
                 "aptmem_first_estimate": pl.Int64, "reported_at_aptmem_first": pl.Int64,
                 "aptmem_max_occupancy": pl.Float64, "split_tool_pairs": pl.Int64,
                 "compactions_over_target": pl.Int64, "appends_over_window": pl.Int64}


@dataclass(frozen=True)
class ReplaySpec:
    """One replay: the window, the cheap tier's spec and estimator, the confirming estimator (or None)."""

    window: int
    tier: str
    estimator: Estimator
    confirm: Estimator | None
    trigger: float
    target: float
    keep_turns: int
    keep_recent_tokens: int | None = None

    def policy(self) -> CompactionPolicy:
        """aptmem's compaction policy for this replay."""
        return CompactionPolicy(window=self.window, trigger=self.trigger, target=self.target, keep_turns=self.keep_turns,
                                keep_recent_tokens=self.keep_recent_tokens)


def _next_request(seqs: Sequence[int], entry: int, inclusive: bool) -> int | None:
    """Index of the first request whose reply sits after ``entry`` (at it, when ``inclusive``)."""
    index = (bisect.bisect_left if inclusive else bisect.bisect_right)(seqs, entry)
    return index if index < len(seqs) else None


def _event(fmt: str, session: str, spec: ReplaySpec, tier: str | None, source: str, number: int, entry: int,
           request: int | None, tokens: int | None, trigger: int, requests: Sequence[Request]) -> dict[str, object]:
    reported = requests[request].reported if request is not None else None
    return {"format": fmt, "session": session, "window": spec.window, "tier": tier, "source": source, "event": number,
            "entry": entry, "request": request, "tokens": tokens, "trigger_tokens": trigger, "reported_next": reported,
            "occupancy": None if tokens is None else tokens / spec.window}


def compare_session(fmt: str, session: str, entries: Sequence[Entry], requests: Sequence[Request], spec: ReplaySpec,
                    *, tmp: str | None = None) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The events (rows of :data:`EVENT_SCHEMA`) and the summary row (:data:`REPLAY_SCHEMA`) of one replay."""
    seqs = [r.seq for r in requests]
    events: list[dict[str, object]] = []
    # The original agent's own compactions, where the file has them (agent rows carry no tier).
    agent = [(i, e) for i, e in enumerate(entries) if isinstance(e, Compaction)]
    for number, (index, entry) in enumerate(agent, start=1):
        events.append(_event(fmt, session, spec, None, "agent", number, index, _next_request(seqs, index, True),
                             entry.tokens_before, agent_trigger(fmt, spec.window), requests))
    trigger = agent_trigger(fmt, spec.window)
    # The agents' rule counts the last request and its reply (preTokens / tokensBefore are input + output).
    rule = next((r for r in requests if r.reported + (r.output or 0) >= trigger), None)
    if rule is not None:
        events.append(_event(fmt, session, spec, None, "agent_rule", 1, rule.seq, rule.index,
                             rule.reported + (rule.output or 0), trigger, requests))
    # aptmem's replay of the conversation (the original compactions left out: the policy decides).
    kept = [(i, e) for i, e in enumerate(entries) if not isinstance(e, Compaction)]
    policy = spec.policy()
    with tempfile.TemporaryDirectory(prefix="aptmem-transcripts-", dir=tmp) as root, JsonlStore(root) as store:
        observed = ObservedSession(store, new_session_id(), policy=policy, estimator=spec.estimator,
                                   confirm=spec.confirm)
        report, steps = replay((e for _, e in kept), observed, keep_steps=True)
    fired = [s for s in steps if s.compacted]
    ours: list[dict[str, object]] = []
    for number, (step, result) in enumerate(zip(fired, observed.compactions, strict=True), start=1):
        index = kept[step.seq - 1][0]
        ours.append(_event(fmt, session, spec, spec.tier, "aptmem", number, index, _next_request(seqs, index, False),
                           result.tokens_before, policy.trigger_tokens, requests))
    events += ours
    first_agent = next((e for e in events if e["source"] == "agent"), None)
    summary = {
        "format": fmt, "session": session, "window": spec.window, "tier": spec.tier, "entries": len(entries),
        "requests": len(requests), "max_reported": max((r.reported for r in requests), default=None),
        "agent_compactions": len(agent), "agent_first_request": first_agent["request"] if first_agent else None,
        "agent_trigger": trigger, "agent_rule_first_request": rule.index if rule is not None else None,
        "aptmem_trigger": policy.trigger_tokens,
        "reported_at_aptmem_trigger_request": next((r.index for r in requests if r.reported >= policy.trigger_tokens), None),
        "aptmem_compactions": len(ours),
        "aptmem_first_request": ours[0]["request"] if ours else None,
        "aptmem_first_estimate": ours[0]["tokens"] if ours else None,
        "reported_at_aptmem_first": ours[0]["reported_next"] if ours else None,
        "aptmem_max_occupancy": report.max_occupancy, "split_tool_pairs": report.split_tool_pairs,
        "compactions_over_target": report.over_target, "appends_over_window": report.over_window,
    }
    return events, summary
