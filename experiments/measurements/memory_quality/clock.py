"""The ids and timestamps of a generated workload's entries, one clock per workload.

Every generator writes entries whose ids must be unique and whose times must rise, with gaps drawn
from the workload's own seeded random stream (so a workload is the same for the same seed). The
generators differ only in how the gaps are spread: uniformly between half and twice a mean, or
log-normally around a median.
"""

from __future__ import annotations

import math
import random

__all__ = ["EntryClock"]


class EntryClock:
    """Numbers entries (``<prefix><kind><n:05d>``) and advances time by seeded gaps.

    ``spread`` is the sigma of a log-normal gap around :meth:`tick`'s median; without it a gap is
    drawn uniformly from half to twice the given mean (whole milliseconds).
    """

    def __init__(self, rng: random.Random, start_ms: int, *, prefix: str = "", spread: float | None = None) -> None:
        self.rng, self.ts, self.prefix, self.spread = rng, start_ms, prefix, spread
        self.n = 0

    def next_id(self, kind: str) -> str:
        """The next entry's id: the prefix, ``kind`` (``u``, ``a``, ``c``, ``r``) and a running number."""
        self.n += 1
        return f"{self.prefix}{kind}{self.n:05d}"

    def tick(self, ms: float) -> int:
        """Advance by one gap of about ``ms`` milliseconds; return the new time (epoch ms)."""
        if self.spread is None:
            self.ts += self.rng.randrange(int(ms) // 2, int(ms) * 2)
        else:
            self.ts += max(1, int(self.rng.lognormvariate(math.log(ms), self.spread)))
        return self.ts

    def skip(self, ms: int) -> None:
        """Move the clock on by exactly ``ms`` milliseconds (a night between sessions)."""
        self.ts += ms
