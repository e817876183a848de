"""aptmem: the memory of an LLM agent, as a library.

The names the README's examples import are importable from here too::

    from aptmem import JsonlStore, Session, User, create_session, get_estimator

Each lives in its own module (the README's imports name it); a name is imported on first use
(PEP 562), so ``import aptmem`` costs nothing and a child process that needs only the log does
not load compaction, recall or tokenizers. ``recall`` is the one name of the README left out:
``aptmem.recall`` is its package (``from aptmem.recall import recall``), and a function of the same
name here would hide it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.continuation import continue_session, create_session
    from aptmem.entries import Assistant, Compaction, Metadata, ToolCall, ToolResult, User
    from aptmem.errors import AptmemError
    from aptmem.jsonl_store import JsonlStore
    from aptmem.memory.registry import memory_strategy
    from aptmem.session import Session
    from aptmem.tokens import get_estimator
    from aptmem.tokens.context_model import ContextModel
    from aptmem.tokens.profile import load_profile
    from aptmem.working_memory import WorkingMemory

#: Each re-exported name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "AptmemError": "aptmem.errors",
    "Assistant": "aptmem.entries",
    "Compaction": "aptmem.entries",
    "CompactionPolicy": "aptmem.compaction.policy",
    "ContextModel": "aptmem.tokens.context_model",
    "JsonlStore": "aptmem.jsonl_store",
    "Metadata": "aptmem.entries",
    "Session": "aptmem.session",
    "ToolCall": "aptmem.entries",
    "ToolResult": "aptmem.entries",
    "User": "aptmem.entries",
    "WorkingMemory": "aptmem.working_memory",
    "continue_session": "aptmem.continuation",
    "create_session": "aptmem.continuation",
    "get_estimator": "aptmem.tokens",
    "load_profile": "aptmem.tokens.profile",
    "memory_strategy": "aptmem.memory.registry",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a re-exported name from its module on first use (and keep it here)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aptmem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names and the re-exported ones."""
    return sorted({*globals(), *_EXPORTS})
