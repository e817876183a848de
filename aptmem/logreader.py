"""Streaming, line-by-line reading of a JSONL session file with bounded memory.

The reader holds at most one line (up to the line cap) in memory, whatever the file's size. A
line longer than the cap is skipped in chunks and reported as damage, never loaded whole.

Tolerated, not damage: a UTF-8 BOM at the start, CRLF line ends, blank lines. A final line with
no newline that decodes to a whole entry is good (``terminated`` is False); one that does not
decode is a torn write.

Lines end at ``\n`` only: a ``\r`` between JSON tokens is whitespace, so a file with old Mac
line ends (``\r`` alone) is one long damaged line. Such a line is recognized (``cr_entries``
counts the entries between its ``\r``), so the damage report says so and a repair refuses to
quarantine what are really entries.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from aptmem.entries import Entry, decode_line
from aptmem.errors import InvalidEntry, NotASessionError
from aptmem.fsutil import open_read

__all__ = ["DEFAULT_LINE_CAP", "LogLine", "PhysicalLine", "after_lost_write", "classify", "classify_segments",
           "iter_lines", "open_log", "over_cap_reason", "physical_lines"]

#: The default cap on one line's length. It admits lines of 64 MiB, far above the 16 MiB an
#: agent's largest tool result plausibly needs, while bounding a reader's memory.
DEFAULT_LINE_CAP = 64 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"
_READ_CHUNK = 1 << 20


@dataclass(slots=True)
class LogLine:
    """One physical line of a log, classified.

    ``kind`` is ``"good"``, ``"blank"`` or ``"damaged"``. ``offset`` and ``length`` cover the
    line's bytes including its line ending, so a repair can move exactly these bytes.
    ``zero_filled`` marks a line of nothing but NUL bytes (a power-loss tail on ext4).
    """

    number: int
    offset: int
    length: int
    kind: str
    terminated: bool
    entry: Entry | None = None
    reason: str | None = None
    zero_filled: bool = False
    #: for a damaged line: how many entries it holds between lone ``\r`` line ends (old Mac)
    cr_entries: int = 0

    @property
    def tail_eligible(self) -> bool:
        """Whether this damage can be part of a torn tail (a torn or zero-filled write)."""
        return self.kind == "damaged" and (not self.terminated or self.zero_filled)


def open_log(path: str | os.PathLike[str]) -> io.BufferedReader:
    """Open a session file for streaming reads, refusing folders, symlinks and missing files."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise NotASessionError(p, "is a folder, not a session file")
    try:
        fd = open_read(p)
    except FileNotFoundError:
        raise NotASessionError(p, "no such file") from None
    except PermissionError:
        raise NotASessionError(p, "permission denied") from None
    return io.open(fd, "rb", buffering=_READ_CHUNK)


class PhysicalLine(NamedTuple):
    """One physical line as read, before anyone decodes it (see :func:`physical_lines`)."""

    number: int
    offset: int
    #: bytes in the file, the line end included
    length: int
    terminated: bool
    #: the line without its ``\\n``, a ``\\r`` before it and a BOM at the start of the file;
    #: None for a line longer than the cap, which is skipped in chunks, never held
    body: bytes | None
    #: bytes of the line before ``body`` (a BOM)
    lead: int


def physical_lines(stream: io.BufferedReader, cap: int = DEFAULT_LINE_CAP, start_offset: int = 0) -> Iterator[PhysicalLine]:
    """Yield every physical line of ``stream``, oldest first, holding at most ``cap`` bytes of one.

    The line format every JSONL reader here shares (aptmem's logs and the importers' source
    transcripts). ``stream`` must be positioned at ``start_offset`` (0 for a whole file).
    """
    offset = start_offset
    number = 0
    while True:
        raw = stream.readline(cap + 1)
        if not raw:
            return
        number += 1
        length = len(raw)
        terminated = raw.endswith(b"\n")
        if not terminated and length > cap:
            # Over the cap: consume the rest of the line without keeping it.
            while True:
                more = stream.readline(_READ_CHUNK)
                length += len(more)
                if not more or more.endswith(b"\n"):
                    terminated = more.endswith(b"\n")
                    break
            yield PhysicalLine(number, offset, length, terminated, None, 0)
            offset += length
            continue
        body = raw[:-1] if terminated else raw
        if body.endswith(b"\r"):
            body = body[:-1]
        lead = 0
        if offset == 0 and body.startswith(_BOM):
            body, lead = body[len(_BOM) :], len(_BOM)
        yield PhysicalLine(number, offset, length, terminated, body, lead)
        offset += length


def over_cap_reason(cap: int) -> str:
    """The damage reason of a line longer than the cap."""
    return f"line longer than the cap of {cap} bytes"


def after_lost_write(body: bytes) -> int:
    """Where the text after a line's last NUL byte starts, or -1 when no text follows a NUL.

    A write lost in a power loss can come back as NUL bytes with no line end, so the next
    intact line is glued onto them; valid JSON never holds a raw NUL, so that text may be a
    line of its own. The caller decides whether it is a good one.
    """
    cut = body.rfind(b"\x00")
    return cut + 1 if cut >= 0 and body[cut + 1 :].strip() else -1


def iter_lines(stream: io.BufferedReader, cap: int = DEFAULT_LINE_CAP, start_offset: int = 0) -> Iterator[LogLine]:
    """Yield every physical line of ``stream`` classified, oldest first.

    ``stream`` must be positioned at ``start_offset`` (0 for a whole file). Memory use is
    bounded by ``cap`` plus the read buffer.
    """
    for line in physical_lines(stream, cap, start_offset):
        if line.body is None:
            yield LogLine(line.number, line.offset, line.length, "damaged", line.terminated, reason=over_cap_reason(cap))
        else:
            yield from classify_segments(line.body, line.number, line.offset, line.length, line.terminated, line.lead)


def classify_segments(body: bytes, number: int, offset: int, length: int, terminated: bool, lead: int = 0) -> list[LogLine]:
    """Classify one physical line, split after its last NUL byte when a good line follows it.

    When the text after a lost write's NUL bytes (:func:`after_lost_write`) is a good entry, the
    bytes before it are damage of their own and the entry is kept instead of being lost with the
    damage. Otherwise the line is one damaged line. ``lead`` counts bytes before ``body`` in the
    line (a BOM).
    """
    cut = after_lost_write(body)
    if cut < 0:
        return [classify(body, number, offset, length, terminated)]
    head = lead + cut
    rest = classify(body[cut:], number, offset + head, length - head, terminated)
    if rest.kind != "good":
        return [classify(body, number, offset, length, terminated)]
    # Not torn: the damage is followed by more of the file on the same line.
    return [classify(body[:cut], number, offset, head, True), rest]


def classify(body: bytes, number: int, offset: int, length: int, terminated: bool) -> LogLine:
    """Classify one line's content (without line ending) as good, blank or damaged."""
    if not body.strip():
        return LogLine(number, offset, length, "blank", terminated)
    if not body.strip(b"\x00 \t"):
        return LogLine(number, offset, length, "damaged", terminated, reason="zero-filled bytes", zero_filled=True)
    try:
        entry = decode_line(body)
    except InvalidEntry as exc:
        reason = str(exc)
        if not terminated:
            reason = f"torn write (no line end): {reason}"
        crs = _cr_entries(body)
        if crs:
            reason = (f"{reason}; it holds {crs} entries separated by old Mac line ends (CR alone): "
                      "convert them to LF (tr '\\r' '\\n') to read them")
        return LogLine(number, offset, length, "damaged", terminated, reason=reason, cr_entries=crs)
    return LogLine(number, offset, length, "good", terminated, entry=entry)


def _cr_entries(body: bytes) -> int:
    """How many of the pieces of ``body`` between lone ``\r`` bytes are entries (0 without a ``\r``)."""
    if b"\r" not in body:
        return 0
    count = 0
    for piece in body.split(b"\r"):
        if piece.strip():
            try:
                decode_line(piece)
            except InvalidEntry:
                continue
            count += 1
    return count
