"""A session as one JSON array of entries: encode it in one pass, decode it with a precise error.

Encoding is one msgspec encode of the list. Known entries are msgspec Structs and encode
natively; an :class:`~aptmem.entries.UnknownEntry` is handed to msgspec as ``msgspec.Raw`` of
its original bytes (through the encoder's ``enc_hook``), so it is spliced into the array
byte-for-byte in the same pass, with no second join over the output.

Decoding first splits the array into ``msgspec.Raw`` elements (one validating pass over the
bytes), then decodes each element as a log line would be, so an unknown type keeps its exact
bytes. Damage raises :class:`~aptmem.errors.CorruptLogError` with the byte offset, its line
number and the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from aptmem.entries import Entry, UnknownEntry, decode_line
from aptmem.errors import CorruptLogError, InvalidEntry

__all__ = ["decode_array", "encode_array_into"]


def _enc_hook(obj: Any) -> Any:
    """Splice an unknown entry's original bytes into the array; refuse anything else unknown."""
    if isinstance(obj, UnknownEntry):
        return msgspec.Raw(obj.raw)
    raise TypeError(f"cannot encode objects of type {type(obj).__name__}")


# One reused encoder and decoder. The encoder's settings match aptmem.entries' encoder (the
# defaults), so an entry encodes to the same bytes in an array as on a log line.
_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)
_elements = msgspec.json.Decoder(list[msgspec.Raw])
_BYTE_AT = re.compile(r"\(byte (\d+)\)")


def encode_array_into(entries: Sequence[Entry], buffer: bytearray) -> None:
    """Encode ``entries`` as one JSON array into ``buffer`` (resized to fit), in one pass.

    Raises :class:`InvalidEntry` when an entry cannot be encoded; ``buffer`` then holds garbage.
    """
    try:
        _encoder.encode_into(entries, buffer)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidEntry(f"cannot encode the session: {exc}") from exc


def decode_array(path: str, data: bytes) -> list[Entry]:
    """Decode a whole session file's bytes into its entries, oldest first.

    Raises :class:`CorruptLogError` naming ``path``, the line and byte offset of the damage,
    and the reason: an empty file, a torn (unterminated) array, malformed JSON, a top-level value
    that is not an array, or an element that is not a valid entry.
    """
    try:
        raws = _elements.decode(data)
    except msgspec.ValidationError as exc:
        # Valid JSON, but not an array: point at the top-level value.
        offset = len(data) - len(data.lstrip())
        raise _damage(path, data, offset, f"not a JSON array of entries ({exc})") from None
    except msgspec.DecodeError as exc:
        raise _located(path, data, str(exc)) from None
    entries: list[Entry] = []
    for index, raw in enumerate(raws):
        try:
            entries.append(decode_line(raw))
        except InvalidEntry as exc:
            offset = _element_offset(data, raws, index)
            raise _damage(path, data, offset, f"element {index + 1} of the array: {exc}") from None
    return entries


def _located(path: str, data: bytes, message: str) -> CorruptLogError:
    """Turn msgspec's decode error into a located one; an input cut short is a torn array."""
    if not data.strip():
        return _damage(path, data, len(data), "empty file: no JSON array (cut before it was written?)")
    match = _BYTE_AT.search(message)
    if match is None:
        # msgspec says "Input data was truncated" without a position: the damage is the end.
        return _damage(path, data, len(data), f"torn JSON array: the file ends before the array is closed ({message})")
    return _damage(path, data, int(match.group(1)), message)


def _element_offset(data: bytes, raws: list[msgspec.Raw], index: int) -> int:
    """Find where element ``index`` starts (only on the error path: it scans the elements before).

    Between two elements there is only a comma and whitespace, so searching for each element's
    bytes from the end of the one before finds exactly that element.
    """
    cursor = 0
    for position in range(index + 1):
        piece = bytes(raws[position])
        found = data.find(piece, cursor)
        if found < 0:  # pragma: no cover - the raw bytes are a slice of data
            return cursor
        if position == index:
            return found
        cursor = found + len(piece)
    return cursor  # pragma: no cover


def _damage(path: str, data: bytes, offset: int, reason: str) -> CorruptLogError:
    """Build the error for damage at byte ``offset`` of ``data`` (line numbers are 1-based)."""
    line = data.count(b"\n", 0, offset) + 1
    return CorruptLogError(path, line, offset, reason)
