"""The transcripts measurement's settings: their one set of defaults, typed (the Hydra schema of ``transcripts``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.compaction.policy import CompactionPolicy
from aptmem.importers.converter import converter_class
from aptmem.tokens import DEFAULT_TOKENIZER
from aptmem.tokens.tiers import parse_tier_spec

__all__ = ["TranscriptsSettings"]


def _default_tiers() -> list[str]:
    return ["rough:bytes", "rough:chars", "medium", "precise:cl100k_base", "precise:tekken", "model", "anchored"]


def _agent_windows() -> dict[str, int]:
    # Claude Code's models and the ones the pi fixture ran on (Claude Sonnet 4.5) have a 200k window.
    return {"claude-code": 200_000, "pi": 200_000}


@dataclass(kw_only=True)
class TranscriptsSettings:
    """What the transcripts measurement reads and how."""

    #: a transcript or a folder of them; relative paths start at the repository's root
    path: str = "tests/fixtures/real"
    #: their format: auto (detected per file), claude-code or pi
    format: str = "auto"
    #: tiers scored against the reported usage; a precise tokenizer that cannot load offline is left out (noted).
    #: model[:<tier>] and anchored[:<tier>] count what the provider counts, with the format's provider profile
    tiers: list[str] = field(default_factory=_default_tiers)
    #: provider profile for model and anchored (a shipped name or a file); null = the one shipped for each format
    profile: str | None = None
    #: the agent's own window per format: every tier is checked against the agent's rule there
    agent_windows: dict[str, int] = field(default_factory=_agent_windows)
    #: aptmem compacts on time when it fires within this many requests of the agent's rule
    on_time_requests: int = 2
    #: context windows the sessions are replayed at (tokens); the agents' own window is 200k
    windows: list[int] = field(default_factory=lambda: [200_000, 32_000])
    #: the cheap tier of each replay (one replay per tier and window)
    replay_tiers: list[str] = field(default_factory=lambda: ["medium"])
    #: the precise tokenizer that confirms near the trigger; null = the cheap tier decides alone
    confirm: str | None = DEFAULT_TOKENIZER
    #: aptmem's policy: trigger and target shares of the window, turns kept verbatim
    trigger: float = CompactionPolicy.trigger
    target: float = CompactionPolicy.target
    keep_turns: int = CompactionPolicy.keep_turns
    #: and at least this many recent tokens, cut inside a turn too large for the target (pi keeps 20,000): the
    #: agents' sessions have few user turns, whole ones never fit a small window; null = whole turns only
    keep_recent_tokens: int | None = 20_000

    def __post_init__(self) -> None:
        if self.format != "auto":
            converter_class(self.format)  # an unknown format fails when the config loads
        if not self.tiers or not self.windows or not self.replay_tiers:
            raise ValueError("tiers, windows and replay_tiers must not be empty")
        for spec in (*self.tiers, *self.replay_tiers):
            parse_tier_spec(spec, counters=spec not in self.replay_tiers)  # model/anchored are scored, never a replay's tier
        if self.on_time_requests < 0 or any(w < 256 for w in self.agent_windows.values()):
            raise ValueError("on_time_requests must be >= 0 and every agent window at least 256 tokens")
