"""Typed schemas of the run config, registered in Hydra's ConfigStore so a typo fails at load."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING

from experiments.measurements.compaction.job import CompactionSettings
from experiments.measurements.concurrency.job import ConcurrencySettings
from experiments.measurements.crash_explore.job import CrashExploreSettings
from experiments.measurements.crash.job import CrashSettings
from experiments.measurements.fuzz.job import FuzzSettings
from experiments.measurements.memory.job import MemorySettings
from experiments.measurements.tokens.job import TokensSettings
from experiments.measurements.transcripts.job import TranscriptsSettings
from experiments.workloads.synthetic import WorkloadConfig
from experiments.workloads.transcripts import TranscriptWorkload
from experiments.measurements.write_cost.job import WriteCostSettings

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
    return ["write_cost", "memory", "crash", "concurrency", "hostile", "anatomy", "tokens", "compaction", "transcripts"]


@dataclass
class RunConfig:
    """The whole run: which strategies, on which workload, measured how."""

    seed: int = 0
    progress: bool = True
    force: bool = False
    #: the measurements to make, in this order (see experiments/core/measurement.py)
    measure: list[str] = field(default_factory=_all_measures)
    strategy: dict[str, StrategyConfig] = field(default_factory=dict)
    #: the workload group's choice, typed by its own schema: WorkloadConfig (synthetic) or
    #: TranscriptWorkload (transcript); the group always sets it
    workload: Any = MISSING
    write_cost: WriteCostSettings = field(default_factory=WriteCostSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    crash: CrashSettings = field(default_factory=CrashSettings)
    #: the crash-state explorer (not in the default measure list: experiment=crash_explore runs it)
    crash_explore: CrashExploreSettings = field(default_factory=CrashExploreSettings)
    concurrency: ConcurrencySettings = field(default_factory=ConcurrencySettings)
    tokens: TokensSettings = field(default_factory=TokensSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    transcripts: TranscriptsSettings = field(default_factory=TranscriptsSettings)
    #: fuzzed input through the reader, fsck, tokens and decode_line (not in the default measure list:
    #: experiment=full runs it at size)
    fuzz: FuzzSettings = field(default_factory=FuzzSettings)


def register() -> None:
    """Register the schemas (called once, before Hydra composes the config)."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    cs.store(group="workload", name="synthetic_schema", node=WorkloadConfig)
    cs.store(group="workload", name="transcript_schema", node=TranscriptWorkload)
