"""Memory strategies: what a session keeps in the model's context, and how it gets it back.

* :mod:`~aptmem.memory.base`: the :class:`MemoryStrategy` seam.
* :mod:`~aptmem.memory.registry`: the one registry (``none``, ``full_history``, ``extractive``,
  ``salient``, ``kv_dict``, ``hier_summary``, ``obs_mask``, ``llm``).
* :mod:`~aptmem.memory.statements` / :mod:`~aptmem.memory.facts`: statements and facts in a
  history, whatever carried them; :mod:`~aptmem.memory.lexical`: keyword ranking (FTS5).
* :mod:`~aptmem.memory.handoff`: continuing a session with a strategy's memory, and running a
  history through a strategy into a root of sessions.
"""
