"""The hybrid engine: keyword and meaning fused by reciprocal rank fusion (Cormack et al., 2009).

Each part ranks its own top :data:`DEPTH` records; a record's fused score is the sum over the
parts of ``1 / (RRF_K + rank)``. RRF needs no score calibration between BM25 and cosine, which
is why it is the usual choice for hybrid search. ``RRF_K = 60`` is the paper's constant, not a
value tuned here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from aptmem.recall.engines.base import Engine, Filter
from aptmem.recall.records import Doc

__all__ = ["HybridEngine", "RRF_K", "DEPTH", "rrf"]

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
