"""The memory-quality measurement's settings: their one set of defaults, typed (the Hydra schema of ``memory_quality``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.compaction.policy import CompactionPolicy
from aptmem.tokens.tiers import parse_tier_spec
from experiments.measurements.memory_quality.workload import WorkloadShape

__all__ = ["DEFAULT_STRATEGIES", "MemoryQualitySettings"]

DEFAULT_STRATEGIES = ["none", "full_history", "extractive", "salient", "kv_dict", "hier_summary", "obs_mask"]


@dataclass(kw_only=True)
class MemoryQualitySettings:
    """What the measurement runs."""

    #: memory strategies compared (names in aptmem.memory.registry); ``llm`` needs ``llm_model``
    strategies: list[str] = field(default_factory=lambda: list(DEFAULT_STRATEGIES))
    #: model context windows, in tokens: one run per window
    windows: list[int] = field(default_factory=lambda: [32_000, 8_000])
    #: workload seeds: one workload each, every strategy on the same ones (mean and range are over them)
    seeds: list[int] = field(default_factory=lambda: [100, 101, 102])
    #: the workload: sessions, turns, what is planted, statement phrasings (heldout by default, never tuned on)
    workload: WorkloadShape = field(default_factory=WorkloadShape)
    #: packet budgets (tokens of what the strategy puts in context) answerability is judged within
    budgets: list[int] = field(default_factory=lambda: [512, 1024, 2048])
    #: the compaction policy every strategy runs under (aptmem's defaults unless told)
    trigger: float = CompactionPolicy.trigger
    target: float = CompactionPolicy.target
    keep_turns: int = CompactionPolicy.keep_turns
    #: the share of the target memory keeps when the last turns do not fit whole (0: none, as before phase 7)
    memory_floor: float = CompactionPolicy.memory_floor
    #: token estimator that decides compaction and counts context tokens (a tier spec: aptmem/tokens/tiers.py)
    tier: str = "medium"
    #: the LLM summarizer's model and endpoint (strategy ``llm``); null leaves it out
    llm_model: str | None = None
    llm_base_url: str | None = None
    #: folder for the scratch roots (null: the system's temp folder)
    tmp: str | None = None

    def __post_init__(self) -> None:
        from aptmem.memory.registry import memory_names  # the memory strategies, loaded when settings are checked

        parse_tier_spec(self.tier)  # a bad spec fails when the config loads, not in a run
        unknown = [s for s in self.strategies if s not in memory_names()]
        if unknown:
            raise ValueError(f"unknown memory strategies {unknown}: one of {', '.join(memory_names())}")
        if not self.windows or not self.seeds or not self.budgets:
            raise ValueError("windows, seeds and budgets must not be empty")
        for window in self.windows:
            self.policy(window)
        from experiments.measurements.memory_quality.generators import GENERATORS

        if self.workload.generator not in GENERATORS:
            raise ValueError(f"unknown workload generator {self.workload.generator!r}: one of {', '.join(GENERATORS)}")

    def policy(self, window: int) -> CompactionPolicy:
        """The compaction policy of one run."""
        return CompactionPolicy(window=window, trigger=self.trigger, target=self.target, keep_turns=self.keep_turns,
                                memory_floor=self.memory_floor)
