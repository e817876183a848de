"""The one registry of memory strategies: a name to the factory that builds it.

The factories here, and the defaults of the classes they build, are the one source of a
strategy's settings: the command line (``aptmem replay --memory NAME``) and ``aptmem context``
build from here. The harness builds each strategy from ``configs/memory/NAME.yaml``, which
states these same classes and defaults for Hydra (so a run's config shows them and an
experiment may change them); ``tests/test_memory_strategies.py`` holds every YAML equal to the
registry's build, field by field, so a default changed on one side alone fails. ``llm`` needs an
OpenAI-compatible endpoint: its options (``model``, ``base_url``) go to
:class:`~aptmem.compaction.llm.LlmSummarizer`. The ``l2_*`` / ``l3_*`` strategies recall across
sessions (:mod:`aptmem.memory.recall`); ``*_embed`` and ``*_hybrid`` need the extra ``recall-embed``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.salient import SalientSummarizer
from aptmem.memory.base import MemoryStrategy
from aptmem.memory.hierarchical import HierarchicalSummaries
from aptmem.memory.kv_dict import KeyValueMemory
from aptmem.memory.masking import ObservationMasking
from aptmem.memory.recall import RecallMemory
from aptmem.memory.strategies import FullHistory, LastTurns, SummaryMemory
from aptmem.tokens import Estimator
from aptmem.working_memory import RESERVED_PREFIX, SessionMeta, WorkingMemory

__all__ = ["MEMORY_STRATEGIES", "STRATEGY_KEY", "StrategyRecord", "memory_names", "memory_strategy", "record_strategy",
           "recorded_strategy"]

#: The working-dict key that names the memory strategy a session runs under (so `aptmem context` renders through it).
STRATEGY_KEY = RESERVED_PREFIX + "strategy"


class StrategyRecord(msgspec.Struct, kw_only=True):
    """Which memory strategy a session runs under, and what its rendering depends on."""

    #: the registered name (built again with its registry defaults)
    name: str
    #: the model's context window the strategy caps what it renders by
    window: int
    #: the token tier the strategy counts with, and its tokenizer for ``precise`` (``aptmem.tokens.get_estimator``)
    tier: str
    tokenizer: str | None = None


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
    "l3_hybrid": lambda: RecallMemory(name="l3_hybrid", engine="hybrid_union"),
    "l3_keyword_facts": lambda: RecallMemory(name="l3_keyword_facts", engine="fts", facts=True, l3="facts"),
    "l3_embed_facts": lambda: RecallMemory(name="l3_embed_facts", engine="wordllama", facts=True, l3="facts"),
    "l3_hybrid_facts": lambda: RecallMemory(name="l3_hybrid_facts", engine="hybrid_union", facts=True, l3="facts"),
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


def record_strategy(memory: WorkingMemory, strategy: MemoryStrategy, *, window: int, estimator: Estimator) -> None:
    """Write into the session's sidecar that it runs under ``strategy`` (at ``window``, counting with ``estimator``).

    A continued session inherits the record with the rest of the working dict.
    """
    record = StrategyRecord(name=strategy.name, window=window, tier=estimator.tier,
                            tokenizer=estimator.tokenizer if estimator.tier == "precise" else None)
    memory.set(STRATEGY_KEY, msgspec.to_builtins(record))


def recorded_strategy(meta: SessionMeta | None) -> tuple[MemoryStrategy, StrategyRecord] | None:
    """The strategy a sidecar says its session runs under, built from the registry, and the record; None if none.

    ``ValueError`` if the record is malformed or names no registered strategy.
    """
    raw = meta.working.get(STRATEGY_KEY) if meta is not None else None
    if raw is None:
        return None
    try:
        record = msgspec.convert(raw, StrategyRecord)
    except msgspec.ValidationError as exc:
        raise ValueError(f"working[{STRATEGY_KEY!r}]: {exc}") from None
    return memory_strategy(record.name), record
