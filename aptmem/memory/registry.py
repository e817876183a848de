"""The one registry of memory strategies: a name to the factory that builds it.

The command line (``aptmem replay --memory NAME``) and the harness (``configs/memory/NAME.yaml``,
whose ``_target_`` names the same classes) build strategies from here. ``llm`` needs an
OpenAI-compatible endpoint: its options (``model``, ``base_url``) go to
:class:`~aptmem.compaction.llm.LlmSummarizer`. The ``l2_*`` / ``l3_*`` strategies recall across
sessions (:mod:`aptmem.memory.recall`); ``*_embed`` and ``*_hybrid`` need the extra ``recall-embed``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.salient import SalientSummarizer
from aptmem.memory.base import MemoryStrategy
from aptmem.memory.hierarchical import HierarchicalSummaries
from aptmem.memory.kv_dict import KeyValueMemory
from aptmem.memory.masking import ObservationMasking
from aptmem.memory.recall import RecallMemory
from aptmem.memory.strategies import FullHistory, LastTurns, SummaryMemory

__all__ = ["MEMORY_STRATEGIES", "memory_names", "memory_strategy"]


def _llm(**options: Any) -> MemoryStrategy:
    from aptmem.compaction.llm import LlmSummarizer  # only when asked for: it talks HTTP

    return SummaryMemory(LlmSummarizer(**options), name="llm")


MEMORY_STRATEGIES: dict[str, Callable[..., MemoryStrategy]] = {
    "none": LastTurns,
    "full_history": FullHistory,
    "extractive": lambda: SummaryMemory(ExtractiveSummarizer(), name="extractive"),
    "salient": lambda: SummaryMemory(SalientSummarizer(), name="salient"),
    "kv_dict": KeyValueMemory,
    "hier_summary": HierarchicalSummaries,
    "obs_mask": ObservationMasking,
    "llm": _llm,
    "l2_sessions": lambda: RecallMemory(name="l2_sessions", level="l2"),
    "l3_keyword": lambda: RecallMemory(name="l3_keyword", engine="fts"),
    "l3_embed": lambda: RecallMemory(name="l3_embed", engine="wordllama"),
    "l3_hybrid": lambda: RecallMemory(name="l3_hybrid", engine="hybrid"),
    "l3_keyword_facts": lambda: RecallMemory(name="l3_keyword_facts", engine="fts", facts=True, l3="facts"),
    "l3_embed_facts": lambda: RecallMemory(name="l3_embed_facts", engine="wordllama", facts=True, l3="facts"),
    "l3_hybrid_facts": lambda: RecallMemory(name="l3_hybrid_facts", engine="hybrid", facts=True, l3="facts"),
}


def memory_names() -> list[str]:
    """The registered names, in registry order."""
    return list(MEMORY_STRATEGIES)


def memory_strategy(name: str, **options: Any) -> MemoryStrategy:
    """Build the strategy registered as ``name`` (``options`` go to its factory); ``ValueError`` if unknown."""
    try:
        factory = MEMORY_STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown memory strategy {name!r}: one of {', '.join(MEMORY_STRATEGIES)}") from None
    return factory(**options)
