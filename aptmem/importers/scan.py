"""Reading a transcript as aptmem entries, and writing it as an aptmem session.

:class:`TranscriptScan` streams a source file line by line (bounded memory), hands each good line
to the format's converter and yields the entries; its :attr:`~TranscriptScan.report` says what
was read, produced, skipped and found damaged. :func:`import_session` writes those entries as a
new session of a :class:`~aptmem.jsonl_store.JsonlStore`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import chain, islice
from pathlib import Path
from typing import Any

from aptmem.entries import Assistant, Entry, Metadata, entry_type
from aptmem.errors import EntryTooLarge, NotATranscriptError
from aptmem.importers.base import ImportReport, SourceReader, count
from aptmem.importers.converter import FORMATS, converter_class, detect
from aptmem.logreader import DEFAULT_LINE_CAP

__all__ = ["TranscriptScan", "detect_format", "import_session", "iter_entries"]

#: Entries written per ``append_many`` when importing.
_CHUNK = 512
#: Good lines looked at before format detection gives up.
_PROBE_LINES = 20


def detect_format(src: str | os.PathLike[str]) -> str:
    """The format of a transcript, from its first good line (:func:`~aptmem.importers.converter.detect`);
    raises :class:`NotATranscriptError`."""
    probe = ImportReport(format=" or ".join(FORMATS), source=os.fspath(src))
    for _, obj in islice(SourceReader(src, probe), _PROBE_LINES):
        # the first good line decides: later lines of a foreign file prove nothing
        name, reasons = detect(obj)
        if name is None:
            raise NotATranscriptError(os.fspath(src), probe.format, "; ".join(reasons))
        return name
    why = f"{len(probe.damaged_lines) + (probe.torn_tail_line is not None)} damaged lines" if probe.lines else "empty file"
    raise NotATranscriptError(os.fspath(src), probe.format, f"no good line ({why})")


class TranscriptScan:
    """One pass over a transcript: iterate it for its entries; then :attr:`report` is complete.

    ``fmt`` is ``claude-code``, ``pi`` or ``auto`` (detected from the first good line). A file
    whose first good line is not of the format (or that has no good line) raises
    :class:`NotATranscriptError` before any entry is yielded. Damage is recorded in the report
    and the scan goes on; with ``strict`` it raises :class:`~aptmem.errors.CorruptTranscriptError`.
    Iterate once.
    """

    def __init__(self, fmt: str, src: str | os.PathLike[str], *, strict: bool = False,
                 cap: int = DEFAULT_LINE_CAP) -> None:
        self.src = os.fspath(src)
        self.fmt = detect_format(self.src) if fmt == "auto" else converter_class(fmt).fmt
        self.report = ImportReport(format=self.fmt, source=self.src)
        self.strict = strict
        self.cap = cap

    def __iter__(self) -> Iterator[Entry]:
        report = self.report
        converter = converter_class(self.fmt)(report)
        first = True
        for number, obj in SourceReader(self.src, report, cap=self.cap, strict=self.strict):
            if first:
                why = converter.looks_like(obj)
                if why is not None:
                    raise NotATranscriptError(self.src, self.fmt, why)
                first = False
            for entry in converter.feed(number, obj):
                self._tally(entry)
                yield entry
        if first:
            why = f"{report.lines} damaged lines" if report.lines else "empty file"
            raise NotATranscriptError(self.src, self.fmt, f"no good line ({why})")
        for entry in converter.finish():
            self._tally(entry)
            yield entry

    def _tally(self, entry: Entry) -> None:
        report = self.report
        report.entries += 1
        count(report.by_type, entry_type(entry))
        if isinstance(entry, Metadata):
            count(report.metadata, entry.kind)

    def run(self) -> ImportReport:
        """Consume the scan without keeping the entries; return the report."""
        for _ in self:
            pass
        return self.report


def iter_entries(fmt: str, src: str | os.PathLike[str], *, strict: bool = False) -> TranscriptScan:
    """The entries of a transcript, streamed (a :class:`TranscriptScan`: its ``report`` fills in as it goes)."""
    return TranscriptScan(fmt, src, strict=strict)


def import_session(fmt: str, src: str | os.PathLike[str], dest_root: str | os.PathLike[str], *,
                   session_id: str | None = None, title: str | None = None) -> ImportReport:
    """Write a transcript as a new aptmem session under ``dest_root``; return the report.

    The session (JSONL log and working-memory sidecar, titled after the source, with the first
    model seen) is created only once the first line proved the file a transcript, so a foreign
    file leaves nothing behind. A damaged source is imported as far as it is good (the report
    says what was damaged). The log is synced when the import ends.
    """
    from aptmem.continuation import create_session
    from aptmem.jsonl_store import JsonlStore
    from aptmem.working_memory import WorkingMemory

    scan = TranscriptScan(fmt, src)
    report = scan.report
    entries = iter(scan)
    head = list(islice(entries, 1))  # raises NotATranscriptError before anything is created
    model: str | None = None
    with JsonlStore(dest_root, sync="batch") as store:
        sid = create_session(store, dest_root, title=title or f"imported from {scan.fmt}: {Path(scan.src).name}",
                             session_id=session_id)
        report.session_id = sid
        stream = chain(head, entries)
        while chunk := list(islice(stream, _CHUNK)):
            if model is None:
                model = next((e.model for e in chunk if isinstance(e, Assistant) and e.model), None)
            try:
                store.append_many(sid, chunk)
            except EntryTooLarge:
                _append_each(store, sid, chunk, report)
    if model is not None:
        WorkingMemory(dest_root, sid).set_model(model)
    return report


def _append_each(store: Any, sid: str, chunk: list[Entry], report: ImportReport) -> None:
    """Append a chunk one entry at a time, counting (not writing) the entries over the line cap."""
    for entry in chunk:
        try:
            store.append(sid, entry)
        except EntryTooLarge:
            report.entries -= 1
            report.by_type[entry_type(entry)] -= 1
            count(report.skipped, "entry over the line cap")
