"""Session ids: canonical UUID v4 only, checked before any path is built."""

from __future__ import annotations

import os
import uuid

import pytest

from aptmem.errors import InvalidSessionId
from aptmem.ids import is_session_id, new_session_id, session_path, validate_session_id


def test_new_ids_are_canonical_v4() -> None:
    for _ in range(100):
        sid = new_session_id()
        assert validate_session_id(sid) == sid
        assert uuid.UUID(sid).version == 4 and sid == sid.lower()


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("../../etc/passwd", "looks like a path"),
        ("/etc/passwd", "looks like a path"),
        ("..", "looks like a path"),
        ("a/b", "looks like a path"),
        ("0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e\x00", "NUL byte"),
        ("0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e/../x", "looks like a path"),
        # Fullwidth digit zero and a unicode hyphen: look-alikes of a real id.
        ("\uff10b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e", "non-ASCII"),
        ("0b7e4d5c\u20102b1f-4c3a-9d8e-7f6a5b4c3d2e", "non-ASCII"),
        ("0B7E4D5C-2B1F-4C3A-9D8E-7F6A5B4C3D2E", "canonical form"),
        ("0b7e4d5c2b1f4c3a9d8e7f6a5b4c3d2e", "canonical form"),
        ("{0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e}", "canonical form"),
        ("0b7e4d5c-2b1f-1c3a-9d8e-7f6a5b4c3d2e", "version 1"),
        ("0b7e4d5c-2b1f-4c3a-cd8e-7f6a5b4c3d2e", "version 4"),
        ("", "not a UUID"),
        ("hello", "not a UUID"),
        (" 0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e", "not a UUID"),
    ],
)
def test_hostile_ids_are_refused_with_a_reason(value: str, reason: str) -> None:
    with pytest.raises(InvalidSessionId, match=reason):
        validate_session_id(value)
    assert not is_session_id(value)


def test_non_strings_are_refused() -> None:
    with pytest.raises(InvalidSessionId, match="must be a string"):
        validate_session_id(b"0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e")


def test_paths_are_built_only_from_valid_ids(tmp_path: os.PathLike[str]) -> None:
    sid = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
    assert str(session_path(tmp_path, sid, ".jsonl")) == os.path.join(tmp_path, sid + ".jsonl")
    with pytest.raises(InvalidSessionId):
        session_path(tmp_path, "../escape", ".jsonl")
