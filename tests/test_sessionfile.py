"""The one guard: what is a session log, and what is refused as something else (with its kind)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aptmem.errors import NotASessionError, NotASessionLogError
from aptmem.sessionfile import SESSION, check_session_log, sniff_log
from aptmem.working_memory import WorkingMemory

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"


def _file(tmp_path: Path, name: str, body: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(body)
    return path


@pytest.mark.parametrize(("body", "kind"), [
    (b'{"type":"user","content":"hi","ts":1}\n', SESSION),
    (b"", SESSION),
    (b"\x00" * 100, SESSION),                                            # a torn write of NULs
    (b'{"type":"us\n{"type":"user","content":"hi","ts":1}\n', SESSION),   # a damaged first line
    (b'{"type":"user","ts":"late"}\n', SESSION),                         # a damaged entry is still an entry
    (b'{"type":"future_thing","ts":1}\n', SESSION),                      # unknown types are kept
    (b'\xef\xbb\xbf{"type":"user","content":"hi","ts":1}\r\n', SESSION),  # BOM and CRLF
    (json.dumps({"type": "user", "content": "hi", "ts": 1}, indent=2).encode(), "json-document"),
    (b'[{"type":"user","content":"hi","ts":1}]', "json-document"),
    (b'{"a": 1}', "json-document"),
    (b'{"session_id":"x","created":1,"updated":1,"memory":""}\n{"session_id":"y","created":1,"updated":1}\n', "sidecar"),
    (b"# notes\nplain text\n", "not-jsonl"),
    (bytes(range(1, 256)) * 4, "not-jsonl"),
])
def test_what_the_first_lines_say(tmp_path: Path, body: bytes, kind: str) -> None:
    path = _file(tmp_path, f"{SID}.jsonl", body)
    assert sniff_log(path)[0] == kind
    if kind == SESSION:
        check_session_log(path)
    else:
        with pytest.raises(NotASessionLogError) as refused:
            check_session_log(path)
        assert refused.value.kind == kind and str(path) in str(refused.value)
    assert path.read_bytes() == body


def test_transcripts_sidecars_and_quarantines_are_named(tmp_path: Path) -> None:
    for src, kind in (("claude-code-short.jsonl", "claude-code"), ("claude-code-subagent.jsonl", "claude-code"),
                      ("pi-large-session.jsonl", "pi")):
        path = tmp_path / f"{SID}.jsonl"
        shutil.copy(REAL / src, path)
        kind_seen, reason = sniff_log(path)
        assert kind_seen == kind and "aptmem import --from" in reason
    WorkingMemory(tmp_path, SID).create(title="t")
    assert sniff_log(tmp_path / f"{SID}.meta.json")[0] == "sidecar"
    quarantine = _file(tmp_path, f"{SID}.jsonl.quarantine", b'#aptmem-quarantine {"line":1}\n{"type":"us\n')
    assert sniff_log(quarantine)[0] == "quarantine"


def test_a_missing_file_or_a_folder_is_not_a_session(tmp_path: Path) -> None:
    with pytest.raises(NotASessionError, match="no such file"):
        check_session_log(tmp_path / "missing.jsonl")
    with pytest.raises(NotASessionError, match="folder"):
        check_session_log(tmp_path)
