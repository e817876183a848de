"""Importing a real pi session: exact counts on the shared fixture, the mapping of every line type,
newer files' ids and compactions, damaged copies, and a real replay that no orphan tool call can jam."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.turns import split_turns
from aptmem.entries import Assistant, Compaction, Metadata, ToolCall, ToolResult, User
from aptmem.errors import CorruptTranscriptError, NotATranscriptError
from aptmem.ids import new_session_id
from aptmem.importers import detect_format, iter_entries
from aptmem.jsonl_store import JsonlStore
from aptmem.compaction.replay import replay
from aptmem.session import Session
from aptmem.tokens import get_estimator

ROOT = Path(__file__).resolve().parent.parent
PI = ROOT / "tests" / "fixtures" / "real" / "pi-large-session.jsonl"


@pytest.fixture(scope="module")
def imported() -> tuple[list, object]:
    scan = iter_entries("pi", PI)
    return list(scan), scan.report


def test_fixture_counts_are_exact(imported: tuple[list, object]) -> None:
    entries, report = imported
    assert (report.lines, report.good_lines, report.entries, len(entries)) == (1019, 1019, 1432, 1432)
    assert report.line_types == {"session": 1, "message:user": 88, "message:assistant": 453, "model_change": 1,
                                 "message:toolResult": 373, "thinking_level_change": 103}
    assert report.by_type == {"metadata": 127, "user": 88, "assistant": 453, "tool_call": 391, "tool_result": 373}
    assert report.metadata == {"session": 1, "stop": 22, "model_change": 1, "thinking_level_change": 103}
    # The one thinking block is on its reply, where a context counts it.
    (thought,) = [e for e in entries if isinstance(e, Assistant) and e.thinking]
    assert thought.thinking.startswith("The user wants me to use the thinking feature")
    assert report.skipped == {}
    assert (report.replies, report.requests_with_usage, report.requests_without_usage, report.compactions) == (453, 439, 14, 0)
    assert report.source_session_id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert not report.damaged and detect_format(PI) == "pi"


def test_mapping_of_the_first_lines(imported: tuple[list, object]) -> None:
    entries, _ = imported
    header, user, aborted, stop, change, ask, reply = entries[:7]
    assert isinstance(header, Metadata) and header.kind == "session" and header.data["modelId"] == "claude-sonnet-4-5"
    assert isinstance(user, User) and (user.content, user.id, user.ts) == ("/mode", "pi-2", 1763681581544)
    assert isinstance(aborted, Assistant) and aborted.usage == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    assert isinstance(stop, Metadata) and stop.data == {"stopReason": "aborted", "errorMessage": "Request was aborted"}
    assert isinstance(change, Metadata) and change.kind == "model_change" and change.data["provider"] == "anthropic"
    assert isinstance(ask, User) and ask.content.startswith("read packages/coding-agent/docs/theme.md")
    assert isinstance(reply, Assistant) and reply.model == "claude-sonnet-4-5" and reply.id == "pi-6"
    assert reply.usage == {"input": 3, "output": 191, "cacheRead": 0, "cacheWrite": 1684}  # the nested cost is left out
    calls = entries[7:10]
    assert [type(c) for c in calls] == [ToolCall] * 3
    assert calls[0].id == "toolu_017qEkVzzPb7b7o4FkgJLF23" and calls[0].args == {"path": "packages/coding-agent/docs/theme.md"}
    result = entries[10]
    assert isinstance(result, ToolResult) and result.call_id == calls[0].id and result.name == "read"
    assert result.content.startswith("# Pi Coding Agent Themes")


NEWER = [
    {"type": "session", "version": 3, "id": "2f5c4e8a-1b2c-4d3e-8f9a-0b1c2d3e4f5a", "timestamp": "2026-01-01T00:00:00.000Z",
     "cwd": "/w"},
    {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "xx"}],
                 "timestamp": 1767225601000}},
    {"type": "message", "id": "b2c3d4e5", "parentId": "a1b2c3d4", "timestamp": "2026-01-01T00:00:02.000Z",
     "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "s"},
                                                  {"type": "text", "text": " "}, {"type": "text", "text": "hi"}],
                 "usage": {"input": 10, "output": 2, "cacheRead": 100, "cacheWrite": 5, "totalTokens": 117,
                           "cost": {"total": 0.1}}, "stopReason": "stop", "model": "m"}},
    {"type": "compaction", "id": "c3d4e5f6", "parentId": "b2c3d4e5", "timestamp": "2026-01-01T00:00:03.000Z",
     "summary": "the story so far", "firstKeptEntryId": "b2c3d4e5", "tokensBefore": 150000},
    {"type": "message", "id": "d4e5f6a7", "timestamp": "2026-01-01T00:00:04.000Z",
     "message": {"role": "bashExecution", "command": "ls", "output": "a"}},
    {"type": "label", "id": "e5f6a7b8", "timestamp": "2026-01-01T00:00:05.000Z", "label": "x"},
    {"type": "something_new", "id": "f6a7b8c9", "timestamp": "2026-01-01T00:00:06.000Z"},
]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_newer_files_keep_their_ids_and_compactions(tmp_path: Path) -> None:
    scan = iter_entries("auto", _write(tmp_path / "new.jsonl", NEWER))
    entries = list(scan)
    kinds = [(type(e).__name__, getattr(e, "kind", None)) for e in entries]
    assert kinds == [("Metadata", "session"), ("User", None), ("Assistant", None), ("Compaction", None), ("User", None),
                     ("Metadata", "label"), ("Metadata", "unknown:something_new")]
    user, reply, compaction, bash = entries[1], entries[2], entries[3], entries[4]
    assert (user.id, user.content, user.ts) == ("a1b2c3d4", "hello\n[image]", 1767225601000)
    assert (reply.id, reply.content, reply.thinking, reply.usage["totalTokens"]) == ("b2c3d4e5", "hi", "hm", 117)
    assert (bash.id, bash.content) == ("d4e5f6a7", "Ran `ls`\n```\na\n```")  # the user text pi sends for it
    assert isinstance(compaction, Compaction)
    assert (compaction.id, compaction.first_kept, compaction.tokens_before, compaction.summary) == (
        "c3d4e5f6", "b2c3d4e5", 150000, "the story so far")
    assert scan.report.skipped == {"empty text block": 1} and scan.report.compactions == 1


def test_damaged_copies_import_as_far_as_good(tmp_path: Path) -> None:
    lines = PI.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines[:100]) + lines[100][:50])
    scan = iter_entries("pi", torn)
    entries = list(scan)
    assert scan.report.torn_tail_line == 101 and scan.report.damaged_lines == [] and scan.report.good_lines == 100
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"".join(lines[:50] + [b'{"type": "message", "message": {"role": "user", "cont\n'] + lines[50:]))
    scan = iter_entries("pi", garbage)
    assert len(list(scan)) == 1432 and scan.report.damaged_lines == [51]
    with pytest.raises(CorruptTranscriptError, match="garbage.jsonl:51"):
        list(iter_entries("pi", garbage, strict=True))
    assert len(entries) < 1432


def test_not_a_pi_transcript(tmp_path: Path) -> None:
    with pytest.raises(NotATranscriptError, match="session"):
        list(iter_entries("pi", ROOT / "tests" / "fixtures" / "real" / "claude-code-short.jsonl"))
    (tmp_path / "junk.jsonl").write_bytes(b"\x00\x01\x02 binary\n")
    with pytest.raises(NotATranscriptError, match="no good line"):
        detect_format(tmp_path / "junk.jsonl")
    done = subprocess.run([sys.executable, "-m", "aptmem", "import", "--from", "pi", str(tmp_path / "nope.jsonl"),
                           str(tmp_path / "d")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr


def test_an_orphan_tool_call_does_not_glue_the_rest_of_the_session_into_one_turn(imported: tuple[list, object]) -> None:
    entries, _ = imported
    # pi's errored reply at line 33 called 16 tools whose results never came: each later user
    # message must still start a turn, or a compaction could keep nothing but one giant "turn".
    assert len(split_turns(entries)) == 89  # 88 user messages, and the header before the first
    with tempfile.TemporaryDirectory() as root, JsonlStore(root) as store:
        session = Session(store, new_session_id(), policy=CompactionPolicy(window=32_000),
                          estimator=get_estimator("medium"), confirm=get_estimator("precise"))
        report, _ = replay(entries, session)
    assert (report.compactions, report.split_tool_pairs) == (8, 0)  # counted as rendered (ids and framing) since the provider renderings
    assert report.max_occupancy < 0.8


def _v1_with_compactions(path: Path, at: tuple[int, ...], keep_chars: int = 80_000, garbage_before: int | None = None) -> list[int]:
    """The real v1 fixture with a pi compaction line inserted after each line number in ``at``.

    Each compaction names its first kept entry by ``firstKeptEntryIndex`` as pi v1 did: walking back
    from the compaction over the message lines until about ``keep_chars`` characters (pi keeps
    20,000 tokens at 4 characters each) and cutting at a user or assistant message. Returns the
    indexes it named (over the written file's JSON lines, the header as 0).
    """
    source = [json.loads(line) for line in PI.read_text(encoding="utf-8").splitlines()]
    out: list[dict] = []
    named: list[int] = []
    for number, obj in enumerate(source, start=1):
        out.append(obj)
        if number in at:
            size, cut = 0, len(out) - 1
            while cut > 1 and size < keep_chars:
                cut -= 1
                size += len(json.dumps(out[cut].get("message", {}).get("content", "")))
            while out[cut].get("message", {}).get("role") not in ("user", "assistant"):
                cut += 1
            named.append(cut)
            out.append({"type": "compaction", "timestamp": obj["timestamp"], "summary": f"summary {len(named)}",
                        "firstKeptEntryIndex": cut, "tokensBefore": 100_000})
    lines = [json.dumps(o) for o in out]
    if garbage_before is not None:  # a damaged line: pi skips it, so the index counts only good lines
        lines.insert(garbage_before, '{"type": "message", "mess')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return named


def test_a_v1_compaction_names_its_first_kept_entry_by_index(tmp_path: Path) -> None:
    named = _v1_with_compactions(tmp_path / "v1.jsonl", at=(400, 800))
    scan = iter_entries("pi", tmp_path / "v1.jsonl")
    entries = list(scan)
    compactions = [e for e in entries if isinstance(e, Compaction)]
    assert len(compactions) == 2 and scan.report.compactions == 2 and scan.report.notes == []
    # No line has an id (v1): the kept entry is the one made from the named line (line number = index + 1).
    assert [c.first_kept for c in compactions] == [f"pi-{index + 1}" for index in named]
    first = next(e for e in entries if e.id == compactions[0].first_kept)
    assert isinstance(first, (User, Assistant))


def test_a_v1_index_counts_good_lines_only(tmp_path: Path) -> None:
    named = _v1_with_compactions(tmp_path / "v1.jsonl", at=(400,), garbage_before=100)
    scan = iter_entries("pi", tmp_path / "v1.jsonl")
    (compaction,) = [e for e in scan if isinstance(e, Compaction)]
    assert scan.report.damaged_lines == [101]
    # The named line moved one physical line down, behind the damaged one; it is still the one kept.
    assert compaction.first_kept == f"pi-{named[0] + 2}"


def test_a_pi_session_with_compactions_keeps_its_kept_entries_live_after_import(tmp_path: Path) -> None:
    from aptmem.importers import import_session
    from aptmem.tokens import count_entries

    _v1_with_compactions(tmp_path / "v1.jsonl", at=(400, 800))
    report = import_session("pi", tmp_path / "v1.jsonl", tmp_path / "sessions")
    entries = list(iter_entries("pi", tmp_path / "v1.jsonl"))
    latest = max(i for i, e in enumerate(entries) if isinstance(e, Compaction))
    start = next(i for i, e in enumerate(entries) if e.id == entries[latest].first_kept)
    expected = [entries[latest], *entries[start:latest], *entries[latest + 1 :]]
    with JsonlStore(tmp_path / "sessions") as store:
        live = store.read_live(report.session_id)
        assert live == expected
        precise = get_estimator("precise")
        kept = count_entries(precise, entries[start:latest])
        assert kept > 15_000  # about pi's 20,000 tokens of kept messages, live again
        session = Session(store, report.session_id, policy=CompactionPolicy(window=200_000), estimator=precise)
        assert session.tokens() == count_entries(precise, live)


def test_an_out_of_range_v1_index_keeps_only_what_follows(tmp_path: Path) -> None:
    lines = [{"type": "session", "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"},
             {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "a"}},
             {"type": "compaction", "timestamp": "2025-01-01T00:00:02Z", "summary": "s", "firstKeptEntryIndex": 7,
              "tokensBefore": 3},
             {"type": "compaction", "timestamp": "2025-01-01T00:00:03Z", "summary": "s", "firstKeptEntryIndex": 0,
              "tokensBefore": 3}]
    scan = iter_entries("pi", _write(tmp_path / "bad.jsonl", lines))
    assert [c.first_kept for c in scan if isinstance(c, Compaction)] == [None, None]
    assert len(scan.report.notes) == 2 and "firstKeptEntryIndex 7" in scan.report.notes[0]


@pytest.mark.parametrize(("message", "text"), [
    ({"command": "make", "output": "", "exitCode": 2}, "Ran `make`\n(no output)\n\nCommand exited with code 2"),
    ({"command": "sleep 9", "output": "z", "cancelled": True, "exitCode": 130}, "Ran `sleep 9`\n```\nz\n```\n\n(command cancelled)"),
    ({"command": "cat big", "output": "x", "exitCode": 0, "truncated": True, "fullOutputPath": "/tmp/o"},
     "Ran `cat big`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/o]"),
])
def test_bash_executions_are_the_user_text_pi_sends(tmp_path: Path, message: dict, text: str) -> None:
    lines = [{"type": "session", "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"},
             {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "bashExecution", **message}},
             {"type": "message", "timestamp": "2025-01-01T00:00:02Z",
              "message": {"role": "bashExecution", "command": "secret", "output": "x", "excludeFromContext": True}},
             {"type": "message", "timestamp": "2025-01-01T00:00:03Z",
              "message": {"role": "hookMessage", "customType": "t", "content": "from a hook", "display": False}},
             {"type": "custom_message", "timestamp": "2025-01-01T00:00:04Z", "customType": "t",
              "content": [{"type": "text", "text": "from an extension"}], "display": True}]
    _, bash, hidden, hook, custom = list(iter_entries("pi", _write(tmp_path / "bash.jsonl", lines)))
    assert isinstance(bash, User) and bash.content == text
    assert isinstance(hidden, Metadata) and hidden.kind == "message:bashExecution"  # `!!`: never sent
    assert isinstance(hook, User) and hook.content == "from a hook"
    assert isinstance(custom, User) and custom.content == "from an extension"
