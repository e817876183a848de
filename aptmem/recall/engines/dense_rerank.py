"""The hybrid engine: keyword search ranks, sentence embeddings reorder its best records.

Fusing whole rankings by rank (RRF) gave the embedding's ranking as much say as the keyword
engine's, and on its own the embedding ranks badly (WordLlama's recall@5 on the recall benchmark
is 10-38%: a chunk's mean token vector is mostly its filler), so the fused ranking fell below
the keyword one on every split. Here the keyword engine (``fts``: BM25, the lexicon, the
coverage rerank) chooses the candidates and the embedding only reorders its best
:data:`DEPTH`: each record gets the cosine between the question and the closest *piece*
of the record (a line, or a sentence of a long line), so a statement said in one sentence of a
long message is compared as that sentence, not as the message's average. A record's new score
is its keyword score plus :data:`WEIGHT` times ``1 + cosine`` (a cosine is in [-1, 1], so the
reordered records stay above the rest and the scores still fall with the rank).

``WEIGHT``, ``DEPTH`` and the piece-level cosine were chosen on the recall benchmark's
development splits only (tune, held_out, fresh and phase 6's blind; never ``blind2``): the
weight that gives the best mean recall@5 over their split x wording cells, ties broken by the
mean recall@1, then the smallest depth that keeps both (``benchmarks/recall_fusion.py`` prints
that sweep). Re-checked in phase 8 after the answer types entered the keyword rerank, ``blind2``
now among the development splits (mean recall@5 over their 12 cells): weight 1 / 1.5 / 2 / 3 at
depth 10 gave 97.88 / 97.83 / 97.92 / 97.83, depth 6 / 10 / 15 / 20 at weight 2 gave 97.38 /
97.92 / 97.83 / 97.83 (``fts`` alone 97.54): both kept.

The embedding needs no table of its own: a search embeds the question and the pieces of at most
:data:`DEPTH` records (about 35 short texts; their embedding is most of what the engine adds to
``fts``'s time, so the depth is the smallest that ranks as well as the fts rerank's 20).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from aptmem.recall.engines.base import Engine, Filter
from aptmem.recall.engines.embed import TextEmbedder, _one_blas_thread
from aptmem.recall.records import Doc
__all__ = ["DEPTH", "WEIGHT", "DenseRerankEngine", "pieces", "reorder"]

#: How many of the keyword ranking's best records are reordered (see the module docstring). On the
#: development splits (benchmarks/recall_fusion.py, weight 2) the mean recall@5 / @1 reordering the
#: best 8 / 10 / 12 / 16 / 20 is 97.50 / 97.65 / 97.60 / 97.60 / 97.60 and 83.20 / 83.15 / 83.15 /
#: 83.10 / 83.10 (fts alone: 96.65 / 82.30): 10 is the smallest depth that ranks as well as 20.
DEPTH = 10

#: How much ``1 + cosine`` of a record's closest piece adds to its keyword score (see the module
#: docstring for how it was chosen: mean recall@5 / @1 over the development cells with weight
#: 1 / 1.5 / 2 / 3 / 4 was 97.15 / 97.35 / 97.60 / 97.40 / 97.00 and 82.85 / 83.05 / 83.10 / 82.50 /
#: 80.30, reordering the best 20). The keyword score of a reordered record is its number of
#: covered concepts plus its BM25 share, so 2 lets a clearly closer piece outweigh one concept.
WEIGHT = 2.0

#: A record's pieces: its lines, and their sentences (cut after ., ! or ? and a space, or after a
#: CJK full stop, which no space follows).
_PIECE_BREAK = re.compile(r"\n|(?<=[.!?])\s+|(?<=[。！？])")


def pieces(text: str) -> list[str]:
    """The non-blank lines of ``text`` and the sentences of each, stripped; ``[text]`` if none."""
    out = [p.strip() for p in _PIECE_BREAK.split(text) if p.strip()]
    return out or [text]


def reorder(ranked: Sequence[tuple[int, float]], similarity: dict[int, float], weight: float = WEIGHT,
            depth: int = DEPTH) -> list[tuple[int, float]]:
    """``ranked`` (best first) with its first ``depth`` reordered by score + ``weight`` x (1 + similarity).

    A record of the head without a similarity keeps its score (as if its cosine were -1).
    """
    head = [(doc_id, score + weight * (1.0 + similarity.get(doc_id, -1.0))) for doc_id, score in ranked[:depth]]
    head.sort(key=lambda item: -item[1])
    return head + list(ranked[depth:])


class DenseRerankEngine:
    """A keyword engine's ranking with its head reordered by sentence-embedding similarity (module docstring).

    It keeps no table of its own: its ``components`` are the keyword engine's, ``add`` and
    ``remove`` pass through to it. ``embedder`` builds the model on the first search.
    """

    def __init__(self, name: str, keyword: Engine, embedder: Callable[[], TextEmbedder], requires: tuple[str, ...],
                 extra: str, weight: float = WEIGHT) -> None:
        self.name = name
        self.keyword = keyword
        self.components = keyword.components
        self.requires = tuple(dict.fromkeys((*keyword.requires, *requires)))
        self.extra = extra
        self.weight = weight
        self._make = embedder
        self._embedder: TextEmbedder | None = None

    def _model(self) -> TextEmbedder:
        if self._embedder is None:
            self._embedder = self._make()
        return self._embedder

    def prepare(self, db: sqlite3.Connection) -> None:
        """Prepare the keyword engine and load the model (a missing package fails here, clearly)."""
        self.keyword.prepare(db)
        self._model()

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index records in the keyword engine."""
        self.keyword.add(db, docs)

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records in the keyword engine."""
        self.keyword.remove(db, doc_ids)

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The keyword engine's ranking of ``max(k, DEPTH)``, its head reordered (see :func:`reorder`)."""
        ranked = self.keyword.search(db, question, max(k, DEPTH), where)
        if len(ranked) < 2:
            return ranked[:k]
        head = [doc_id for doc_id, _ in ranked[:DEPTH]]
        texts = db.execute(f"SELECT doc_id, text FROM docs WHERE doc_id IN ({','.join('?' * len(head))})", head).fetchall()
        return reorder(ranked, self.similarity(question, texts), self.weight)[:k]

    def similarity(self, question: str, texts: Sequence[tuple[int, str]]) -> dict[int, float]:
        """Record id -> cosine between ``question`` and the closest of the record's :func:`pieces`."""
        owners: list[int] = []
        cut: list[str] = []
        for doc_id, text in texts:
            parts = pieces(text)
            cut.extend(parts)
            owners.extend([doc_id] * len(parts))
        if not cut:
            return {}
        # Small products, as in an embedding search: BLAS on the calling thread (see EmbeddingEngine.search).
        with _one_blas_thread():
            vectors: Any = self._model().embed([question, *cut])
            cosines = vectors[1:] @ vectors[0]
        best: dict[int, float] = {}
        for doc_id, cosine in zip(owners, cosines.tolist()):
            if cosine > best.get(doc_id, -2.0):
                best[doc_id] = cosine
        return best
