"""One replay of a session under a compaction policy, with occupancy, compactions and fact retention.

Every entry is appended through a :class:`ObservedSession` (an :class:`aptmem.session.Session`
that remembers each compaction it makes) by :func:`aptmem.compaction.replay.replay`, so compaction fires
exactly as it would live. Afterwards the planted facts are scored: a fact is *present* at a
moment when its exact answer occurs in the live context as a model would be shown it, i.e. in
the summary or in a kept entry as shown (a kept tool result shortened by the compaction counts
only with what is left of it). It is checked right after every compaction at or after the append
that planted it, and at the end of the replay.

The tables have no window or tier columns: the caller labels them (:mod:`experiments.measurements.compaction.job`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import polars as pl

from aptmem.compaction.compactor import CompactionResult
from aptmem.compaction.turns import split_tool_pairs
from aptmem.entries import Entry, UnknownEntry, User
from aptmem.compaction.replay import ReplayReport, replay
from aptmem.tokens import render_entry
from experiments.core.knowledge import Judged, present
from experiments.core.observed_session import ObservedSession
from experiments.workloads.facts import PlantedFact

__all__ = ["COMPACTION_SCHEMA", "FACT_CHECK_SCHEMA", "FACT_SCHEMA", "OCCUPANCY_SCHEMA", "ObservedSession",
           "ReplayTables", "replay_with_facts"]

#: One row per append. ``turn`` is 0-based (the workload's numbering); occupancy is context tokens /
#: window by the deciding tier, just after the append (``before`` any compaction it caused) and once
#: that compaction is done (``after``).
OCCUPANCY_SCHEMA = {"seq": pl.Int64, "turn": pl.Int64, "entry_type": pl.String, "occupancy_before": pl.Float64,
                    "occupancy_after": pl.Float64, "compacted": pl.Boolean}

#: One row per compaction (``compaction`` numbers them from 1). ``summary_tokens`` = tokens_after -
#: kept_tokens (the summary entry plus any fixed part: none in the harness's sessions).
COMPACTION_SCHEMA = {"compaction": pl.Int64, "seq": pl.Int64, "turn": pl.Int64, "occupancy_before": pl.Float64,
                     "occupancy_after": pl.Float64, "tokens_before": pl.Int64, "tokens_after": pl.Int64,
                     "summarized": pl.Int64, "kept_entries": pl.Int64, "kept_turns": pl.Int64, "kept_tokens": pl.Int64,
                     "summary_tokens": pl.Int64, "summary_chars": pl.Int64, "notes": pl.Int64,
                     "over_target": pl.Boolean, "shortened": pl.Int64, "oversized": pl.Int64,
                     "split_tool_pairs": pl.Int64, "facts_planted": pl.Int64, "facts_live": pl.Int64}

#: One row per planted fact. ``compactions_after`` counts compactions at or after the planting
#: append; ``compactions_survived`` how many of them left the answer in the live context;
#: ``first_lost_at`` the number of the first that did not (null if none); ``where_at_end`` is
#: summary, kept, both or lost; ``answer_elsewhere`` counts occurrences of the answer in the
#: session outside its carrier (should be 0, else a "retained" may be a coincidence).
FACT_SCHEMA = {"fact": pl.String, "kind": pl.String, "lang": pl.String, "planted_turn": pl.Int64,
               "planted_seq": pl.Int64, "carrier": pl.String, "compactions_after": pl.Int64,
               "compactions_survived": pl.Int64, "retained_at_end": pl.Boolean, "where_at_end": pl.String,
               "first_lost_at": pl.Int64, "answer_elsewhere": pl.Int64}

#: One row per (fact, compaction at or after its planting): present in the summary, in a kept entry.
FACT_CHECK_SCHEMA = {"fact": pl.String, "compaction": pl.Int64, "since_planted": pl.Int64, "seq": pl.Int64,
                     "present": pl.Boolean, "in_summary": pl.Boolean, "in_kept": pl.Boolean}

_SEP = "\n\x00\n"  # joins texts so that no answer (which never holds a NUL) matches across two of them


@dataclass
class ReplayTables:
    """What one replay measured: the four tables and aptmem's own :class:`ReplayReport`."""

    occupancy: pl.DataFrame
    compaction: pl.DataFrame
    facts: pl.DataFrame
    fact_checks: pl.DataFrame
    report: ReplayReport


def _type_of(entry: Entry) -> str:
    if isinstance(entry, UnknownEntry):
        return entry.type
    return str(entry.__struct_config__.tag)


def _turns(entries: Sequence[Entry]) -> list[int]:
    """The 0-based turn of each entry: a turn starts at each user message (entries before the first are turn 0)."""
    turn, out = -1, []
    for entry in entries:
        turn += isinstance(entry, User)
        out.append(max(turn, 0))
    return out


def _where(in_summary: bool, in_kept: bool) -> str:
    return {(True, True): "both", (True, False): "summary", (False, True): "kept"}.get((in_summary, in_kept), "lost")


def replay_with_facts(
    entries: Sequence[Entry],
    facts: Sequence[PlantedFact],
    session: ObservedSession,
    *,
    progress: Callable[[int], object] | None = None,
) -> ReplayTables:
    """Replay ``entries`` through ``session`` (fresh, empty); score ``facts``; return the tables.

    Each fact's ``entry_id`` must name one of ``entries``; ``progress(1)`` is called per append.
    """
    tick = progress or (lambda n: None)
    seq_of = {e.id: i for i, e in enumerate(entries, start=1) if e.id is not None}
    missing = [f.id for f in facts if f.entry_id not in seq_of]
    if missing:
        raise ValueError(f"facts whose carrier is not among the entries: {', '.join(missing)}")
    first = len(session.compactions)

    def feed() -> Iterator[Entry]:
        for entry in entries:
            yield entry
            tick(1)  # runs when replay asks for the next entry: the append is done

    report, steps = replay(feed(), session, keep_steps=True)
    results = session.compactions[first:]
    at = [s.seq for s in steps if s.compacted]
    if len(at) != len(results):
        raise RuntimeError(f"{len(results)} compactions observed, {len(at)} reported by replay")
    turns = _turns(entries)
    occupancy = pl.DataFrame({"seq": [s.seq for s in steps], "turn": turns[: len(steps)],
                              "entry_type": [_type_of(e) for e in entries[: len(steps)]],
                              "occupancy_before": [s.occupancy for s in steps],
                              "occupancy_after": [s.occupancy_after for s in steps],
                              "compacted": [s.compacted for s in steps]}, schema=OCCUPANCY_SCHEMA)
    planted = {f.id: seq_of[f.entry_id] for f in facts}
    checks: list[dict[str, object]] = []
    rows: list[dict[str, object]] = []
    target = session.policy.target_tokens
    for number, (seq, result) in enumerate(zip(at, results, strict=True), start=1):
        summary = result.entry.summary
        kept = _SEP.join(render_entry(e) for e in result.plan.kept)
        live = 0
        for fact in facts:
            if planted[fact.id] > seq:
                continue
            in_summary, in_kept = present(_judged(fact), summary), present(_judged(fact), kept)
            live += in_summary or in_kept
            since = number - bisect.bisect_left(at, planted[fact.id], 0, number)  # compactions since planting
            checks.append({"fact": fact.id, "compaction": number, "since_planted": since, "seq": seq,
                           "present": in_summary or in_kept, "in_summary": in_summary, "in_kept": in_kept})
        plan = result.plan
        rows.append({"compaction": number, "seq": seq, "turn": turns[seq - 1],
                     "occupancy_before": steps[seq - 1].occupancy, "occupancy_after": steps[seq - 1].occupancy_after,
                     "tokens_before": result.tokens_before, "tokens_after": result.tokens_after,
                     "summarized": len(plan.summarized), "kept_entries": len(plan.kept), "kept_turns": plan.kept_turns,
                     "kept_tokens": plan.kept_tokens, "summary_tokens": result.tokens_after - plan.kept_tokens,
                     "summary_chars": len(summary), "notes": len(result.entry.notes),
                     "over_target": result.tokens_after > target, "shortened": len(plan.truncated),
                     "oversized": len(plan.oversized), "split_tool_pairs": split_tool_pairs(plan.kept, plan.summarized),
                     "facts_planted": sum(1 for s in planted.values() if s <= seq), "facts_live": live})
    compaction = pl.DataFrame(rows, schema=COMPACTION_SCHEMA)
    fact_checks = pl.DataFrame(checks, schema=FACT_CHECK_SCHEMA)
    facts_table = _fact_rows(entries, facts, planted, turns, at, results, fact_checks)
    return ReplayTables(occupancy, compaction, facts_table, fact_checks, report)


def _judged(fact: PlantedFact) -> Judged:
    """A planted fact as the shared scorer judges it (:mod:`experiments.core.knowledge`): one exact answer."""
    return Judged(type="fact", subject=fact.kind, answers=(fact.answer,))


def _fact_rows(entries: Sequence[Entry], facts: Sequence[PlantedFact], planted: dict[str, int], turns: list[int],
               at: list[int], results: list[CompactionResult], checks: pl.DataFrame) -> pl.DataFrame:
    """One row per fact: its survival over the compactions and its state at the end of the replay."""
    # The live context at the end, as a model is shown it: the last compaction's summary and kept
    # entries (shortened as it said), then every entry appended after it, verbatim.
    last = at[-1] if at else 0
    summary = results[-1].entry.summary if results else ""
    kept = _SEP.join([*(render_entry(e) for e in (results[-1].plan.kept if results else ())),
                      *(render_entry(e) for e in entries[last:])])
    everything = [render_entry(e) for e in entries]
    joined = _SEP.join(everything)
    rows: list[dict[str, object]] = []
    for fact in facts:
        seq = planted[fact.id]
        mine = checks.filter(pl.col("fact") == fact.id).sort("compaction")
        lost = mine.filter(~pl.col("present"))
        in_summary, in_kept = present(_judged(fact), summary), present(_judged(fact), kept)
        rows.append({"fact": fact.id, "kind": fact.kind, "lang": fact.lang, "planted_turn": turns[seq - 1],
                     "planted_seq": seq, "carrier": fact.entry_type or _type_of(entries[seq - 1]),
                     "compactions_after": mine.height, "compactions_survived": int(mine["present"].sum()),
                     "retained_at_end": in_summary or in_kept, "where_at_end": _where(in_summary, in_kept),
                     "first_lost_at": int(lost["compaction"][0]) if lost.height else None,
                     "answer_elsewhere": joined.count(fact.answer) - everything[seq - 1].count(fact.answer)})
    return pl.DataFrame(rows, schema=FACT_SCHEMA)
