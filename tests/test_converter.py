"""The converter seam of the importers: every registered converter has every member of the Protocol, and
detection, scans, the session-file sniffer and the settings go through the one registry (a toy third format
registered in a test is found by all of them, with no name check to add)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from aptmem.entries import Entry, User
from aptmem.errors import NotATranscriptError, UnknownTranscriptFormat
from aptmem.importers import CONVERTERS, Converter, ImportReport, detect_format, iter_entries
from aptmem.importers import converter as registry
from aptmem.sessionfile import sniff_log
from experiments.measurements.transcripts.settings import TranscriptsSettings
from experiments.workloads.transcripts import TranscriptWorkload

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "real"


def _protocol_members() -> set[str]:
    own = {name for name in vars(Converter) if not name.startswith("_")}
    return own | set(Converter.__annotations__) | {"__init__"}


def test_the_protocol_has_the_members_the_scan_uses() -> None:
    assert _protocol_members() == {"fmt", "report", "looks_like", "feed", "finish", "__init__"}


@pytest.mark.parametrize("name", list(CONVERTERS))
def test_every_registered_converter_has_every_member(name: str) -> None:
    cls = CONVERTERS[name]
    assert cls.fmt == name
    for member in ("looks_like", "feed", "finish"):
        assert callable(getattr(cls, member)), member
    assert isinstance(inspect.getattr_static(cls, "looks_like"), staticmethod)  # asked before any instance exists
    converter = cls(ImportReport(format=name, source="x"))
    assert isinstance(converter.report, ImportReport)
    assert converter.finish() == []  # nothing fed, nothing held


def test_detection_asks_the_registry_in_order() -> None:
    pi_header = {"type": "session", "id": "s", "version": 3}
    assert registry.detect(pi_header) == ("pi", [f"claude-code: {CONVERTERS['claude-code'].looks_like(pi_header)}"])
    assert registry.detect({"type": "assistant", "message": {"role": "assistant"}})[0] == "claude-code"
    name, reasons = registry.detect({"type": "nothing-we-know"})
    assert name is None and [r.split(":")[0] for r in reasons] == list(CONVERTERS)


def test_an_unknown_format_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownTranscriptFormat, match="unknown transcript format 'codex'; choose one of claude-code, pi"):
        iter_entries("codex", tmp_path / "x.jsonl")
    with pytest.raises(UnknownTranscriptFormat):
        TranscriptsSettings(format="codex")
    with pytest.raises(UnknownTranscriptFormat):
        TranscriptWorkload(format="codex")


class ToyConverter:
    """A third format for the test: lines ``{"type": "toy", "say": ...}``, each one user entry."""

    fmt: ClassVar[str] = "toy"

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.fed = 0

    @staticmethod
    def looks_like(obj: dict[str, Any]) -> str | None:
        return None if obj.get("type") == "toy" else f"its first line has type {obj.get('type')!r}, not 'toy'"

    def feed(self, number: int, obj: dict[str, Any]) -> list[Entry]:
        self.fed += 1
        return [User(ts=number, content=str(obj.get("say", "")))]

    def finish(self) -> list[Entry]:
        return [User(ts=0, content=f"{self.fed} lines")]


def test_a_new_format_is_one_class_and_one_registry_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: Converter = ToyConverter(ImportReport(format="toy", source="x"))  # the Protocol, statically
    assert checked.fmt == "toy"
    monkeypatch.setitem(registry.CONVERTERS, "toy", ToyConverter)  # type: ignore[index]
    src = tmp_path / "toy.jsonl"
    src.write_text("".join(json.dumps({"type": "toy", "say": w}) + "\n" for w in ("hello", "world")))
    assert detect_format(src) == "toy"
    scan = iter_entries("auto", src)
    assert [e.content for e in scan] == ["hello", "world", "2 lines"]  # type: ignore[union-attr]
    assert scan.report.format == "toy" and scan.report.entries == 3
    assert sniff_log(src)[0] == "toy"  # refused as a session log, naming the format
    TranscriptsSettings(format="toy")
    with pytest.raises(NotATranscriptError, match="not a pi transcript"):
        list(iter_entries("pi", src))


def test_real_transcripts_are_detected_and_refused_as_logs() -> None:
    paths = sorted(FIXTURES.glob("*.jsonl"))
    formats = {path: detect_format(path) for path in paths}
    assert set(formats.values()) == set(CONVERTERS)
    for path, fmt in formats.items():
        assert sniff_log(path)[0] == fmt, path.name
