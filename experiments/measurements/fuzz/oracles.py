"""What the fuzzer holds every input to, computed without the code under test where it can be.

* :func:`lines_that_decode`: the entries of every physical line that decodes on its own
  (split on ``\\n`` only; one ``\\r`` before it and a BOM at the start of the file are part of
  the line format, not of the entry; text after the last NUL byte of a line is a line of its
  own). In ``skip`` mode the reader must return exactly these, in order: fewer is a good line
  lost, more is an entry invented.
* :func:`source_lines_that_decode`: the same for a source transcript (Claude Code, pi): which
  physical lines are JSON objects with a string ``type``, the lines an import must read.
* :func:`match_in_order`: how many of the expected entries a reader returned, in order.
* :func:`reconstruct`: the original bytes rebuilt from a repaired log and its quarantine file:
  a repair may move bytes, never destroy them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from aptmem.entries import Entry, decode_line
from aptmem.errors import InvalidEntry
from aptmem.logreader import DEFAULT_LINE_CAP

__all__ = ["lines_that_decode", "match_in_order", "quarantine_pieces", "reconstruct", "source_lines_that_decode"]

_BOM = b"\xef\xbb\xbf"
_HEADER = b"#aptmem-quarantine "
_plain = msgspec.json.Decoder()


def _physical_lines(data: bytes, cap: int) -> Iterator[tuple[int, bytes]]:
    """(1-based number, body) of every line of ``data`` no longer than ``cap`` bytes.

    The line format every reader here shares: split on ``\\n`` only; a ``\\r`` before it
    and a BOM at the start of the file are not part of the line; what follows the last NUL byte
    of a line is a line of its own (the NULs before it are damage).
    """
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()  # the file ends with a line end: no final fragment
    for number, body in enumerate(pieces, 1):
        if len(body) > cap:
            continue  # the readers refuse to hold it, by design
        if body.endswith(b"\r"):
            body = body[:-1]
        if number == 1 and body.startswith(_BOM):
            body = body[len(_BOM):]
        cut = body.rfind(b"\x00")
        if cut >= 0 and body[cut + 1 :].strip():
            # A zero-filled lost write with an intact line glued on: JSON never holds a raw NUL,
            # so the text after the last NUL is a line of its own (aptmem.logreader.classify_segments,
            # aptmem.importers.base.SourceReader).
            body = body[cut + 1 :]
        yield number, body


def lines_that_decode(data: bytes, cap: int) -> list[Entry]:
    """Decode every physical line of ``data`` alone; return the entries of those that decode.

    A line longer than ``cap`` bytes (without its ``\\n``) is not expected back.
    """
    out: list[Entry] = []
    for _, body in _physical_lines(data, cap):
        if not body.strip(b"\x00 \t\r\n\x0b\x0c"):
            continue  # blank or zero-filled: never an entry
        try:
            out.append(decode_line(body))
        except InvalidEntry:
            continue
    return out


def source_lines_that_decode(data: bytes, cap: int = DEFAULT_LINE_CAP) -> list[int]:
    """The 1-based numbers of the physical lines of a source transcript (Claude Code, pi) that are
    JSON objects with a string ``type``: the lines an import must read as good.
    """
    good = []
    for number, body in _physical_lines(data, cap):
        try:
            obj = _plain.decode(body)
        except (msgspec.DecodeError, RecursionError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("type"), str):
            good.append(number)
    return good


def match_in_order(expected: Sequence[Entry], got: Sequence[Entry]) -> int:
    """How many of ``expected`` appear in ``got`` in the same order (greedy; exact equality)."""
    matched = 0
    cursor = 0
    for entry in expected:
        at = cursor
        while at < len(got) and got[at] != entry:
            at += 1
        if at < len(got):
            matched += 1
            cursor = at + 1
    return matched


class _Header(msgspec.Struct):
    """The fields of a quarantine header the reconstruction needs."""

    offset: int
    length: int


def quarantine_pieces(qpath: Path) -> list[tuple[int, bytes]]:
    """Parse a quarantine file into its pieces: (offset in the original log, bytes), in file order.

    Each piece is a header line, then exactly ``length`` bytes, then ``\\n``. Raises
    ``ValueError`` when the file does not have that shape (itself a finding).
    """
    if not qpath.exists():
        return []
    data = qpath.read_bytes()
    pieces: list[tuple[int, bytes]] = []
    at = 0
    while at < len(data):
        if not data.startswith(_HEADER, at):
            raise ValueError(f"quarantine file: no header at byte {at}")
        end = data.index(b"\n", at)
        header = msgspec.json.decode(data[at + len(_HEADER) : end], type=_Header)
        start = end + 1
        stop = start + header.length
        if data[stop : stop + 1] != b"\n":
            raise ValueError(f"quarantine file: piece at byte {start} is not {header.length} bytes and a line end")
        pieces.append((header.offset, data[start:stop]))
        at = stop + 1
    return pieces


def reconstruct(repaired: bytes, pieces: list[tuple[int, bytes]], added_newline: bool) -> bytes:
    """Put the quarantined pieces back at their offsets into the repaired bytes.

    ``added_newline``: the repair ended an unterminated last entry with ``\\n`` (that byte was
    not in the original).
    """
    kept = repaired[:-1] if added_newline and repaired.endswith(b"\n") else repaired
    out = bytearray()
    taken = 0  # bytes of ``kept`` copied so far
    for offset, piece in sorted(pieces, key=lambda p: p[0]):
        need = offset - len(out)
        out += kept[taken : taken + need]
        taken += need
        out += piece
    out += kept[taken:]
    return bytes(out)
