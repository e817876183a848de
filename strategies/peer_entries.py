"""aptmem entries as plain JSON fields, for the peer stores that hold messages of their own types.

A peer store (LangChain's message history, the OpenAI Agents SDK's session, ...) keeps messages
in its library's own shape. Each peer module maps an entry onto that shape by hand, field by
field; this module gives it the two ends of that mapping:

* :func:`entry_fields`: the entry as aptmem encodes it, decoded to a ``dict`` of JSON values. The
  encode is aptmem's own, so an entry aptmem refuses (an ``object()`` in ``args``, an integer no
  reader can read back) is refused here too, before the peer is touched; and the values are
  already what JSON can hold.
* :func:`entry_from_fields`: back from such a ``dict`` (rebuilt from the peer's fields plus the
  extras the peer could not hold) to the typed entry.

An :class:`~aptmem.entries.UnknownEntry` has no fields to map: its exact bytes travel as a string
(:func:`unknown_text`, :func:`unknown_from_text`), so it comes back byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from aptmem.entries import Entry, KnownEntry, UnknownEntry, decode_line, encode_entry
from aptmem.errors import InvalidEntry

__all__ = ["EXTRAS_KEY", "entry_fields", "entry_from_fields", "extras_of", "unknown_text", "unknown_from_text"]

#: The key under which a peer message carries the aptmem fields its own shape cannot hold.
EXTRAS_KEY = "aptmem"

_fields_decoder = msgspec.json.Decoder(dict[str, Any])


def entry_fields(entry: KnownEntry) -> dict[str, Any]:
    """Return a known entry's fields as aptmem writes them (``type`` included, defaults left out).

    Raises :class:`InvalidEntry` when aptmem cannot encode the entry.
    """
    return _fields_decoder.decode(encode_entry(entry))


def extras_of(fields: dict[str, Any], held: Iterable[str]) -> dict[str, Any]:
    """The fields a peer's message does not hold natively: every key of ``fields`` not in ``held``.

    ``type`` is always kept, so the entry's exact kind (``compaction`` or the legacy
    ``compaction_marker``, both a summary to the peer) comes back.
    """
    skip = set(held) - {"type"}
    return {key: value for key, value in fields.items() if key not in skip}


def entry_from_fields(fields: dict[str, Any], where: str) -> Entry:
    """Rebuild the typed entry from its fields; ``where`` names the message for the error.

    Raises :class:`InvalidEntry` when the fields are not a valid entry (a message damaged or
    written by someone else).
    """
    try:
        return decode_line(msgspec.json.encode(fields))
    except (TypeError, msgspec.EncodeError) as exc:
        raise InvalidEntry(f"{where}: fields are not JSON values ({exc})") from None
    except InvalidEntry as exc:
        raise InvalidEntry(f"{where}: {exc}") from None


def unknown_text(entry: UnknownEntry) -> str:
    """The exact bytes of an unknown entry as text (they are valid JSON, hence valid UTF-8)."""
    return entry.raw.decode("utf-8")


def unknown_from_text(text: str, where: str) -> Entry:
    """Read back an unknown entry stored by :func:`unknown_text`, byte for byte."""
    if not isinstance(text, str):
        raise InvalidEntry(f"{where}: the stored raw entry is not a string")
    return entry_from_raw(text.encode("utf-8"), where)


def entry_from_raw(raw: bytes, where: str) -> Entry:
    """Decode one stored line of aptmem's own encoding, naming ``where`` in the error."""
    try:
        return decode_line(raw)
    except InvalidEntry as exc:
        raise InvalidEntry(f"{where}: {exc}") from None
