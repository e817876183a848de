"""A JSONL store that records, process-wide, the order in which stores were appended to (the write-cost turns test)."""

from __future__ import annotations

from aptmem.entries import Entry
from aptmem.jsonl_store import JsonlStore

#: (label, session) of every append any RecordingStore took, in order
APPENDS: list[str] = []


class RecordingStore(JsonlStore):
    """aptmem's JSONL store, labelled, noting every append in :data:`APPENDS`."""

    def __init__(self, root: str, *, label: str, **settings: object) -> None:
        super().__init__(root, **settings)  # type: ignore[arg-type]
        self.label = label

    def append(self, session_id: str, entry: Entry) -> None:
        """Append as the JSONL store does, noting the label first."""
        APPENDS.append(self.label)
        super().append(session_id, entry)
