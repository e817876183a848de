"""Typed session entries: a tagged union of msgspec Structs, one JSON object per line.

The line format of the original design is valid input exactly as written there::

    {"type":"metadata","title":"bug hunt","created":1717000000000,"model":"claude-sonnet-4","ts":1717000000000}
    {"type":"user","content":"帮我看看这个 bug","ts":1717000000000}
    {"type":"assistant","content":"让我先读一下代码","ts":1717000001000}
    {"type":"tool_call","name":"read","args":{"path":"src/foo.ts"},"result":"...","ts":1717000002000}
    {"type":"tool_result","name":"read","content":"...","ts":1717000002001}
    {"type":"compaction_marker","summary":"...","ts":1717000003000}

Which call a tool result answers (:mod:`aptmem.context.pairing` applies the rule everywhere: in
the rendered context, in turn boundaries, in compaction's "never split a call from its result"):

* a ``tool_result`` with a ``call_id`` answers the latest earlier ``tool_call`` with that ``id``
  that no result has answered yet (so agents that number calls per turn, ``call_0``, ``call_1``,
  ..., and an aborted call do not tie one turn to the next);
* a ``tool_result`` without a ``call_id`` names its tool instead (the original design's lines):
  it answers the latest earlier ``tool_call`` of that ``name`` that no result has answered yet;
* a call's inline ``result`` does not count as an answer for this rule: the original design
  writes a call with its inline result and then a ``tool_result`` naming the tool, both about
  the one call. A call that no result answers is sent with its inline result as its answer;
* an answer only ever counts after its call; a result that finds no call is sent on its own.

Rules that keep stored data safe:

* Every entry has ``ts`` (milliseconds since the epoch). New fields only ever come with defaults,
  so old lines keep decoding.
* Fields a known entry type does not declare are tolerated on read. The JSONL log never
  re-encodes a line it read (repairs move raw bytes), so such fields survive on disk.
* A line of valid JSON whose ``type`` is not one we know is kept as :class:`UnknownEntry` and
  written back byte-for-byte.
* A line that is not a JSON object, has no string ``type``, or whose fields do not fit its type,
  is damage (:class:`~aptmem.errors.InvalidEntry` with the reason).
* ``compaction_marker`` (the original design's name) reads as a :class:`Compaction` entry and is
  written back under its own name.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Union

import msgspec

from aptmem.errors import InvalidEntry
from aptmem.jsonvalue import MAX_INT_DIGITS

__all__ = [
    "Assistant",
    "Compaction",
    "CompactionMarker",
    "Entry",
    "KNOWN_TYPES",
    "Metadata",
    "ToolCall",
    "ToolResult",
    "UnknownEntry",
    "User",
    "decode_line",
    "encode_entry",
    "encode_line",
    "encode_line_into",
    "entry_type",
    "now_ms",
]


def now_ms() -> int:
    """Return the current wall-clock time in whole milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


class _Base(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True):
    """Fields every entry has: a timestamp in ms since the epoch, an optional id."""

    ts: int
    id: str | None = None


class User(_Base, tag="user"):
    """A message from the user."""

    content: str


class Assistant(_Base, tag="assistant"):
    """A reply from the model. ``usage`` holds provider-reported token counts when known.

    ``thinking`` is the reply's reasoning text as the provider showed it (thinking blocks joined
    by blank lines; "" when there was none or it was hidden). Providers bill it like text when it
    is sent back; it may be a summary of a longer reasoning the reply's output tokens count.
    """

    content: str = ""
    model: str | None = None
    usage: dict[str, int] | None = None
    thinking: str = ""


class ToolCall(_Base, tag="tool_call"):
    """A tool invocation by the model.

    ``result`` is the original design's inline result; newer writers use a separate
    :class:`ToolResult` that names this call by ``id``.
    """

    name: str
    args: dict[str, Any] = {}
    result: str | None = None


class ToolResult(_Base, tag="tool_result"):
    """The output of a tool call.

    ``call_id`` names the :class:`ToolCall` it answers; the original design's lines name only the
    tool (``name``), and then the result answers the latest unanswered call of that name (the
    rule is in this module's docstring). One of the two is required.
    """

    call_id: str | None = None
    content: str = ""
    name: str | None = None
    is_error: bool = False

    def __post_init__(self) -> None:
        if self.call_id is None and self.name is None:
            raise InvalidEntry("a tool_result names the call it answers ('call_id') or its tool ('name')")


class Compaction(_Base, tag="compaction"):
    """A compaction: the summary of everything before the entries it keeps.

    The live context of a session is this entry, then the entries it keeps, then all after it.
    Which entries it keeps is named by position, whatever the entries carry (ids or not):
    ``kept_before`` is how many entries standing just before it in the session are kept
    (other compaction entries among them are skipped, not counted), as an appended
    compaction leaves them; 0 for a rewritten one, whose kept entries follow it. Older writers
    (and importers) leave ``kept_before`` None and name the first kept entry by its id in
    ``first_kept`` instead; ``first_kept`` None too means: only what follows this entry is live.
    """

    summary: str = ""
    first_kept: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    notes: list[str] = []
    #: entries summarized by this compaction, and turns kept verbatim
    summarized: int | None = None
    kept_turns: int | None = None
    #: kept entries shown shortened in the live context: entry id -> characters kept. The full
    #: entry stays on disk (an appended compaction never rewrites history).
    truncated: dict[str, int] = {}
    #: the position of the entries this compaction keeps (see the class docstring)
    kept_before: int | None = None
    #: kept entries shown shortened, by position: index in the live context after this entry
    #: (0 is the first kept entry) -> characters kept. Written instead of ``truncated``, so an
    #: entry without an id can be shortened too; the entry stays whole on disk.
    truncated_at: dict[int, int] = {}


class CompactionMarker(Compaction, tag="compaction_marker"):
    """The original design's name for a compaction line; reads and behaves as :class:`Compaction`."""


class Metadata(_Base, tag="metadata"):
    """Facts about the session that are not conversation: model changes, headers, imports.

    ``title``, ``created`` (ms since the epoch) and ``model`` stand at the top level of the line,
    as the original design writes its metadata lines; ``kind`` and ``data`` carry the rest.
    """

    kind: str = ""
    data: dict[str, Any] = {}
    title: str | None = None
    created: int | None = None
    model: str | None = None


class UnknownEntry:
    """A line of valid JSON with a ``type`` this version does not know, kept verbatim.

    ``raw`` is the line's bytes without its line ending; it is written back unchanged.
    """

    __slots__ = ("raw", "type", "ts", "id")

    def __init__(self, raw: bytes, type: str, ts: int | None = None, id: str | None = None) -> None:
        self.raw = bytes(raw)
        self.type = type
        self.ts = ts
        self.id = id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnknownEntry) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"UnknownEntry(type={self.type!r}, raw={self.raw[:60]!r}{'...' if len(self.raw) > 60 else ''})"


KnownEntry = Union[User, Assistant, ToolCall, ToolResult, Compaction, CompactionMarker, Metadata]
Entry = Union[KnownEntry, UnknownEntry]

KNOWN_TYPES: frozenset[str] = frozenset(
    {"user", "assistant", "tool_call", "tool_result", "compaction", "compaction_marker", "metadata"}
)

# One reused encoder and decoder: building them per call costs more than encoding a line.
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(KnownEntry)


class _Probe(msgspec.Struct):
    """The fields of an unknown line we look at: enough to keep it and to order it."""

    type: str
    ts: Any = None
    id: Any = None


_probe_decoder = msgspec.json.Decoder(_Probe)


def encode_entry(entry: Entry) -> bytes:
    """Encode an entry as one JSON object, without a line ending."""
    if isinstance(entry, UnknownEntry):
        return entry.raw
    try:
        data = _encoder.encode(entry)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _encode_failed(entry, exc) from exc
    if len(data) > MAX_INT_DIGITS:
        _check_long_ints(entry, data)
    return data


def encode_line(entry: Entry) -> bytes:
    """Encode an entry as one whole log line, ending in ``\\n``."""
    if isinstance(entry, UnknownEntry):
        return entry.raw + b"\n"
    try:
        # encode() then one concatenation: about half the cost of encode_into() an empty
        # bytearray, which grows it several times for a long entry.
        out = _encoder.encode(entry)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _encode_failed(entry, exc) from exc
    if len(out) > MAX_INT_DIGITS:
        _check_long_ints(entry, out)
    return out + b"\n"


def encode_line_into(entry: Entry, buffer: bytearray) -> bytearray:
    """Encode an entry as one whole line into ``buffer`` (replacing its content); return it.

    The hot path of an append: reusing one buffer saves an allocation and a copy per line.
    """
    if isinstance(entry, UnknownEntry):
        buffer[:] = entry.raw
    else:
        try:
            _encoder.encode_into(entry, buffer)  # truncates the buffer to the message
        except (TypeError, ValueError, OverflowError) as exc:
            raise _encode_failed(entry, exc) from exc
        if len(buffer) > MAX_INT_DIGITS:  # only a line this long can hold an unreadable integer
            _check_long_ints(entry, buffer)
    buffer.append(0x0A)
    return buffer


#: Settings of ``sys.set_int_max_str_digits`` under which msgspec writes only integers it reads back.
_SAFE_INT_LIMITS = range(1, MAX_INT_DIGITS + 1)


def _encode_failed(entry: Entry, exc: Exception) -> InvalidEntry:
    """The error for an entry msgspec cannot encode (not Python's advice to raise the int limit)."""
    if "integer string conversion" in str(exc):
        return InvalidEntry(f"cannot encode {type(entry).__name__}: an integer longer than {MAX_INT_DIGITS} digits "
                            "cannot be read back (store it as a string)")
    return InvalidEntry(f"cannot encode {type(entry).__name__}: {exc}")


def _check_long_ints(entry: Entry, data: bytes | bytearray) -> None:
    """Refuse a line holding an integer msgspec's decoder cannot read (over 4,300 digits).

    msgspec's encoder follows ``sys.set_int_max_str_digits`` but its decoder does not: a process
    that raised the limit could write a line no reader can decode, losing the entry on read. Only
    then (a rare setting, and a long line) is the line decoded back to check.
    """
    if sys.get_int_max_str_digits() in _SAFE_INT_LIMITS:
        return
    try:
        msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidEntry(f"cannot encode {type(entry).__name__}: it would hold a number no reader can read "
                           f"back ({exc}); integers may have at most {MAX_INT_DIGITS} digits") from None


def decode_line(raw: bytes | bytearray | memoryview) -> Entry:
    """Decode one line (without its line ending) into an entry.

    Raises :class:`InvalidEntry` with the reason when the line is damage.
    """
    try:
        return _decode(raw)
    except RecursionError:
        # msgspec refuses nesting deeper than the interpreter allows; such a line is damage.
        raise InvalidEntry("JSON nested too deeply") from None


def _decode(raw: bytes | bytearray | memoryview) -> Entry:
    """:func:`decode_line` without the nesting guard."""
    try:
        return _decoder.decode(raw)
    except msgspec.ValidationError as exc:
        typed_error = exc
    except msgspec.DecodeError as exc:
        raise InvalidEntry(f"not valid JSON ({exc})") from None
    # The typed decode refused the value (the rest may still be malformed): tell an unknown
    # type (kept) from damage.
    try:
        probe = _probe_decoder.decode(raw)
    except msgspec.ValidationError:
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:  # e.g. a number followed by garbage
            raise InvalidEntry(f"not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise InvalidEntry(f"not a JSON object (a JSON {_json_kind(value)})") from None
        raise InvalidEntry("no string 'type' field") from None
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError: this clause comes second
        raise InvalidEntry(f"not valid JSON ({exc})") from None
    if probe.type in KNOWN_TYPES:
        raise InvalidEntry(f"invalid {probe.type!r} entry: {typed_error}") from None
    ts = probe.ts if isinstance(probe.ts, int) and not isinstance(probe.ts, bool) else None
    ident = probe.id if isinstance(probe.id, str) else None
    return UnknownEntry(bytes(raw), probe.type, ts, ident)


def entry_type(entry: Entry) -> str:
    """Return the ``type`` tag an entry is written with."""
    if isinstance(entry, UnknownEntry):
        return entry.type
    return type(entry).__struct_config__.tag  # type: ignore[return-value]


def _json_kind(value: object) -> str:
    """Name the JSON kind of a decoded value, for error messages."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
