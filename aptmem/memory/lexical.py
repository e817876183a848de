"""Keyword ranking of short texts against a query: SQLite FTS5's BM25 over script-aware terms.

FTS5's own tokenizer keeps a run of Chinese characters as one token, so texts are indexed as
the terms of :func:`aptmem.memory.facts.tokens` (words, identifiers, CJK bigrams) joined by
spaces; the query is the OR of its terms. An in-memory table per call: the texts ranked here
are a context's worth (hundreds to tens of thousands), indexed in milliseconds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from aptmem.memory.facts import tokens

__all__ = ["rank"]


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def rank(query: str, texts: Sequence[str], limit: int | None = None) -> list[int]:
    """Indexes of the ``texts`` that share a term with ``query``, best BM25 score first.

    Ties go to the later text (the newer, in a history). A query with no terms matches nothing.
    """
    terms = list(dict.fromkeys(tokens(query)))
    if not terms or not texts:
        return []
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE doc USING fts5(terms, tokenize='unicode61')")
        con.executemany("INSERT INTO doc(rowid, terms) VALUES (?, ?)",
                        ((i, " ".join(tokens(text))) for i, text in enumerate(texts)))
        rows = con.execute("SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc), rowid DESC LIMIT ?",
                           (" OR ".join(map(_quoted, terms)), -1 if limit is None else limit)).fetchall()
    finally:
        con.close()
    return [row[0] for row in rows]
