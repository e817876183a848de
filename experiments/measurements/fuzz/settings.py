"""The fuzz measurement's settings: their one set of defaults, typed (the Hydra schema of ``fuzz``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aptmem.logreader import DEFAULT_LINE_CAP
from experiments.measurements.fuzz.big_line import READERS
from experiments.measurements.fuzz.inputs import INPUT_KINDS, MUTATIONS
from experiments.measurements.fuzz.targets import TARGETS

__all__ = ["FuzzSettings"]


@dataclass(kw_only=True)
class FuzzSettings:
    """How the fuzz run is made (``experiment=full`` tries 25,000 inputs per target and a 4 GiB line)."""

    #: inputs tried per target (every target sees the same inputs: input i is made from seed and i)
    inputs: int = 2000
    #: seed of every input (input i uses random.Random(f"{seed}-{i}"))
    seed: int = 0
    #: the targets fuzzed: reader, fsck, tokens, import, decode_line
    targets: list[str] = field(default_factory=lambda: list(TARGETS))
    #: what inputs are made from: random_bytes, real_transcript, aptmem_session (drawn evenly)
    kinds: list[str] = field(default_factory=lambda: list(INPUT_KINDS))
    #: mutation kinds applied to seed files (one to three per input)
    mutations: list[str] = field(default_factory=lambda: list(MUTATIONS))
    #: largest window taken from a seed file, in bytes (mutations that add may pass it a little)
    max_input_bytes: int = 64 * 1024
    #: line cap used for every other input of the reader and fsck targets, so lines over the cap are fuzzed too
    small_cap: int = 4096
    #: files or folders of real agent transcripts (*.jsonl; relative: from the repository root); missing
    #: ones are skipped and noted, and small built-in transcripts of the same shapes stand in
    corpus: list[str] = field(default_factory=lambda: ["tests/fixtures/real"])
    #: estimators of the tokens target: rough:bytes, rough:chars, medium, precise:<tokenizer>
    estimators: list[str] = field(default_factory=lambda: ["rough:bytes", "rough:chars", "medium", "precise:cl100k_base"])
    #: size of the file holding one line with no newline (the multi-GB line check); 0 skips it
    big_line_bytes: int = 256 * 1024 * 1024
    #: the line cap the big line is read with (the library's default cap)
    big_line_cap: int = DEFAULT_LINE_CAP
    #: readers of the big-line check: scan, tail, fsck, repair, tokens_entries, import_source
    big_line_readers: list[str] = field(default_factory=lambda: list(READERS))
    #: memory a reader may add beyond two caps (one line, one transient copy) before it counts as unbounded, MB
    big_line_slack_mb: int = 64
    #: seconds one big-line reader may take
    timeout_s: float = 900.0
    #: reproducers saved per target and kind of finding (the counts cover all of them)
    keep_findings: int = 5
    #: folder for the work files and the sparse file (default: work files in /dev/shm where it exists, as
    #: repairs fsync and a disk's sync latency would dominate; the sparse file in the system's temp folder)
    tmp: str | None = None

    def __post_init__(self) -> None:
        for name, chosen, known in (("targets", self.targets, TARGETS), ("kinds", self.kinds, INPUT_KINDS),
                                    ("mutations", self.mutations, MUTATIONS), ("big_line_readers", self.big_line_readers, READERS)):
            unknown = set(chosen) - set(known)
            if unknown:
                raise ValueError(f"unknown {name}: {sorted(unknown)}; choose from {', '.join(known)}")
        if self.inputs < 0 or self.max_input_bytes < 1 or self.small_cap < 1 or self.big_line_bytes < 0:
            raise ValueError("inputs, big_line_bytes must be >= 0; max_input_bytes, small_cap >= 1")
