"""The union engine (aptmem.recall.engines.hybrid.UnionEngine): neighbours join the keyword candidates before the rerank."""

from __future__ import annotations

import sqlite3

from aptmem.recall.engines.base import Filter
from aptmem.recall.engines.hybrid import UnionEngine


class _Keyword:
    """A keyword engine whose candidates are fixed and whose rerank puts the records it prefers first."""

    components, requires, extra = ("fts",), (), ""

    def __init__(self, ranked: list[tuple[int, float]], preferred: set[int]) -> None:
        self.ranked, self.preferred = ranked, preferred
        self.seen: list[int] = []

    def candidates(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        return self.ranked[:k]

    def reranked(self, db: sqlite3.Connection, question: str, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        self.seen = [doc_id for doc_id, _ in ranked]
        return sorted(ranked, key=lambda item: (item[0] not in self.preferred, -item[1]))


class _Near:
    components, requires, extra = ("wordllama",), (), ""

    def __init__(self, ranked: list[tuple[int, float]]) -> None:
        self.ranked = ranked

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        return self.ranked[:k]


def test_a_record_only_meaning_finds_reaches_the_rerank() -> None:
    keyword = _Keyword([(n, 100.0 - n) for n in range(1, 60)], preferred={99})
    engine = UnionEngine("u", keyword, _Near([(99, 0.9), (3, 0.8)]))  # type: ignore[arg-type]
    hits = engine.search(sqlite3.connect(":memory:"), "q", 5, Filter())
    assert 99 in keyword.seen  # the embedding's record is a candidate of the rerank ...
    assert hits[0][0] == 99  # ... which can put it first
    assert len(hits) == 5 and len({d for d, _ in hits}) == 5


def test_a_record_both_find_ranks_above_one_only_keyword_finds() -> None:
    keyword = _Keyword([(1, 5.0), (2, 4.0), (3, 3.0)], preferred=set())
    engine = UnionEngine("u", keyword, _Near([(2, 0.5)]))  # type: ignore[arg-type]
    engine.search(sqlite3.connect(":memory:"), "q", 3, Filter())
    assert keyword.seen[0] == 2  # fused by RRF: found by both, first into the rerank


def test_parts_are_the_keyword_and_the_embedding_tables() -> None:
    engine = UnionEngine("u", _Keyword([], set()), _Near([]))  # type: ignore[arg-type]
    assert engine.components == ("fts", "wordllama")
    assert engine.search(sqlite3.connect(":memory:"), "q", 3, Filter()) == []
