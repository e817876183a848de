"""Importers: real agent transcripts (Claude Code, pi) as aptmem entries and sessions.

Each source format has one small module that documents its mapping, line type by line type
(:mod:`~aptmem.importers.claude_code`, :mod:`~aptmem.importers.pi`), a converter behind the one small
:class:`~aptmem.importers.converter.Converter` Protocol, registered in
:data:`~aptmem.importers.converter.CONVERTERS` (which ``--from auto`` asks); :mod:`~aptmem.importers.base`
holds the report and the streaming reader they share, :mod:`~aptmem.importers.scan` the public
entry points and :mod:`~aptmem.importers.usage` the comparison of token estimates with the
usage the provider reported. Typical use::

    from aptmem.importers import import_session, iter_entries

    report = import_session("claude-code", "session.jsonl", "sessions/")   # a new aptmem session
    scan = iter_entries("pi", "pi-session.jsonl")                          # or just the entries
    entries = list(scan); scan.report.skipped
"""

from aptmem.importers.base import ImportReport
from aptmem.importers.converter import CONVERTERS, FORMATS, Converter
from aptmem.importers.scan import TranscriptScan, detect_format, import_session, iter_entries

__all__ = ["CONVERTERS", "FORMATS", "Converter", "ImportReport", "TranscriptScan", "detect_format", "import_session",
           "iter_entries"]
