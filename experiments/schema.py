"""Typed schemas of the run config, registered in Hydra's ConfigStore so a typo fails at load."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING

from experiments.compaction_job import CompactionSettings
from experiments.concurrency_job import ConcurrencySettings
from experiments.crash_job import CrashSettings
from experiments.memory_job import MemorySettings
from experiments.tokens_job import TokensSettings
from experiments.workload import WorkloadConfig
from experiments.write_cost_job import WriteCostSettings

__all__ = ["RunConfig", "StrategyConfig", "register"]


@dataclass
class StrategyConfig:
    """One storage strategy: a label, its family, its durability promise and how to build it."""

    name: str = MISSING
    family: str = MISSING
    durable: bool = MISSING
    #: ``_target_`` (the store class) and its settings; checked when the store is instantiated.
    store: Any = MISSING


def _all_measures() -> list[str]:
    return ["write_cost", "memory", "crash", "concurrency", "anatomy", "tokens", "compaction"]


@dataclass
class RunConfig:
    """The whole run: which strategies, on which workload, measured how."""

    seed: int = 0
    progress: bool = True
    force: bool = False
    #: the measurements to make, in this order (see experiments/measures.py)
    measure: list[str] = field(default_factory=_all_measures)
    strategy: dict[str, StrategyConfig] = field(default_factory=dict)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    write_cost: WriteCostSettings = field(default_factory=WriteCostSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    crash: CrashSettings = field(default_factory=CrashSettings)
    concurrency: ConcurrencySettings = field(default_factory=ConcurrencySettings)
    tokens: TokensSettings = field(default_factory=TokensSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)


def register() -> None:
    """Register the schemas (called once, before Hydra composes the config)."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    cs.store(group="workload", name="synthetic_schema", node=WorkloadConfig)
