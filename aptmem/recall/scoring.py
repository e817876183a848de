"""Scoring retrieval against planted facts: the metrics of the recall benchmark, importable.

A :class:`Question` names its evidence (the entries that state the fact) and the exact answer; a
search's hits are judged by :func:`judge` into a :class:`Judgement` with, at entry and at session
level, the rank of the first relevant hit, recall@1/5/10, NDCG@10 (binary relevance) and the
reciprocal rank; for a question with several evidence entries (aggregation), the share of them in
the top 10; whether the packet of at most ``budget`` tokens holds the exact answer; and, for a
question about a fact that was never planted, whether the top hit is a planted fact's entry (a
false positive: a confident-looking wrong answer). :func:`summarize` averages judgements into one
row per group. Nothing here knows the engine or the workload generator, so a memory-quality
measurement can score any strategy that returns ranked (session, entry) hits and a packet.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import msgspec

__all__ = ["CUTOFFS", "Judgement", "Question", "judge", "ndcg", "summarize"]

CUTOFFS = (1, 5, 10)


class Question(msgspec.Struct, kw_only=True, frozen=True):
    """A question with its planted evidence; ``evidence`` is empty for an absent-fact question."""

    qid: str
    fact_id: str
    kind: str  # what is asked: env, branch, ticket, ... or "absent"
    wording: str  # template | paraphrase | other_language
    language: str  # the question's language: en | zh
    carrier: str  # how the fact was written: prose, code_comment, log_line, json, ...
    split: str  # tune | held_out | fresh (benchmarks/recall_workload.py)
    text: str
    answer: str = ""
    evidence: tuple[tuple[str, str], ...] = ()  # (session_id, entry_id)
    aggregation: bool = False


class Judgement(msgspec.Struct, kw_only=True):
    """How one search did on one question (see the module docstring)."""

    qid: str
    entry_rank: int | None
    session_rank: int | None
    entry_recall: dict[int, float]
    session_recall: dict[int, float]
    entry_ndcg10: float
    session_ndcg10: float
    entry_rr: float
    session_rr: float
    evidence_share10: float
    answerable: bool
    false_positive: bool


def ndcg(relevant: Sequence[bool], total_relevant: int, cutoff: int = 10) -> float:
    """NDCG@cutoff of a ranking given as relevance flags, with ``total_relevant`` relevant items in all."""
    if total_relevant == 0:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 2) for rank, rel in enumerate(relevant[:cutoff]) if rel)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(total_relevant, cutoff)))
    return dcg / ideal


def _first(flags: Sequence[bool]) -> int | None:
    return next((i + 1 for i, f in enumerate(flags) if f), None)


def judge(question: Question, hits: Sequence[tuple[str, str]], packet: str, planted: frozenset[tuple[str, str]] = frozenset()) -> Judgement:
    """Judge ranked ``hits`` ((session_id, entry_id), best first) and the ``packet`` text for ``question``.

    ``planted`` is every planted fact's evidence entry, for the absent-fact false-positive test.
    Sessions are counted once, at their best rank.
    """
    evidence = set(question.evidence)
    sessions = {s for s, _ in evidence}
    entry_flags = [h in evidence for h in hits]
    ranked_sessions = list(dict.fromkeys(s for s, _ in hits))
    session_flags = [s in sessions for s in ranked_sessions]
    entry_rank, session_rank = _first(entry_flags), _first(session_flags)

    def recall_at(flags: list[bool], rank: int | None, total: int) -> dict[int, float]:
        if total == 0:
            return {k: 0.0 for k in CUTOFFS}
        if question.aggregation:  # every piece of evidence counts
            return {k: sum(flags[:k]) / total for k in CUTOFFS}
        return {k: float(rank is not None and rank <= k) for k in CUTOFFS}

    top10 = set(hits[:10])
    return Judgement(
        qid=question.qid,
        entry_rank=entry_rank,
        session_rank=session_rank,
        entry_recall=recall_at(entry_flags, entry_rank, len(evidence)),
        session_recall=recall_at(session_flags, session_rank, len(sessions)),
        entry_ndcg10=ndcg(entry_flags, len(evidence)),
        session_ndcg10=ndcg(session_flags, len(sessions)),
        entry_rr=1.0 / entry_rank if entry_rank else 0.0,
        session_rr=1.0 / session_rank if session_rank else 0.0,
        evidence_share10=len(top10 & evidence) / len(evidence) if evidence else 0.0,
        answerable=bool(question.answer) and question.answer in packet,
        false_positive=not evidence and bool(hits) and hits[0] in planted,
    )


def summarize(pairs: Iterable[tuple[Question, Judgement]], by: Sequence[str] = ("wording",)) -> list[dict[str, object]]:
    """Mean metrics per group of questions (grouped by the :class:`Question` fields ``by``).

    Present-fact metrics average over questions with evidence; ``false_positive_rate`` over the
    absent-fact questions of the group; ``evidence_share10`` over aggregation questions.
    """
    groups: dict[tuple, list[tuple[Question, Judgement]]] = defaultdict(list)
    for question, judgement in pairs:
        groups[tuple(getattr(question, f) for f in by)].append((question, judgement))
    rows: list[dict[str, object]] = []
    for key, items in sorted(groups.items()):
        present = [j for q, j in items if q.evidence]
        absent = [j for q, j in items if not q.evidence]
        aggregation = [j for q, j in items if q.aggregation]
        answerable = [j for q, j in items if q.evidence and q.answer]
        row: dict[str, object] = dict(zip(by, key))
        row["questions"] = len(present)
        row["absent_questions"] = len(absent)

        def mean(values: list[float]) -> float | None:
            return sum(values) / len(values) if values else None

        for k in CUTOFFS:
            row[f"entry_recall@{k}"] = mean([j.entry_recall[k] for j in present])
            row[f"session_recall@{k}"] = mean([j.session_recall[k] for j in present])
        row["entry_ndcg@10"] = mean([j.entry_ndcg10 for j in present])
        row["session_ndcg@10"] = mean([j.session_ndcg10 for j in present])
        row["entry_mrr"] = mean([j.entry_rr for j in present])
        row["session_mrr"] = mean([j.session_rr for j in present])
        row["aggregation_evidence@10"] = mean([j.evidence_share10 for j in aggregation])
        row["answerable"] = mean([float(j.answerable) for j in answerable])
        row["false_positive_rate"] = mean([float(j.false_positive) for j in absent])
        rows.append(row)
    return rows
