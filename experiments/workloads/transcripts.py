"""Real agent transcripts (Claude Code, pi) as the workload: ``workload=transcript``.

``path`` is a transcript or a folder of them (its ``*.jsonl`` files, in name order, one session
after another), read through :mod:`aptmem.importers`. A relative path is taken from the
repository's root, so a run started from anywhere finds ``tests/fixtures/real``.

A transcript has no planted facts: the compaction measurement scores occupancy only, and says so.
A compaction the original agent wrote becomes a metadata entry by default, so that aptmem's own
policy (and the memory measurement's resume marker) decide the live context of a replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aptmem.entries import Compaction, Entry, Metadata
from aptmem.importers.converter import converter_class
from experiments.core.runinfo import REPO_ROOT

__all__ = ["TranscriptWorkload", "transcript_entries", "transcript_files"]

_SOURCE_COMPACTIONS = ("metadata", "keep")


@dataclass(kw_only=True)
class TranscriptWorkload:
    """Real transcripts as the workload (a plain dataclass: also the Hydra schema of ``workload=transcript``)."""

    #: a transcript (.jsonl) or a folder of them; relative paths start at the repository's root
    path: str = "tests/fixtures/real"
    #: the transcripts' format: auto (detected per file), claude-code or pi
    format: str = "auto"
    #: what a compaction written by the original agent becomes: metadata (aptmem's policy decides) or keep
    source_compactions: str = "metadata"
    #: the run's seed: a transcript has no randomness; it labels the tables' seed column
    seed: int = 0

    def __post_init__(self) -> None:
        if self.format != "auto":
            converter_class(self.format)  # an unknown format fails when the config loads
        if self.source_compactions not in _SOURCE_COMPACTIONS:
            raise ValueError(f"source_compactions must be one of {', '.join(_SOURCE_COMPACTIONS)}")


def transcript_files(path: str) -> list[Path]:
    """The transcript files a path names (a file, or a folder's ``*.jsonl`` in name order)."""
    root = Path(path)
    if not root.is_absolute():
        root = REPO_ROOT / root
    if root.is_dir():
        files = sorted(root.glob("*.jsonl"))
        if not files:
            raise FileNotFoundError(f"{root}: no *.jsonl transcripts in this folder")
        return files
    if not root.is_file():
        raise FileNotFoundError(f"{root}: no such transcript or folder")
    return [root]


def _as_metadata(entry: Compaction) -> Metadata:
    """An original agent's compaction as a metadata entry: aptmem's policy decides a replay's context."""
    data = {"summary": entry.summary, "first_kept": entry.first_kept, "tokens_before": entry.tokens_before}
    return Metadata(ts=entry.ts, id=entry.id, kind="source_compaction", data=data)


def transcript_entries(workload: TranscriptWorkload, limit: int | None = None) -> list[Entry]:
    """The entries of every transcript of the workload, in order, at most ``limit``."""
    from aptmem.importers import iter_entries

    out: list[Entry] = []
    for path in transcript_files(workload.path):
        for entry in iter_entries(workload.format, path):
            if isinstance(entry, Compaction) and workload.source_compactions == "metadata":
                entry = _as_metadata(entry)
            out.append(entry)
            if limit is not None and len(out) >= limit:
                return out
    return out
