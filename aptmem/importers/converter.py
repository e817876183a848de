"""The converter seam: what every transcript format's importer is, and the one registry of them.

A converter turns the good lines of one source transcript (JSON objects, handed over by
:class:`~aptmem.importers.base.SourceReader` in file order) into aptmem entries, and fills in the
:class:`~aptmem.importers.base.ImportReport` it was made with. Detection (``--from auto``, and the
session-file sniffer that refuses a transcript given as a log) asks each registered converter, in
registry order, whether a first good line looks like its format. A new format is one module with a
class that has every member of :class:`Converter` and one line in :data:`CONVERTERS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from aptmem.entries import Entry
from aptmem.errors import UnknownTranscriptFormat
from aptmem.importers.base import ImportReport
from aptmem.importers.claude_code import ClaudeCodeConverter
from aptmem.importers.pi import PiConverter

__all__ = ["CONVERTERS", "FORMATS", "Converter", "converter_class", "detect"]


class Converter(Protocol):
    """One source format's converter: stateful over one transcript, one line at a time."""

    #: the format's name, as ``--from`` spells it and reports show it
    fmt: ClassVar[str]
    #: the report of this import, filled in as lines are fed
    report: ImportReport

    def __init__(self, report: ImportReport) -> None:
        """Start converting one transcript whose figures go to ``report``."""

    @staticmethod
    def looks_like(obj: dict[str, Any]) -> str | None:
        """None if ``obj``, a transcript's first good line, is a line of this format; else why it is not."""

    def feed(self, number: int, obj: dict[str, Any]) -> list[Entry]:
        """The entries good line ``number`` produces (maybe none; a line it refuses goes to the report)."""

    def finish(self) -> list[Entry]:
        """The entries still held when the transcript ends (e.g. a reply gathered over several lines)."""


#: The formats, by name, in detection order. Typed as the Protocol, so a checker holds each class to it.
_REGISTERED: tuple[type[Converter], ...] = (ClaudeCodeConverter, PiConverter)
CONVERTERS: Mapping[str, type[Converter]] = {cls.fmt: cls for cls in _REGISTERED}
#: The format names, as the command lines offer them (beside ``auto``).
FORMATS: tuple[str, ...] = tuple(CONVERTERS)


def converter_class(fmt: str) -> type[Converter]:
    """The converter registered as ``fmt``; :class:`~aptmem.errors.UnknownTranscriptFormat` if none is."""
    try:
        return CONVERTERS[fmt]
    except KeyError:
        raise UnknownTranscriptFormat(fmt, FORMATS) from None


def detect(obj: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The first format whose converter takes ``obj`` as its first line, and each earlier format's reason not to."""
    reasons = []
    for name, cls in CONVERTERS.items():
        why = cls.looks_like(obj)
        if why is None:
            return name, reasons
        reasons.append(f"{name}: {why}")
    return None, reasons
