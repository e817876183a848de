"""Keyword ranking of short texts against a query: SQLite FTS5's BM25 over script-aware terms.

FTS5's own tokenizer keeps a run of Chinese characters as one token, so texts are indexed as
the terms of :func:`aptmem.memory.facts.tokens` (words, identifiers, CJK bigrams) joined by
spaces; a query is the OR of its terms. The index is an in-memory table: the texts ranked here
are a context's worth (hundreds to tens of thousands), indexed in milliseconds, and a
:class:`Ranker` answers many queries against one index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from aptmem.memory.facts import tokens

__all__ = ["Ranker", "rank"]


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class Ranker:
    """An FTS5 index of ``texts``; :meth:`rank` orders them for a query. Close it when done."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._con = sqlite3.connect(":memory:")
        self._con.execute("CREATE VIRTUAL TABLE doc USING fts5(terms, tokenize='unicode61')")
        self._con.executemany("INSERT INTO doc(rowid, terms) VALUES (?, ?)",
                              ((i, " ".join(tokens(text))) for i, text in enumerate(texts)))

    def rank(self, query: str, limit: int | None = None) -> list[int]:
        """Indexes of the texts that share a term with ``query``, best BM25 score first.

        Ties go to the later text (the newer, in a history). A query with no terms matches nothing.
        """
        terms = list(dict.fromkeys(tokens(query)))
        if not terms:
            return []
        rows = self._con.execute("SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc), rowid DESC LIMIT ?",
                                 (" OR ".join(map(_quoted, terms)), -1 if limit is None else limit)).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        """Drop the index."""
        self._con.close()

    def __enter__(self) -> Ranker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rank(query: str, texts: Sequence[str], limit: int | None = None) -> list[int]:
    """:meth:`Ranker.rank` of ``query`` over ``texts``, with a throw-away index."""
    if not texts:
        return []
    with Ranker(texts) as ranker:
        return ranker.rank(query, limit)
