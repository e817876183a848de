"""The compaction policy: when to compact, how far down, what to keep verbatim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CompactionPolicy", "PERSIST_WAYS"]

PERSIST_WAYS = ("append", "rewrite")


@dataclass(frozen=True, kw_only=True)
class CompactionPolicy:
    """Thresholds as fractions of the model's context window (in tokens).

    Compaction fires when the context reaches ``trigger`` of the window and brings it down to
    ``target`` or less, keeping the last ``keep_turns`` turns verbatim (fewer if they do not fit;
    then oversized tool results are shortened). ``keep_tokens`` optionally caps what is kept.
    ``keep_recent_tokens`` (pi keeps 20,000) keeps at least that many recent tokens when the last
    turns hold fewer, and cuts inside a turn too large for the target (never between a tool call
    and its result), so a session with few user turns still compacts to its target; None keeps
    whole turns only. The summary may use up to ``summary_share`` of the
    target (and never more than ``summary_max_tokens``).

    ``memory_floor`` is the share of the target kept for memory when the last ``keep_turns``
    turns do not fit whole: the fixed part (system prompt, what the memory strategy renders) and
    the summary together may take that share, the summary growing up to ``summary_max_tokens``;
    fewer turns are kept, and what is kept over the rest is shortened, largest tool output first.
    Without it the one turn of large tool output that fits took two thirds of the target while
    the summary, which then stands for every turn that did not fit, kept its one third. 0 turns
    the floor off.

    The cheap tier is checked on every append; the precise tier confirms only once the cheap
    estimate reaches ``confirm_at`` of the trigger, so the tokenizer runs rarely.
    """

    window: int
    trigger: float = 0.8
    target: float = 0.3
    keep_turns: int = 10
    keep_tokens: int | None = None
    keep_recent_tokens: int | None = None
    summary_share: float = 0.33
    summary_max_tokens: int = 8000
    memory_floor: float = 0.5
    confirm_at: float = 0.9
    persist: Literal["append", "rewrite"] = "append"

    def __post_init__(self) -> None:
        if self.window < 256:
            raise ValueError(f"window must be at least 256 tokens, not {self.window}")
        if not 0 < self.target < self.trigger <= 1:
            raise ValueError(f"need 0 < target < trigger <= 1, got target={self.target}, trigger={self.trigger}")
        if self.keep_turns < 1:
            raise ValueError("keep_turns must be at least 1 (the current turn is always kept)")
        if self.keep_tokens is not None and self.keep_tokens < 1:
            raise ValueError("keep_tokens must be positive")
        if self.keep_recent_tokens is not None and self.keep_recent_tokens < 0:
            raise ValueError("keep_recent_tokens must be >= 0 (None: keep whole turns only)")
        if not 0 < self.summary_share < 1 or self.summary_max_tokens < 16:
            raise ValueError("summary_share must be in (0, 1) and summary_max_tokens at least 16")
        if not 0 <= self.memory_floor < 1:
            raise ValueError(f"memory_floor must be in [0, 1), not {self.memory_floor}")
        if not 0 < self.confirm_at <= 1:
            raise ValueError("confirm_at must be in (0, 1]")
        if self.persist not in PERSIST_WAYS:
            raise ValueError(f"persist must be one of {', '.join(PERSIST_WAYS)}, not {self.persist!r}")

    @property
    def trigger_tokens(self) -> int:
        """The context size at which compaction fires."""
        return int(self.window * self.trigger)

    @property
    def target_tokens(self) -> int:
        """The context size a compaction brings the context down to (at most)."""
        return int(self.window * self.target)

    @property
    def summary_budget(self) -> int:
        """The most tokens a summary may take when the last turns fit whole."""
        return max(16, min(self.summary_max_tokens, int(self.target_tokens * self.summary_share)))

    def floored_summary_budget(self, fixed_tokens: int) -> int:
        """The most tokens a summary may take when the last turns do not fit whole: enough for the
        fixed part (``fixed_tokens``: system prompt, what the memory strategy renders) and the
        summary to take ``memory_floor`` of the target; never less than :attr:`summary_budget`."""
        floor = int(self.target_tokens * self.memory_floor) - fixed_tokens
        return max(self.summary_budget, min(self.summary_max_tokens, floor))
