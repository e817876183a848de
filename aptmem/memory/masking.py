"""``obs_mask``: old tool outputs replaced by placeholders; compaction only when that is not enough.

Observation masking (as in "The Complexity Trap", JetBrains, 2025) keeps what the user and the
model said, and every tool call, verbatim, but shows the output of a tool only for the last
``keep_turns`` turns: older outputs longer than ``min_chars`` become a one-line placeholder
that names the tool and the size of what was hidden. The context grows far slower, so
compaction fires far later; when it does, the summarizer sees the masked view (what the model
would see), and the history on disk keeps every output.

The mask is a pure function of the view, so a reopened session shows the same context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from aptmem.compaction.salient import SalientSummarizer
from aptmem.compaction.summarizer import Summarizer
from aptmem.compaction.turns import turn_starts
from aptmem.entries import Entry, ToolCall, ToolResult, User
from aptmem.memory.base import Carry, check_carry, render_working
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["MASK_PREFIX", "ObservationMasking", "mask_entry"]

#: How a masked output starts (so it is never masked twice).
MASK_PREFIX = "[tool output hidden by aptmem obs_mask:"


def mask_entry(entry: Entry, min_chars: int) -> Entry:
    """``entry`` with its tool output replaced by a placeholder, if it has one longer than ``min_chars``."""
    if isinstance(entry, ToolResult) and len(entry.content) > min_chars and not entry.content.startswith(MASK_PREFIX):
        note = f"{MASK_PREFIX} {len(entry.content)} characters of {entry.name or 'tool'} output; run it again to see it]"
        return msgspec.structs.replace(entry, content=note)
    if isinstance(entry, ToolCall) and entry.result is not None and len(entry.result) > min_chars \
            and not entry.result.startswith(MASK_PREFIX):
        note = f"{MASK_PREFIX} {len(entry.result)} characters of {entry.name} output; run it again to see it]"
        return msgspec.structs.replace(entry, result=note)
    return entry


class ObservationMasking:
    """Show tool output only for the last turns; summarize (rarely) what still overflows."""

    name = "obs_mask"
    compacts = True

    def __init__(self, summarizer: Summarizer | None = None, *, keep_turns: int = 3, min_chars: int = 200,
                 carry: Carry = "summary") -> None:
        if keep_turns < 1 or min_chars < 0:
            raise ValueError("keep_turns must be at least 1 and min_chars not negative")
        self.summarizer = summarizer or SalientSummarizer()
        self.keep_turns = keep_turns
        self.min_chars = min_chars
        self.carry = check_carry(carry)

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """When a turn starts (or the session opens), mask the outputs of turns older than ``keep_turns``."""
        if appended is not None and not isinstance(appended, User):
            return None
        starts = turn_starts(view)
        if len(starts) <= self.keep_turns:
            return None
        cut = starts[len(starts) - self.keep_turns]
        changed = False
        shown = list(view)
        for index in range(cut):
            masked = mask_entry(view[index], self.min_chars)
            if masked is not view[index]:
                shown[index] = masked
                changed = True
        return shown if changed else None

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Keep nothing beside the summary."""

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The working memory and dict."""
        return render_working(meta)
