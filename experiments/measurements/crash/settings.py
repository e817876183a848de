"""The crash measurement's settings: their one set of defaults, typed (the Hydra schema of ``crash``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.store import RECOVERY_MODES
from aptmem.tokens.tiers import parse_tier_spec
from experiments.measurements.crash.power_loss import DAMAGES

__all__ = ["CrashSettings"]


@dataclass(kw_only=True)
class CrashSettings:
    """How crashes are injected (``experiment=recovery`` runs many more cases)."""

    #: SIGKILLs of the writer per strategy, at seeded random moments during appends
    kills: int = 4
    #: SIGKILLs per strategy during a compaction (the writer appends through a Session)
    compaction_kills: int = 2
    #: power-loss moments per strategy; each gives one image per damage kind
    images: int = 3
    #: SIGKILLs of the server mid-append per strategy that declares a service (a database server), each restarted
    server_kills: int = 2
    #: entries the writer appends: the first N entries of the workload
    entries: int = 200
    #: seed of the kill moments, the power-loss moments and the damage (configs/measurements/crash/default.yaml: the run's seed)
    seed: int = 0
    #: context window (tokens) of the compaction-phase Session: small, so compaction fires often
    window: int = 8000
    #: turns a compaction keeps verbatim in the compaction phase
    keep_turns: int = 3
    #: how the compaction is persisted in the compaction phase (only append is judged)
    persist: str = "append"
    #: token estimator tier of the compaction-phase Session
    estimator: str = "medium"
    #: damage kinds of the power-loss images: torn tail, zero-filled tail, dropped tail, a torn line in the middle
    damages: list[str] = field(default_factory=lambda: list(DAMAGES))
    #: recovery modes each power-loss image is recovered in, where a store offers several
    modes: list[str] = field(default_factory=lambda: list(RECOVERY_MODES))
    #: the writer creates the session with store.create() first (as `aptmem new` does);
    #: false: its first append creates it
    create_first: bool = True
    #: seconds one strategy's crashes and recoveries may take in all before the job fails
    strategy_timeout_s: float = 300.0
    #: seconds one recovery may take before it is recorded as not loadable (hung)
    recovery_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        parse_tier_spec(self.estimator)  # a bad spec fails when the config loads, not in a child
        if min(self.kills, self.compaction_kills, self.images, self.server_kills) < 0 or self.entries < 2:
            raise ValueError("kills, compaction_kills, images and server_kills must be >= 0, entries >= 2")
        if unknown := set(self.damages) - set(DAMAGES):
            raise ValueError(f"unknown damage kinds {sorted(unknown)}; choose from {', '.join(DAMAGES)}")
        if unknown := set(self.modes) - set(RECOVERY_MODES):
            raise ValueError(f"unknown recovery modes {sorted(unknown)}; choose from {', '.join(RECOVERY_MODES)}")
        if self.persist != "append":
            raise ValueError("the crash job judges compactions persisted by append only (rewrite: see the notes)")
