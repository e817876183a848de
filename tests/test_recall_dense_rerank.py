"""The hybrid engine (aptmem/recall/engines/dense_rerank.py): the keyword ranking's head reordered by piece cosine."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.recall.engines.base import Filter
from aptmem.recall.engines.dense_rerank import DEPTH, DenseRerankEngine, pieces, reorder
from aptmem.recall.records import Doc


def test_pieces_are_lines_and_sentences() -> None:
    assert pieces("a b. c d!\nx 我们决定了。你好？ok") == ["a b.", "c d!", "x 我们决定了。", "你好？", "ok"]
    assert pieces("version 1.2.3 is pinned") == ["version 1.2.3 is pinned"]  # no space after the dots: one piece
    assert pieces("  \n ") == ["  \n "]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_reorder_moves_only_the_head_and_keeps_scores_falling(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 3 * DEPTH)
    scores = sorted((rng.uniform(0, 5) for _ in range(n)), reverse=True)
    ranked = list(enumerate(scores))
    similarity = {i: rng.uniform(-1, 1) for i in range(n) if rng.random() < 0.9}
    out = reorder(ranked, similarity, weight=rng.uniform(0, 4))
    assert sorted(i for i, _ in out) == list(range(n)), seed
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True), seed
    assert out[DEPTH:] == ranked[DEPTH:], seed
    assert [i for i, _ in reorder(ranked, similarity, weight=0.0)] == [i for i, _ in ranked], seed


class _Keyword:
    """A keyword engine with a fixed ranking."""

    name = "fixed"
    components = ("fixed",)
    requires: tuple[str, ...] = ()
    extra = ""

    def __init__(self, ranking: list[tuple[int, float]]) -> None:
        self.ranking = ranking

    def prepare(self, db: sqlite3.Connection) -> None:
        """Nothing to create."""

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Nothing to index."""

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Nothing to forget."""

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The fixed ranking's first ``k``."""
        return self.ranking[:k]


_AXES = ("restart", "branch", "invoice")


class _BagEmbedder:
    """Texts as unit vectors of how often each of :data:`_AXES` occurs (and a constant, so none is zero)."""

    name = "bag"
    dims = len(_AXES) + 1
    coarse_dims = dims
    requires: tuple[str, ...] = ()
    extra = ""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one per text."""
        rows = np.array([[t.lower().count(a) for a in _AXES] + [0.1] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _db(texts: dict[int, str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE docs (doc_id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    db.executemany("INSERT INTO docs VALUES (?, ?)", texts.items())
    return db


def test_a_record_whose_one_sentence_is_close_moves_up() -> None:
    # Record 2 says what is asked in one sentence among unrelated ones; record 1 scores higher by keywords.
    texts = {1: "invoice totals for kestrel. invoice export done.",
             2: "invoice totals again. kestrel keeps a restart loop after boot. invoice export done.",
             3: "kestrel invoice"}
    engine = DenseRerankEngine("hybrid", _Keyword([(1, 3.0), (3, 2.5), (2, 2.4)]), _BagEmbedder, (), "")
    db = _db(texts)
    assert [i for i, _ in engine.search(db, "why the restart on kestrel", 3, Filter())] == [2, 1, 3]
    # As a whole record, 2 is mostly about invoices: its cosine is below its best piece's.
    whole = engine.similarity("why the restart", [(2, texts[2].replace(". ", "; "))])[2]
    assert engine.similarity("why the restart", [(2, texts[2])])[2] > whole
    # With no weight the keyword ranking stands; k cuts it.
    plain = DenseRerankEngine("hybrid", _Keyword([(1, 3.0), (3, 2.5), (2, 2.4)]), _BagEmbedder, (), "", weight=0.0)
    assert [i for i, _ in plain.search(db, "why the restart on kestrel", 2, Filter())] == [1, 3]


def test_a_single_hit_is_returned_as_the_keyword_engine_ranks_it() -> None:
    engine = DenseRerankEngine("hybrid", _Keyword([(7, 1.5)]), _BagEmbedder, (), "")
    assert engine.search(_db({7: "x"}), "anything", 5, Filter()) == [(7, 1.5)]
    assert DenseRerankEngine("hybrid", _Keyword([]), _BagEmbedder, (), "").search(_db({}), "q", 5, Filter()) == []
