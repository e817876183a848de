"""The concurrency measurement's settings: their one set of defaults, typed (the Hydra schema of ``concurrency``)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ConcurrencySettings"]


@dataclass(kw_only=True)
class ConcurrencySettings:
    """How hard the writers contend."""

    #: processes appending to the one session at once
    writers: int = 4
    #: entries each writer appends
    appends: int = 50
    #: seconds a writer may take before it is counted as stuck and killed
    timeout: float = 60.0
    #: modes of the command-line runs: lock, no_lock (aptmem append --no-lock), buffered (a naive logger)
    modes: list[str] = field(default_factory=lambda: ["lock", "no_lock", "buffered"])
    #: line sizes (bytes) of the command-line runs: small lines, and large ones that may interleave
    line_bytes: list[int] = field(default_factory=lambda: [1000, 1_000_000])
    #: entries each command-line writer appends (fewer for large lines: see max_bytes_per_writer)
    cli_appends: int = 500
    #: bytes each command-line writer appends at most; large lines get fewer appends (at least 2)
    max_bytes_per_writer: int = 16_000_000
    #: the naive buffered logger's buffer, in bytes
    buffer_bytes: int = 512
    #: working-memory set() calls per writer process in the sidecar runs (0: no sidecar runs)
    sidecar_sets: int = 25

    def __post_init__(self) -> None:
        from experiments.measurements.concurrency.modes import LOG_MODES

        unknown = sorted(set(self.modes) - set(LOG_MODES))
        if unknown:
            raise ValueError(f"concurrency.modes: unknown mode(s) {unknown}; choose from {', '.join(LOG_MODES)}")
        if self.writers < 1 or self.appends < 1 or self.cli_appends < 1 or any(size < 64 for size in self.line_bytes):
            raise ValueError("concurrency: writers, appends and cli_appends must be >= 1 and line_bytes >= 64")

    def appends_for(self, size: int) -> int:
        """Entries each command-line writer appends with lines of ``size`` bytes."""
        return max(2, min(self.cli_appends, self.max_bytes_per_writer // size))
