"""The workloads a run replays through every strategy, and the one place a measurement gets entries from.

* ``workload=synthetic`` (the default): the seeded generator of :mod:`experiments.workloads.synthetic`
  (text pools in :mod:`~experiments.workloads.text`, planted facts in :mod:`~experiments.workloads.facts`);
* ``workload=transcript``: real agent sessions, :mod:`experiments.workloads.transcripts`.

:class:`WorkloadRequest` is a workload (and how many of its entries) as a typed value that crosses
into a child process as JSON.
"""

from __future__ import annotations

import msgspec

from aptmem.entries import Entry
from experiments.workloads.synthetic import WorkloadConfig, generate
from experiments.workloads.transcripts import TranscriptWorkload, transcript_entries

__all__ = ["Workload", "WorkloadRequest", "workload_entries", "workload_name"]

#: The workload group's choice.
Workload = WorkloadConfig | TranscriptWorkload


def workload_name(workload: Workload) -> str:
    """``synthetic`` or ``transcript``: the label of the rows a workload produced."""
    return "transcript" if isinstance(workload, TranscriptWorkload) else "synthetic"


def workload_entries(workload: Workload, limit: int | None = None) -> list[Entry]:
    """The entries of the configured workload, at most ``limit`` (a transcript may hold fewer)."""
    if isinstance(workload, TranscriptWorkload):
        return transcript_entries(workload, limit)
    if limit is not None:
        workload = WorkloadConfig(**{**vars(workload), "max_entries": limit})
    return generate(workload).entries


class WorkloadRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A workload and how many of its entries, for a job run in another process (one of the two is set)."""

    synthetic: WorkloadConfig | None = None
    transcript: TranscriptWorkload | None = None
    limit: int | None = None

    @classmethod
    def of(cls, workload: Workload, limit: int | None = None) -> WorkloadRequest:
        """The request for the first ``limit`` entries (all: None) of ``workload``."""
        if isinstance(workload, TranscriptWorkload):
            return cls(transcript=workload, limit=limit)
        return cls(synthetic=workload, limit=limit)

    @property
    def workload(self) -> Workload:
        """The workload asked for."""
        chosen = self.transcript if self.transcript is not None else self.synthetic
        if chosen is None:
            raise ValueError("a workload request names no workload")
        return chosen

    def entries(self) -> list[Entry]:
        """The entries asked for."""
        return workload_entries(self.workload, self.limit)
