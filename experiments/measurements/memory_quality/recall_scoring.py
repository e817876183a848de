"""Retrieval figures of the recall strategies (:class:`aptmem.memory.recall.RecallMemory`), on the replay's root.

After a recall strategy's replay (:mod:`.replay`) its scratch root holds every session's log and
the recall index the strategy kept up to date. :class:`RecallScores` then, on that root:

* builds the same index afresh in a file of its own, timed: seconds per 10k records, records, bytes;
* asks every item in its three wordings of the strategy's index (``k`` = 10, the strategy's level,
  L3 variant and engine), each query timed;
* judges each answer with :func:`aptmem.recall.scoring.judge` (recall@1/5/10, NDCG@10 and MRR at
  entry and session level, the share of an aggregation's evidence in the top 10, the absent-fact
  false positive: the top hit is some planted item's evidence entry), and answerability of the
  1,024-token recall packet (:func:`aptmem.recall.api.pack`) with the measurement's own judge
  (:func:`.scorer.judge`, the same rules as the context's packets); with, to tell where an answer
  is lost, how many hits the packet shows (``shown``) and whether every answer is in its text
  (``answers_in_packet``);
* judges what the strategy would actually show: the hits after its abstention test
  (:func:`aptmem.recall.abstain.abstain` at the strategy's ``min_coverage``), packed the same way.
  ``abstained`` says the test returned nothing; ``false_positive_shown`` (absent items only) says
  that packet still names the subject beside a value (the measurement's absent-fact rule, the
  rule of ``absent_abstained``), where ``false_positive`` only asks whether the ranking's top hit
  is a planted item's evidence, before any abstention. ``coverage`` is the test's measure
  (:func:`aptmem.recall.abstain.best_coverage`), kept so a threshold can be studied afterwards.

Evidence is (session id, entry id): the workload's entry ids are unique across its sessions, and
the session each landed in is read from the index. Rows go to ``memory_recall`` (one per strategy,
window, seed, item and wording) and ``memory_recall_runs`` (one per strategy, window and seed);
:func:`recall_summary` averages them per strategy, window and wording.
"""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl

from aptmem.memory.base import MemoryStrategy
from aptmem.memory.recall import RecallMemory
from aptmem.recall.abstain import abstain, best_coverage
from aptmem.recall.api import pack
from aptmem.recall.index import RecallIndex, file_token
from aptmem.recall.scoring import Question, judge
from experiments.core.knowledge import judge as judge_packet, units
from experiments.measurements.memory_quality.workload import Workload

__all__ = ["RECALL_K", "RECALL_RUN_SCHEMA", "RECALL_SCHEMA", "RECALL_TABLES", "RecallScores", "recall_summary"]

RECALL_TABLES = ("memory_recall", "memory_recall_runs")
#: Hits asked per question, and the packet budget answerability is judged within.
RECALL_K = 10
PACKET_TOKENS = 1024

_KEY = {"strategy": pl.String, "window": pl.Int64, "seed": pl.Int64}
RECALL_SCHEMA = {**_KEY, "item": pl.String, "type": pl.String, "lang": pl.String, "wording": pl.String,
                 "evidence": pl.Int64, "evidence_indexed": pl.Int64, "entry_rank": pl.Int64, "session_rank": pl.Int64,
                 **{f"{level}_recall@{k}": pl.Float64 for level in ("entry", "session") for k in (1, 5, 10)},
                 "entry_ndcg@10": pl.Float64, "session_ndcg@10": pl.Float64, "entry_rr": pl.Float64,
                 "session_rr": pl.Float64, "evidence_share10": pl.Float64, "shown": pl.Int64,
                 "answers_in_packet": pl.Boolean, "answerable": pl.Boolean,
                 "false_positive": pl.Boolean, "false_positive_shown": pl.Boolean, "abstained": pl.Boolean,
                 "coverage": pl.Float64, "top_score": pl.Float64, "hits": pl.Int64, "query_ms": pl.Float64}
RECALL_RUN_SCHEMA = {**_KEY, "engine": pl.String, "level": pl.String, "l3": pl.String, "records": pl.Int64,
                     "bytes": pl.Int64, "build_seconds": pl.Float64, "seconds_per_10k": pl.Float64,
                     "query_p50_ms": pl.Float64, "query_p95_ms": pl.Float64, "queries": pl.Int64}
_WORDINGS = ("template", "paraphrase", "other_language")


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


class RecallScores:
    """Collects the retrieval rows of every recall strategy's runs; other strategies add nothing."""

    def __init__(self) -> None:
        self.questions: list[dict[str, object]] = []
        self.runs: list[dict[str, object]] = []

    def score(self, key: dict[str, object], workload: Workload, strategy: MemoryStrategy, root: Path) -> None:
        """Score ``strategy``'s recall on the replay ``root`` (before it is removed); ``key`` heads every row."""
        if not isinstance(strategy, RecallMemory):
            return
        strategy.close()  # the replay's cached index: the root is about to go
        index = strategy.index_at(root)
        try:
            index.refresh()
            build = self._build(strategy, root)
            self._ask(key, workload, strategy, index, build)
        finally:
            strategy.close()

    @staticmethod
    def _build(strategy: RecallMemory, root: Path) -> dict[str, object]:
        """The strategy's index built afresh from the logs (its own file), timed and measured."""
        store = strategy.index_at(root).store
        started = time.perf_counter()
        fresh = RecallIndex(store, root, engines=(strategy.engine,), facts=strategy.facts,
                            path=root / "recall-build.sqlite", change_token=lambda sid: file_token(store.path(sid)))
        try:
            fresh.refresh()
            seconds = time.perf_counter() - started
            stats = fresh.stats()
        finally:
            fresh.close()
        records = sum(stats.records.values())
        return {"engine": strategy.engine, "level": strategy.level, "l3": strategy.l3, "records": records,
                "bytes": stats.bytes, "build_seconds": seconds, "seconds_per_10k": seconds / max(records, 1) * 10_000}

    def _ask(self, key: dict[str, object], workload: Workload, strategy: RecallMemory, index: RecallIndex,
             build: dict[str, object]) -> None:
        where = dict(index.db.execute("SELECT entry_id, session_id FROM docs WHERE level = 'l3'").fetchall())
        planted = frozenset((where[e], e) for item in workload.items for e in item.evidence if e in where)
        latencies: list[float] = []
        for item in workload.items:
            evidence = tuple((where[e], e) for e in item.evidence if e in where)
            judged = item.judged()
            for wording, text in zip(_WORDINGS, item.questions, strict=True):
                started = time.perf_counter_ns()
                hits = index.search(text, k=RECALL_K, level=strategy.level, l3=strategy.l3, engine=strategy.engine)
                elapsed = (time.perf_counter_ns() - started) / 1e6
                latencies.append(elapsed)
                question = Question(qid=f"{item.id}:{wording}", fact_id=item.id, kind=item.kind, wording=wording,
                                    language=item.lang, carrier=item.format, split="held_out", text=text,
                                    evidence=evidence, aggregation=item.type == "aggregate")
                packet = pack(text, hits, PACKET_TOKENS)
                verdict = judge(question, [(h.session_id, h.entry_id) for h in hits], packet.text, planted)
                kept = abstain(text, hits, strategy.min_coverage)
                # What the strategy shows: nothing when it abstains (an empty packet names no subject).
                shown_text = pack(text, kept, PACKET_TOKENS).text if kept else ""
                self.questions.append({
                    **key, "item": item.id, "type": item.type, "lang": item.lang, "wording": wording,
                    "evidence": len(item.evidence), "evidence_indexed": len(evidence),
                    "entry_rank": verdict.entry_rank, "session_rank": verdict.session_rank,
                    **{f"entry_recall@{k}": v for k, v in verdict.entry_recall.items()},
                    **{f"session_recall@{k}": v for k, v in verdict.session_recall.items()},
                    "entry_ndcg@10": verdict.entry_ndcg10, "session_ndcg@10": verdict.session_ndcg10,
                    "entry_rr": verdict.entry_rr, "session_rr": verdict.session_rr,
                    "evidence_share10": verdict.evidence_share10, "shown": len(packet.hits),
                    "answers_in_packet": all(a in packet.text for a in item.answers),
                    "answerable": judge_packet(judged, units([("system", packet.text)])),
                    "false_positive": verdict.false_positive,
                    "false_positive_shown": (not judge_packet(judged, units([("system", shown_text)]))
                                             if item.type == "absent" else None),
                    "abstained": not kept, "coverage": best_coverage(text, hits), "top_score": hits[0].score if hits else None,
                    "hits": len(hits), "query_ms": elapsed})
        self.runs.append({**key, **build, "query_p50_ms": _percentile(latencies, 0.5),
                          "query_p95_ms": _percentile(latencies, 0.95), "queries": len(latencies)})

    def tables(self) -> dict[str, pl.DataFrame]:
        """``memory_recall`` and ``memory_recall_runs`` (empty, with their schemas, when no recall strategy ran)."""
        return {"memory_recall": pl.DataFrame(self.questions, schema=RECALL_SCHEMA),
                "memory_recall_runs": pl.DataFrame(self.runs, schema=RECALL_RUN_SCHEMA)}


def recall_summary(questions: pl.DataFrame) -> pl.DataFrame:
    """Per strategy, window and wording: the retrieval metrics averaged over items and seeds.

    Recall, NDCG and MRR average over items with evidence (facts, previous values, sets, order,
    updates); ``aggregation_evidence@10`` over sets; ``false_positive_rate`` (the top hit is planted
    evidence, before abstention) and ``false_positive_shown_rate`` (the packet after the strategy's
    abstention still names the subject beside a value) over absent items; ``abstained_rate`` over
    items with evidence (answers the abstention threw away); ``answerable_1024`` over the items the
    measurement calls findable plus updates.
    """
    present = questions.filter(pl.col("type") != "absent")
    metrics = [c for c in RECALL_SCHEMA if "recall@" in c or "ndcg" in c or c.endswith("_rr")]
    base = present.group_by("strategy", "window", "wording").agg(
        pl.len().alias("questions"), *(pl.col(c).mean() for c in metrics),
        pl.col("answerable").cast(pl.Float64).mean().alias("answerable_1024"),
        pl.col("abstained").cast(pl.Float64).mean().alias("abstained_rate"))
    aggregation = questions.filter(pl.col("type") == "aggregate").group_by("strategy", "window", "wording") \
        .agg(pl.col("evidence_share10").mean().alias("aggregation_evidence@10"))
    absent = questions.filter(pl.col("type") == "absent").group_by("strategy", "window", "wording") \
        .agg(pl.col("false_positive").cast(pl.Float64).mean().alias("false_positive_rate"),
             pl.col("false_positive_shown").cast(pl.Float64).mean().alias("false_positive_shown_rate"))
    keys = ["strategy", "window", "wording"]
    return base.join(aggregation, on=keys, how="left").join(absent, on=keys, how="left").sort(keys)
