"""Recall across sessions: L2 session records and L3 long-term chunks and facts, by keyword and by meaning.

* :mod:`~aptmem.recall.index`: the index beside the logs (``<root>/recall-index.sqlite``), derived
  from them and kept up to date incrementally; :mod:`~aptmem.recall.catchup` says how.
* :mod:`~aptmem.recall.chunking`, :mod:`~aptmem.recall.facts`: entries and sidecars into records.
* :mod:`~aptmem.recall.engines`: keyword (SQLite FTS5), meaning (offline embeddings), hybrid (keyword ranking reordered by meaning).
* :mod:`~aptmem.recall.api`: :func:`recall` returns evidence within a token budget.
* :mod:`~aptmem.recall.scoring`: the retrieval metrics of the recall benchmark.

Typical use::

    from aptmem.recall import recall
    result = recall("还记得上周我们讨论的数据库迁移方案吗？", root="sessions", k=5, budget=1024)
    print(result.text)              # evidence: level, session, entry, score, then the text
"""

from aptmem.recall.api import RecallResult, open_index, pack, recall
from aptmem.recall.index import IndexReport, IndexStats, RecallIndex
from aptmem.recall.records import Doc, Hit

__all__ = ["Doc", "Hit", "IndexReport", "IndexStats", "RecallIndex", "RecallResult", "open_index", "pack", "recall"]
