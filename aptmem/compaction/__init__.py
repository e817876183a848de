"""Compaction: when the context nears the window, summarize the old part and keep recent turns.

* :mod:`~aptmem.compaction.policy`: the thresholds (trigger 80%, target 30%, keep 10 turns).
* :mod:`~aptmem.compaction.turns`: splitting a history into turns that never separate a tool
  call from its result.
* :mod:`~aptmem.compaction.planner`: deciding what to keep, what to summarize and what to shorten.
* :mod:`~aptmem.compaction.extractive` / :mod:`~aptmem.compaction.llm`: the summarizers.
* :mod:`~aptmem.compaction.compactor`: building the compaction entry, and how a live context is
  shown; the store writes it (``append`` or ``rewrite``) under the session's writer lock
  (:meth:`aptmem.store.SessionStore.compact`).
"""
