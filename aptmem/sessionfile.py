"""Is a file a session log? The one guard every command that reads or changes a log goes through.

A session log is JSON lines, one entry a line. Other files that end up where a log is expected
would be misread, and a repair would "fix" them by moving every line to the quarantine, so they
are recognized and refused before anything reads on or writes (:class:`NotASessionLogError`,
which the command line turns into exit 2):

* ``claude-code`` / ``pi``: an agent's own transcript (recognized as ``aptmem import --from
  auto`` does, by its first JSON line); ``aptmem import`` makes a session of it;
* ``sidecar``: a session's working memory, ``<id>.meta.json`` (by its name, or by its fields);
* ``quarantine``: ``<log>.quarantine``, the bytes repairs removed from a log;
* ``json-document``: one JSON value spread over the file (pretty-printed JSON, a JSON array),
  not one entry a line;
* ``not-jsonl``: none of the first lines is even the start of a JSON object (a text file,
  binary data).

The verdict comes from the first lines only (at most :data:`PROBE_LINES` lines and
:data:`PROBE_BYTES` bytes): the first line that is a JSON object decides when it is an aptmem
entry (a session), a transcript's line or a sidecar. A log whose first lines are damaged is still
a log (damage is ``fsck``'s business), and so is an empty file or one of NUL bytes (a torn write).
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from aptmem.entries import UnknownEntry, decode_line
from aptmem.errors import InvalidEntry, NotASessionLogError
from aptmem.logreader import DEFAULT_LINE_CAP, open_log, physical_lines

__all__ = ["PROBE_BYTES", "PROBE_LINES", "SESSION", "check_session_log", "sniff_log"]

#: Non-blank lines looked at, at most.
PROBE_LINES = 20
#: Bytes looked at, at most (more only to finish a line that started before).
PROBE_BYTES = 8 * 1024 * 1024
#: Files up to this size whose first lines are no JSON object are parsed whole, to tell a JSON document.
_DOCUMENT_BYTES = 64 * 1024 * 1024
#: The verdict for a session log.
SESSION = "session"

_SIDECAR_SUFFIX = ".meta.json"
_QUARANTINE_SUFFIX = ".quarantine"
_SIDECAR_FIELDS = frozenset({"session_id", "created", "updated"})


def check_session_log(path: str | os.PathLike[str], cap: int = DEFAULT_LINE_CAP) -> None:
    """Return if ``path`` is a session log (maybe damaged); else raise :class:`NotASessionLogError`.

    A missing file, a folder or a symlink raise :class:`~aptmem.errors.NotASessionError` /
    :class:`~aptmem.errors.UnsafePathError` as the log reader does. Nothing is written.
    """
    kind, reason = sniff_log(path, cap)
    if kind != SESSION:
        raise NotASessionLogError(os.fspath(path), kind, reason)


def sniff_log(path: str | os.PathLike[str], cap: int = DEFAULT_LINE_CAP) -> tuple[str, str]:
    """``(kind, reason)``: :data:`SESSION` and "" for a session log, else what the file is and why."""
    name = os.path.basename(os.fspath(path))
    if name.endswith(_SIDECAR_SUFFIX):
        return "sidecar", _sidecar_reason(name[: -len(_SIDECAR_SUFFIX)])
    if name.endswith(_QUARANTINE_SUFFIX):
        return "quarantine", (f"the quarantine of {name[: -len(_QUARANTINE_SUFFIX)]} (bytes repairs removed from "
                              "that log, each behind a header), not a session log")
    brace = typed = False
    seen = looked = 0
    with open_log(path) as stream:
        for line in physical_lines(stream, cap):
            if seen >= PROBE_LINES or line.offset >= PROBE_BYTES:
                break
            body = line.body
            if body is None:  # over the cap: damage, not a verdict
                continue
            stripped = body.strip()
            if not stripped.strip(b"\x00"):
                continue  # blank, or the NUL bytes of a torn write
            seen += 1
            verdict = _line_verdict(stripped, first=looked == 0)
            looked += 1
            if verdict is not None:
                return verdict
            if stripped.startswith(b"{"):
                brace = True
                typed = typed or _has_type(stripped)
        size = os.fstat(stream.fileno()).st_size
    if not typed and 0 < size <= min(cap, _DOCUMENT_BYTES) and _is_json_document(path, size):
        return "json-document", _DOCUMENT
    if brace or seen == 0:
        return SESSION, ""
    return "not-jsonl", ("not a session log: none of its first lines is a JSON object "
                         "(a session log is one JSON entry a line)")


_DOCUMENT = ("one JSON document spread over the file (pretty-printed JSON or an array), not a JSON-lines "
             "session log (one entry a line)")


def _sidecar_reason(session: str) -> str:
    return f"the working-memory sidecar of session {session} (its log is {session}.jsonl), not a session log"


def _line_verdict(stripped: bytes, *, first: bool) -> tuple[str, str] | None:
    """The verdict one line gives, or None if it decides nothing (damage, an object without a type)."""
    if first and stripped in (b"{", b"["):
        return "json-document", _DOCUMENT  # the opening line of a pretty-printed document
    try:
        entry = decode_line(stripped)
    except InvalidEntry:
        entry = None
    if entry is not None and not isinstance(entry, UnknownEntry):
        return SESSION, ""
    try:
        obj = msgspec.json.decode(stripped)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    # Every transcript line has a string type; only such an object is worth asking the importers about.
    foreign = _transcript(obj) if isinstance(obj.get("type"), str) else None
    if foreign is not None:
        return foreign, (f"a {foreign} transcript, not an aptmem session log: "
                         f"'aptmem import --from {foreign} PATH DEST_DIR' (or --from auto) makes a session of it")
    if "type" not in obj and _SIDECAR_FIELDS <= obj.keys():
        return "sidecar", _sidecar_reason(str(obj.get("session_id")))
    if entry is not None:  # an entry of a type this version does not know: kept, so a log
        return SESSION, ""
    return None


def _transcript(obj: dict[str, Any]) -> str | None:
    """The agent format whose first line ``obj`` looks like, or None."""
    from aptmem.importers.converter import detect

    return detect(obj)[0]


def _has_type(stripped: bytes) -> bool:
    """Whether a damaged line still shows a ``"type"`` key (a torn entry, not a document's line)."""
    return b'"type"' in stripped[:200]


def _is_json_document(path: str | os.PathLike[str], size: int) -> bool:
    """Whether the whole file is one JSON value."""
    with open_log(path) as stream:
        data = stream.read(size + 1)
    try:
        msgspec.json.decode(data.lstrip(b"\xef\xbb\xbf"))
    except (msgspec.DecodeError, RecursionError):
        return False
    return True
