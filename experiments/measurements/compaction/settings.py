"""The compaction measurement's settings: their one set of defaults, typed (the Hydra schema of ``compaction``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.compaction.policy import PERSIST_WAYS, CompactionPolicy
from aptmem.tokens import DEFAULT_TOKENIZER
from aptmem.tokens.tiers import parse_tier_spec

__all__ = ["CompactionSettings"]


@dataclass(kw_only=True)
class CompactionSettings:
    """How compaction is replayed and scored (``experiment=compaction_sweep`` is meant to be swept)."""

    #: the model context windows replayed, in tokens: one replay of the same session per window
    windows: list[int] = field(default_factory=lambda: [32_000, 8_000])
    #: compact when the context reaches this share of the window
    trigger: float = CompactionPolicy.trigger
    #: a compaction brings the context down to this share of the window (or says why not)
    target: float = CompactionPolicy.target
    #: turns kept verbatim by a compaction (fewer when they do not fit the target)
    keep_turns: int = CompactionPolicy.keep_turns
    #: cap on the tokens kept verbatim (pi keeps the newest 20,000); null = no cap
    keep_tokens: int | None = CompactionPolicy.keep_tokens
    #: keep at least this many recent tokens (pi keeps 20,000), cutting inside a turn too large for the target;
    #: null = whole turns only
    keep_recent_tokens: int | None = CompactionPolicy.keep_recent_tokens
    #: the cheap tier checked on every append, one replay per tier: medium, rough:bytes, rough:chars, precise:<tokenizer>
    tiers: list[str] = field(default_factory=lambda: ["medium"])
    #: the precise tokenizer that confirms when the cheap estimate nears the trigger; null = the cheap tier decides alone
    confirm: str | None = DEFAULT_TOKENIZER
    #: how a compaction is written: append (a marker line; history stays on disk) or rewrite (atomic file replace)
    persist: str = CompactionPolicy.persist
    #: turns of the replayed session (the rest of the workload config applies as is)
    turns: int = 200
    #: facts planted in the session (at most one per turn), scored for retention
    facts: int = 30
    #: workload seed of the session; null = the workload config's seed
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.windows or not self.tiers:
            raise ValueError("windows and tiers must not be empty")
        if self.persist not in PERSIST_WAYS:
            raise ValueError(f"persist must be one of {', '.join(PERSIST_WAYS)}, not {self.persist!r}")
        for window in self.windows:
            self.policy(window)  # the policy checks the thresholds and the window
        for tier in self.tiers:
            parse_tier_spec(tier)

    def policy(self, window: int) -> CompactionPolicy:
        """The compaction policy of one replay."""
        return CompactionPolicy(window=window, trigger=self.trigger, target=self.target, keep_turns=self.keep_turns,
                                keep_tokens=self.keep_tokens, keep_recent_tokens=self.keep_recent_tokens,
                                persist=self.persist)  # type: ignore[arg-type]
