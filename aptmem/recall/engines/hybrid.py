"""The hybrid engine: keyword and meaning fused by reciprocal rank fusion (Cormack et al., 2009).

Each part ranks its own top :data:`DEPTH` records; a record's fused score is the sum over the
parts of ``1 / (RRF_K + rank)``. RRF needs no score calibration between BM25 and cosine, which
is why it is the usual choice for hybrid search. ``RRF_K = 60`` is the paper's constant, not a
value tuned here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

from aptmem.recall.engines.base import Engine, Filter
from aptmem.recall.records import Doc

__all__ = ["CandidateEngine", "HybridEngine", "NEIGHBOURS", "RRF_K", "DEPTH", "UnionEngine", "rrf"]

RRF_K = 60
#: How deep each part ranks before fusing.
DEPTH = 50


def rrf(rankings: Sequence[Sequence[tuple[int, float]]], k: int, rrf_k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse rankings ((id, score) lists, best first) into the ``k`` best (id, fused score) pairs.

    Records with equal scores share the best of their ranks (competition ranking), so a ranking
    that cannot tell its records apart (every score tied) adds the same to each of them.
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        rank, previous = 0, None
        for position, (doc_id, score) in enumerate(ranking, start=1):
            if score != previous:
                rank, previous = position, score
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


class HybridEngine:
    """Several engines searched together and fused with :func:`rrf`.

    The index maintains the parts themselves (they are this engine's ``components``); ``add`` and
    ``remove`` pass through to them for a caller that holds only this engine.
    """

    def __init__(self, name: str, parts: Sequence[Engine]) -> None:
        self.name = name
        self.parts = tuple(parts)
        self.components = tuple(dict.fromkeys(c for p in self.parts for c in p.components))
        self.requires = tuple(dict.fromkeys(r for p in self.parts for r in p.requires))
        self.extra = ",".join(p.extra for p in self.parts if p.extra)

    def prepare(self, db: sqlite3.Connection) -> None:
        """Prepare every part."""
        for part in self.parts:
            part.prepare(db)

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index records in every part."""
        for part in self.parts:
            part.add(db, docs)

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records in every part."""
        for part in self.parts:
            part.remove(db, doc_ids)

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """Each part's top :data:`DEPTH`, fused."""
        depth = max(k, DEPTH)
        return rrf([part.search(db, question, depth, where) for part in self.parts], k)


#: How many of the embedding's nearest records join the keyword candidates of :class:`UnionEngine`.
#: Memory-quality benchmark, l3_keyword's replays at 8k, the recall packet of 20 hits, answerable
#: (oncall / independent / pairing / fieldnotes), seed 200: keyword alone 48.0 / 56.8 / 65.7 / 83.3,
#: 10 neighbours 53.9 / 59.3 / 68.6 / 84.4, 20: 52.0 / 55.6 / 69.6 / 83.3, 40: 54.9 / 54.3 / 69.6 / 78.9;
#: seed 201: keyword 43.1 / 56.7 / 64.7 / 72.2, 10: 46.1 / 61.1 / 65.7 / 81.9, 20: 45.1 / 61.1 / 67.6 / 79.2.
NEIGHBOURS = 10


class CandidateEngine(Engine, Protocol):
    """A keyword engine whose candidate generation and rerank can be called apart (:class:`UnionEngine` puts
    other candidates between them)."""

    def candidates(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The ``k`` best records before any rerank, best first."""
        ...

    def reranked(self, db: sqlite3.Connection, question: str, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``ranked`` (best first) reordered by the engine's rerank."""
        ...


class UnionEngine:
    """Keyword candidates and an embedding's nearest records, united *before* the keyword rerank.

    A question asked in other words than the statement often shares only its subject with it, and
    a busy history names the subject in many records: BM25 then ranks the statement among them at
    random, below the head the coverage rerank reorders (:mod:`aptmem.recall.rerank`), and fusing
    the embedding's ranking *after* the rerank (:class:`HybridEngine`) cannot lift it past records
    both rankings hold. Here the keyword engine's candidates and the embedding's
    :data:`NEIGHBOURS` nearest records are fused by :func:`rrf` first, so a record both find, or
    one the embedding puts near the top, is in the head the rerank orders by the question's
    concepts (a record about another subject that is merely close in meaning covers few).
    ``keyword`` is a :class:`CandidateEngine` (:class:`~aptmem.recall.engines.fts.Fts5Engine`), ``neighbours``
    any engine.
    """

    def __init__(self, name: str, keyword: CandidateEngine, neighbours: Engine, depth: int = NEIGHBOURS) -> None:
        self.name = name
        self.keyword, self.neighbours, self.depth = keyword, neighbours, depth
        self.components = tuple(dict.fromkeys((*keyword.components, *neighbours.components)))
        self.requires = tuple(dict.fromkeys((*keyword.requires, *neighbours.requires)))
        self.extra = ",".join(e for e in (keyword.extra, neighbours.extra) if e)

    def prepare(self, db: sqlite3.Connection) -> None:
        """Prepare both parts."""
        self.keyword.prepare(db)
        self.neighbours.prepare(db)

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index records in both parts."""
        self.keyword.add(db, docs)
        self.neighbours.add(db, docs)

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records in both parts."""
        self.keyword.remove(db, doc_ids)
        self.neighbours.remove(db, doc_ids)

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The keyword candidates and the nearest records, fused by :func:`rrf`, then reranked by the keyword engine."""
        wanted = max(k, DEPTH)
        keyword = self.keyword.candidates(db, question, wanted, where)
        near = self.neighbours.search(db, question, self.depth, where)
        return self.keyword.reranked(db, question, rrf([keyword, near], wanted))[:k]
