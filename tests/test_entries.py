"""Typed entries: the original line format, unknown types kept verbatim, damage named, exact round trips."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.entries import (
    Assistant,
    Compaction,
    CompactionMarker,
    Metadata,
    ToolCall,
    ToolResult,
    UnknownEntry,
    User,
    decode_line,
    encode_entry,
    encode_line,
    entry_type,
)
from aptmem.errors import InvalidEntry


def test_original_design_lines_decode_as_written() -> None:
    lines = [line.encode() for line in (
        '{"type":"metadata","title":"bug hunt","created":1717000000000,"model":"claude-sonnet-4","ts":1717000000000}',
        '{"type":"user","content":"帮我看看这个 bug","ts":1717000000000}',
        '{"type":"assistant","content":"让我先读一下代码","ts":1717000001000}',
        '{"type":"tool_call","name":"read","args":{"path":"src/foo.ts"},"result":"...","ts":1717000002000}',
        '{"type":"tool_result","name":"read","content":"...","ts":1717000002001}',
        '{"type":"compaction_marker","summary":"...","ts":1717000003000}',
    )]
    entries = [decode_line(line) for line in lines]
    assert entries == [
        Metadata(title="bug hunt", created=1717000000000, model="claude-sonnet-4", ts=1717000000000),
        User(content="帮我看看这个 bug", ts=1717000000000),
        Assistant(content="让我先读一下代码", ts=1717000001000),
        ToolCall(name="read", args={"path": "src/foo.ts"}, result="...", ts=1717000002000),
        ToolResult(name="read", content="...", ts=1717000002001),  # names its tool, not a call id
        CompactionMarker(summary="...", ts=1717000003000),
    ]
    # And they encode back to the same entries (the fields in the library's order).
    assert [decode_line(encode_entry(e)) for e in entries] == entries
    assert encode_entry(entries[1]) == lines[1] and encode_entry(entries[3]) == lines[3]
    with pytest.raises(InvalidEntry, match="names the call it answers"):
        decode_line(b'{"type":"tool_result","content":"...","ts":1}')  # neither a call id nor a tool name
    with pytest.raises(InvalidEntry, match="call_id"):
        ToolResult(content="...", ts=1)


def test_extra_fields_on_known_types_are_allowed() -> None:
    entry = decode_line(b'{"type":"assistant","content":"ok","ts":5,"thinking":"hmm","tokens":{"in":3}}')
    assert entry == Assistant(content="ok", ts=5, thinking="hmm")  # thinking is a field now; tokens is not


def test_compaction_marker_reads_as_compaction_and_keeps_its_name() -> None:
    raw = b'{"type":"compaction_marker","summary":"so far","first_kept":"e9","ts":7}'
    entry = decode_line(raw)
    assert isinstance(entry, Compaction) and isinstance(entry, CompactionMarker)
    assert entry.summary == "so far" and entry.first_kept == "e9"
    assert entry_type(entry) == "compaction_marker"
    assert encode_entry(entry) == raw


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"future_kind","ts":3,"payload":{"a":[1,2,3]},"z":null}',
        b'{ "type" : "x" ,\t"weird spacing": 1.50 }',
        b'{"type":"big","n":' + b"9" * 400 + b"}",
        '{"type":"emoji","s":"\\ud83d\\ude00 😀 帮"}'.encode(),
    ],
)
def test_unknown_type_is_kept_byte_for_byte(raw: bytes) -> None:
    entry = decode_line(raw)
    assert isinstance(entry, UnknownEntry)
    assert encode_entry(entry) == raw
    assert encode_line(entry) == raw + b"\n"


def test_unknown_type_exposes_ts_and_id_when_present() -> None:
    entry = decode_line(b'{"type":"x","ts":12,"id":"abc"}')
    assert isinstance(entry, UnknownEntry)
    assert (entry.type, entry.ts, entry.id) == ("x", 12, "abc")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[1, 2]", "not a JSON object (a JSON array)"),
        (b'"user"', "not a JSON object (a JSON string)"),
        (b"42", "not a JSON object (a JSON number)"),
        (b'{"content":"no type","ts":1}', "no string 'type' field"),
        (b'{"type":7,"ts":1}', "no string 'type' field"),
        (b'{"type":"user","ts":1}', "invalid 'user' entry"),
        (b'{"type":"user","content":"x","ts":"yesterday"}', "invalid 'user' entry"),
        (b'{"type":"user","content":"x"', "not valid JSON"),
        (b"\x00\x00\x00", "not valid JSON"),
        (b'{"type":"user","content":"x","ts":1}{"type":"user"', "not valid JSON"),
    ],
)
def test_damage_is_named(raw: bytes, reason: str) -> None:
    with pytest.raises(InvalidEntry, match=reason.replace("(", r"\(").replace(")", r"\)")):
        decode_line(raw)


def test_entry_type_tags() -> None:
    assert [entry_type(e) for e in (User(content="", ts=0), Assistant(ts=0), ToolCall(name="n", ts=0),
            ToolResult(call_id="c", ts=0), Compaction(ts=0), Metadata(ts=0))] == [
        "user", "assistant", "tool_call", "tool_result", "compaction", "metadata"]


def test_unencodable_value_is_invalid_entry() -> None:
    with pytest.raises(InvalidEntry):
        encode_line(ToolCall(name="n", ts=0, args={"x": object()}))


# -- property: every entry kind round-trips exactly ------------------------------------------------

text = st.text(max_size=60)
ids = st.none() | st.text(min_size=1, max_size=12)
ts = st.integers(min_value=0, max_value=2**53)
json_scalar = st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | text | st.floats(allow_nan=False, allow_infinity=False)
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4), max_leaves=12)
json_object = st.dictionaries(text, json_value, max_size=5)

entries = st.one_of(
    st.builds(User, content=text, ts=ts, id=ids),
    st.builds(Assistant, content=text, ts=ts, id=ids, model=st.none() | text,
              usage=st.none() | st.dictionaries(text, st.integers(min_value=0, max_value=10**9), max_size=4)),
    st.builds(ToolCall, name=text, args=json_object, result=st.none() | text, ts=ts, id=ids),
    st.builds(ToolResult, call_id=text, content=text, name=st.none() | text, is_error=st.booleans(), ts=ts, id=ids),
    st.builds(Compaction, summary=text, first_kept=st.none() | text, tokens_before=st.none() | st.integers(0, 10**7),
              tokens_after=st.none() | st.integers(0, 10**7), notes=st.lists(text, max_size=3), ts=ts, id=ids),
    st.builds(CompactionMarker, summary=text, first_kept=st.none() | text, ts=ts, id=ids),
    st.builds(Metadata, kind=text, data=json_object, ts=ts, id=ids),
)


@settings(max_examples=300, deadline=None)
@given(entries)
def test_round_trip_is_exact_for_every_kind(entry: object) -> None:
    line = encode_line(entry)  # type: ignore[arg-type]
    assert line.endswith(b"\n") and line.count(b"\n") == 1, "a line holds exactly one entry"
    back = decode_line(line[:-1])
    assert back == entry
    assert type(back) is type(entry)
    assert encode_line(back) == line


@settings(max_examples=200, deadline=None)
@given(json_object, st.text(min_size=1, max_size=20).filter(lambda t: t not in {
    "user", "assistant", "tool_call", "tool_result", "compaction", "compaction_marker", "metadata"}))
def test_round_trip_of_unknown_types_is_byte_exact(body: dict, kind: str) -> None:
    raw = msgspec.json.encode({**body, "type": kind})
    entry = decode_line(raw)
    assert isinstance(entry, UnknownEntry) and entry.type == kind
    assert encode_line(entry) == raw + b"\n"


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200) | st.builds(lambda a, b: a + b, st.sampled_from([b"1", b"[", b'{"type":', b'{"type":"user"', b"{"]), st.binary(max_size=50)))
def test_any_bytes_decode_to_an_entry_or_invalid_entry(raw: bytes) -> None:
    try:
        entry = decode_line(raw)
    except InvalidEntry:
        return
    assert encode_entry(entry) is not None


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000, b'{"type":"x","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                                 b'{"type":"user","content":"x","ts":' + b"9" * 10_000 + b"}"])
def test_hostile_json_is_damage_or_kept_never_a_crash(raw: bytes) -> None:
    try:
        decode_line(raw)
    except InvalidEntry as exc:
        assert str(exc)
