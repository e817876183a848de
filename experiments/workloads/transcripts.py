"""The one place a job gets its entries from, whichever workload the run configured.

* ``workload=synthetic`` (the default): the seeded generator of :mod:`experiments.workloads.synthetic`.
* ``workload=transcript``: real agent sessions (Claude Code, pi) read through
  :mod:`aptmem.importers`; ``path`` is a transcript or a folder of them (its ``*.jsonl`` files,
  in name order, one session after another). A relative path is taken from the repository's
  root, so a run started from anywhere finds ``tests/fixtures/real``.

A transcript has no planted facts: the compaction job scores occupancy only, and says so. A
compaction the original agent wrote becomes a metadata entry by default, so that aptmem's own
policy (and the memory job's resume marker) decide the live context of a replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aptmem.entries import Compaction, Entry, Metadata
from experiments.core.runinfo import REPO_ROOT
from experiments.workloads.synthetic import WorkloadConfig, generate

__all__ = ["TranscriptWorkload", "entries_from_spec", "transcript_files", "workload_entries", "workload_name",
           "workload_spec"]

_FORMATS = ("auto", "claude-code", "pi")
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
        if self.format not in _FORMATS:
            raise ValueError(f"transcript format must be one of {', '.join(_FORMATS)}, not {self.format!r}")
        if self.source_compactions not in _SOURCE_COMPACTIONS:
            raise ValueError(f"source_compactions must be one of {', '.join(_SOURCE_COMPACTIONS)}")


def workload_name(workload: Any) -> str:
    """``synthetic`` or ``transcript``: the label of the rows a workload produced."""
    return "transcript" if isinstance(workload, TranscriptWorkload) else "synthetic"


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


def _transcript_entries(workload: TranscriptWorkload, limit: int | None) -> list[Entry]:
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


def workload_entries(workload: Any, limit: int | None = None) -> list[Entry]:
    """The entries of the configured workload, at most ``limit`` (a transcript may hold fewer)."""
    if isinstance(workload, TranscriptWorkload):
        return _transcript_entries(workload, limit)
    if limit is not None:
        workload = WorkloadConfig(**{**vars(workload), "max_entries": limit})
    return generate(workload).entries


def workload_spec(workload: Any, limit: int | None = None) -> dict[str, Any]:
    """A workload as plain JSON, for a job run in another process (see :func:`entries_from_spec`)."""
    if isinstance(workload, TranscriptWorkload):
        return {"kind": "transcript", "config": vars(workload), "limit": limit}
    return {"kind": "synthetic", "config": {**vars(workload), "max_entries": limit}, "limit": limit}


def entries_from_spec(spec: dict[str, Any]) -> list[Entry]:
    """The entries of a workload described by :func:`workload_spec`."""
    if spec.get("kind") == "transcript":
        return workload_entries(TranscriptWorkload(**spec["config"]), spec.get("limit"))
    return workload_entries(WorkloadConfig(**spec["config"]))
