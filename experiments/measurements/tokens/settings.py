"""The tokens measurement's settings: their one set of defaults, typed (the Hydra schema of ``tokens``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.tokens.tiers import parse_tier_spec
from experiments.measurements.tokens.corpus import TOKEN_KINDS

__all__ = ["TokensSettings"]


def _default_estimators() -> list[str]:
    # medium:compiled: its kernel loaded from the first count, so the speed timed is what a process that
    # counts for longer than the kernel's load (about half a second) gets; plain medium would count this
    # corpus in pure Python throughout (aptmem/tokens/medium.py), at the same counts
    return ["rough:bytes", "rough:chars", "medium:compiled", "precise:cl100k_base"]


@dataclass(kw_only=True)
class TokensSettings:
    """How token estimates are scored (``experiment=tokens``: a larger corpus, Tekken, real text)."""

    #: texts per content kind in the scored corpus (experiments/measurements/tokens/corpus.py)
    per_kind: int = 300
    #: content kinds scored; the goals are checked on each (english, chinese, code, json, logs, mixed)
    kinds: list[str] = field(default_factory=lambda: list(TOKEN_KINDS))
    #: median size of a corpus text, in UTF-8 bytes (sizes are lognormal, 16 B .. max_bytes)
    median_bytes: int = 600
    #: largest corpus text, in UTF-8 bytes
    max_bytes: int = 32 * 1024
    #: estimators compared: rough:bytes (bytes/4), rough:chars (chars/4), medium[:compiled|python], precise:<tokenizer>
    #: (precise:cl100k_base, precise:tekken, ...); a precise one other than the reference that
    #: cannot load offline is left out, with a note in the report
    estimators: list[str] = field(default_factory=_default_estimators)
    #: the tokenizer whose exact counts every estimate is scored against; also the speed baseline
    reference: str = "cl100k_base"
    #: timed passes of every estimator over every kind's texts (speed-ups are medians over passes)
    repeats: int = 7
    #: entries of the session whose appends time the running tally; 0 skips the growth check
    growth_entries: int = 2000
    #: estimators of the growth check: the cheap tiers, which a session runs on every append
    growth_estimators: list[str] = field(default_factory=lambda: ["rough:bytes", "medium:compiled"])
    #: also score real text of this Python installation (kinds real_*; not part of the goals)
    real_text: bool = False
    #: corpus, session and shuffle seed; the shipped medium constants were fitted on seed 0, so 1 is held out
    seed: int = 1

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(TOKEN_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"kinds must be a non-empty subset of {', '.join(TOKEN_KINDS)}; unknown: {sorted(unknown)}")
        if self.per_kind < 1 or self.repeats < 1 or self.growth_entries < 0:
            raise ValueError("per_kind and repeats must be >= 1, growth_entries >= 0")
        if self.growth_entries and self.growth_entries < 2:
            raise ValueError("growth_entries must be 0 (skip) or at least 2")
        for spec in (*self.estimators, *self.growth_estimators):
            parse_tier_spec(spec)
