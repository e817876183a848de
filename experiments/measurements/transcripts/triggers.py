"""Where aptmem, counting by one tier under the agent's own rule and window, would compact, beside the agent.

A real session is cut into *segments* at the compactions its agent wrote (Claude Code's
``compact_boundary`` + summary, pi's ``compaction``). In each segment the context grew from what
the previous compaction left; three points are put side by side, each as the request before which
the compaction happens (the first request whose reply comes after it):

* ``agent``: where the agent did compact (the segment ends there; ``auto`` or ``manual`` as Claude
  Code records it, ``unknown`` where the file does not say);
* ``rule``: where the agent's own rule fires on the provider's count: the first reply whose
  reported input + output reached the trigger (window - the agent's reserve, DESIGN.md);
* ``aptmem``: the first entry after which the tier's count of the next request (what a
  :class:`~aptmem.session.Session` checks after every append) reached the same trigger.

The reference is where the agent compacted when it did so by its rule (``auto``, or ``unknown``
with a count before it at or over the trigger): the agent counts the reported usage plus its own
estimate of what came after, as ``preTokens`` / ``tokensBefore`` show, so its rule can fire a
request before the reported count alone reaches the trigger. Otherwise (a manual compaction
below the trigger, or none) the reference is the rule on the provider's count, and none when it
never fires. aptmem compacts on time in a segment when it and the reference both fire within
``tolerance`` requests of each other, or neither fires. A request aptmem would have sent before compacting
(all of the segment's when it never fires) that the provider counted above the window would
have exceeded it. A segment after the first starts from the agent's compaction, not aptmem's
own: the file's later usage is of that context, so it is the only one that can be scored.

The agent's count at each of its compactions is scored too: each tier's count just before the
compaction entry against ``preTokens`` / ``tokensBefore``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

import polars as pl

from aptmem.entries import Compaction, Entry, Metadata
from aptmem.importers.usage import CounterSpec, Request

__all__ = ["AGENT_COMPACTION_SCHEMA", "AGENT_RESERVE", "TRIGGER_SCHEMA", "agent_compaction_rows", "agent_trigger",
           "counts_after_each_entry", "trigger_rows"]

#: Tokens the original agent keeps free below the window before it compacts (DESIGN.md's reference figures).
AGENT_RESERVE = {"claude-code": 33_000, "pi": 16_384}

#: One row per (session, window, tier, segment). Requests are 0-based among the session's requests with
#: usage; a null request: no request followed (or the point was never reached in the segment).
TRIGGER_SCHEMA = {"format": pl.String, "session": pl.String, "window": pl.Int64, "trigger_tokens": pl.Int64,
                  "tier": pl.String, "segment": pl.Int64, "first_entry": pl.Int64, "end_entry": pl.Int64,
                  "requests": pl.Int64, "agent_kind": pl.String, "agent_pre_tokens": pl.Int64,
                  "agent_request": pl.Int64, "rule_fires": pl.Boolean, "rule_request": pl.Int64,
                  "rule_tokens": pl.Int64, "reference": pl.String, "reference_request": pl.Int64,
                  "aptmem_fires": pl.Boolean, "aptmem_entry": pl.Int64,
                  "aptmem_request": pl.Int64, "aptmem_tokens": pl.Int64, "reported_at_aptmem": pl.Int64,
                  "gap_requests": pl.Int64, "on_time": pl.Boolean, "over_window_requests": pl.Int64,
                  "max_reported_before": pl.Int64}

#: One row per (agent compaction, tier): the tier's count of the context the agent compacted.
AGENT_COMPACTION_SCHEMA = {"format": pl.String, "session": pl.String, "compaction": pl.Int64, "entry": pl.Int64,
                           "kind": pl.String, "pre_tokens": pl.Int64, "last_input": pl.Int64,
                           "last_output": pl.Int64, "tier": pl.String, "estimate": pl.Int64, "error": pl.Int64,
                           "ape_pct": pl.Float64}


def agent_trigger(fmt: str, window: int) -> int:
    """The context size at which the original agent compacts (never below half the window)."""
    return max(window - AGENT_RESERVE.get(fmt, 0), window // 2)


def counts_after_each_entry(entries: Sequence[Entry], specs: Mapping[str, CounterSpec]) -> dict[str, list[int]]:
    """Per tier: its count of the next request after each entry (a fresh counter per tier)."""
    counters = {tier: spec.make() for tier, spec in specs.items()}
    out: dict[str, list[int]] = {tier: [] for tier in specs}
    for entry in entries:
        for tier, counter in counters.items():
            counter.add(entry)
            out[tier].append(counter.total)
    return out


def _kind(entries: Sequence[Entry], index: int) -> str:
    """auto / manual as the boundary line before a Claude Code compaction says, else unknown."""
    for entry in reversed(entries[max(0, index - 5):index]):
        if isinstance(entry, Metadata) and entry.kind == "compact_boundary":
            meta = entry.data.get("compactMetadata")
            trigger = meta.get("trigger") if isinstance(meta, dict) else None
            return trigger if isinstance(trigger, str) else "unknown"
    return "unknown"


class _Requests:
    """The session's requests with usage, found by entry position."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.items = list(requests)
        self.seqs = [r.seq for r in requests]

    def after(self, entry: int) -> int | None:
        """Index of the first request whose reply comes after ``entry`` (None: none does)."""
        index = bisect.bisect_right(self.seqs, entry)
        return index if index < len(self.seqs) else None

    def within(self, lo: int, hi: int) -> list[Request]:
        """The requests whose reply lies in entries ``[lo, hi)``."""
        return self.items[bisect.bisect_left(self.seqs, lo):bisect.bisect_left(self.seqs, hi)]

    def latest_at(self, entry: int) -> Request | None:
        """The latest request whose reply is at or before ``entry``."""
        index = bisect.bisect_right(self.seqs, entry) - 1
        return self.items[index] if index >= 0 else None


def _after_context(r: Request) -> int:
    """What a request and its reply hold: the agents' own trigger count (input + output)."""
    return r.reported + (r.output or 0)


def _position(request: int | None, total: int) -> int:
    """A request index to compare; 'after the last request' is the request that would come next."""
    return total if request is None else request


def trigger_rows(fmt: str, session: str, entries: Sequence[Entry], requests: Sequence[Request],
                 counts: Mapping[str, Sequence[int]], *, window: int, tolerance: int) -> list[dict[str, object]]:
    """Rows of :data:`TRIGGER_SCHEMA` for one session at one window, every tier of ``counts``."""
    trigger = agent_trigger(fmt, window)
    found = _Requests(requests)
    ends = [i for i, e in enumerate(entries) if isinstance(e, Compaction)]
    bounds = list(zip([0, *(c + 1 for c in ends)], [*ends, len(entries)], strict=True))
    rows: list[dict[str, object]] = []
    for segment, (lo, hi) in enumerate(bounds):
        part = found.within(lo, hi)
        compacted = hi < len(entries)
        compaction = entries[hi] if compacted else None
        rule = next((r for r in part if _after_context(r) >= trigger), None)
        rule_request = found.after(rule.seq) if rule is not None else None
        kind = _kind(entries, hi) if compacted else None
        pre = compaction.tokens_before if isinstance(compaction, Compaction) else None
        by_rule = kind == "auto" or (kind == "unknown" and pre is not None and pre >= trigger)
        reference = "agent" if by_rule else ("rule" if rule is not None else "none")
        reference_fires = reference != "none"
        reference_request = found.after(hi) if by_rule else rule_request
        for tier, totals in counts.items():
            fire = next((e for e in range(lo, hi) if totals[e] >= trigger), None)
            aptmem_request = found.after(fire) if fire is not None else None
            before = [r for r in part if fire is None or r.seq <= fire]
            latest = found.latest_at(fire) if fire is not None else None
            gap = None
            if reference_fires and fire is not None:
                gap = _position(aptmem_request, len(requests)) - _position(reference_request, len(requests))
            on_time = (not reference_fires and fire is None) or (gap is not None and abs(gap) <= tolerance)
            rows.append({
                "format": fmt, "session": session, "window": window, "trigger_tokens": trigger, "tier": tier,
                "segment": segment, "first_entry": lo, "end_entry": hi, "requests": len(part),
                "agent_kind": kind, "agent_pre_tokens": pre, "agent_request": found.after(hi) if compacted else None,
                "rule_fires": rule is not None, "rule_request": rule_request,
                "rule_tokens": _after_context(rule) if rule is not None else None,
                "reference": reference, "reference_request": reference_request,
                "aptmem_fires": fire is not None, "aptmem_entry": fire, "aptmem_request": aptmem_request,
                "aptmem_tokens": totals[fire] if fire is not None else None,
                "reported_at_aptmem": _after_context(latest) if latest is not None and latest.seq >= lo else None,
                "gap_requests": gap, "on_time": on_time,
                "over_window_requests": sum(r.reported > window for r in before),
                "max_reported_before": max((r.reported for r in before), default=None),
            })
    return rows


def agent_compaction_rows(fmt: str, session: str, entries: Sequence[Entry], requests: Sequence[Request],
                          counts: Mapping[str, Sequence[int]]) -> list[dict[str, object]]:
    """Rows of :data:`AGENT_COMPACTION_SCHEMA`: each tier's count just before each agent compaction."""
    found = _Requests(requests)
    rows: list[dict[str, object]] = []
    compactions = [(i, e) for i, e in enumerate(entries) if isinstance(e, Compaction)]
    for number, (index, entry) in enumerate(compactions, start=1):
        last = found.latest_at(index)
        for tier, totals in counts.items():
            estimate = totals[index - 1] if index > 0 else 0
            pre = entry.tokens_before
            rows.append({"format": fmt, "session": session, "compaction": number, "entry": index,
                         "kind": _kind(entries, index), "pre_tokens": pre,
                         "last_input": last.reported if last is not None else None,
                         "last_output": last.output if last is not None else None, "tier": tier,
                         "estimate": estimate, "error": None if pre is None else estimate - pre,
                         "ape_pct": None if not pre else abs(estimate - pre) / pre * 100})
    return rows
