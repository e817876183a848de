"""Importing real Claude Code transcripts: exact counts on the shared fixtures, merged replies, compactions,
damaged copies (torn tail, garbage line, truncated multi-line reply), foreign files, and the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.entries import Assistant, Compaction, Metadata, ToolCall, ToolResult, User, encode_line
from aptmem.errors import NotATranscriptError
from aptmem.importers import ImportReport, import_session, iter_entries
from aptmem.jsonl_store import JsonlStore
from aptmem.working_memory import WorkingMemory

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"

#: file -> (source lines, entries, by type, metadata kinds, skipped, replies, merged, continued, requests with usage)
EXPECTED = {
    "claude-code-short.jsonl": (
        15, 10, {"metadata": 3, "user": 2, "assistant": 1, "tool_call": 2, "tool_result": 2},
        {"session": 1, "system": 2},
        {"file-history-snapshot": 1, "progress:hook_progress": 3, "empty text block": 1}, 1, 4, 0, 1),
    "claude-code-tool_heavy.jsonl": (
        39, 26, {"metadata": 3, "user": 7, "assistant": 4, "tool_call": 6, "tool_result": 6},
        {"session": 1, "system": 2},
        {"file-history-snapshot": 3, "progress:hook_progress": 10, "queue-operation": 2, "empty text block": 1},
        4, 4, 1, 4),
    "claude-code-subagent.jsonl": (
        96, 69, {"metadata": 21, "user": 4, "assistant": 12, "tool_call": 16, "tool_result": 16},
        {"session": 1, "subagent": 19, "system": 1},
        {"file-history-snapshot": 3, "progress:hook_progress": 25, "empty text block": 1}, 12, 15, 1, 12),
}


def scan(path: Path) -> tuple[list, ImportReport]:
    """Every entry of a transcript and the report."""
    it = iter_entries("claude-code", path)
    return list(it), it.report


def aptmem(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aptmem`` for real."""
    return subprocess.run([sys.executable, "-m", "aptmem", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def copy(name: str, tmp_path: Path) -> Path:
    """A writable copy of a fixture (the fixtures themselves are never changed)."""
    target = tmp_path / name
    target.write_bytes((FIXTURES / name).read_bytes())
    return target


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_counts_are_exact(name: str) -> None:
    lines, n, by_type, kinds, skipped, replies, merged, continued, usage = EXPECTED[name]
    entries, report = scan(FIXTURES / name)
    assert (report.lines, report.good_lines, report.entries, len(entries)) == (lines, lines, n, n)
    assert (report.by_type, report.metadata, report.skipped) == (by_type, kinds, skipped)
    assert (report.replies, report.merged_lines, report.continued_lines) == (replies, merged, continued)
    assert (report.requests_with_usage, report.requests_without_usage, report.compactions) == (usage, 0, 0)
    assert not report.damaged and report.damage_reasons == []
    # Every line is accounted for: it produced entries, or it was skipped and counted.
    assert sum(report.line_types.values()) == lines


def test_a_reply_over_several_lines_is_one_assistant_with_its_thinking_then_its_tool_calls() -> None:
    entries, _ = scan(FIXTURES / "claude-code-short.jsonl")
    kinds = [type(e).__name__ for e in entries[:8]]
    assert kinds == ["Metadata", "User", "Assistant", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "User"]
    reply = entries[2]
    assert isinstance(reply, Assistant) and reply.id == "1b7d717f-d6a2-46a6-8575-fa4f937450ea"  # the reply's first line
    assert reply.content == "Let me check the project structure and try running the server to see the error."
    assert reply.model == "claude-opus-4-6"
    assert reply.usage == {"input_tokens": 3, "cache_creation_input_tokens": 13835, "cache_read_input_tokens": 11515,
                           "output_tokens": 13}
    assert reply.thinking.startswith("The user is having trouble starting their Phoenix server")
    calls = [e for e in entries if isinstance(e, ToolCall)]
    results = [e for e in entries if isinstance(e, ToolResult)]
    assert [c.id for c in calls] == ["toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "toolu_01FdQ8qTyVyZjE3Kw4dguQGx"]
    assert calls[0].args == {"command": "mix phx.server 2>&1 | head -80", "timeout": 30000}
    assert [(r.call_id, r.name, r.is_error) for r in results] == [(c.id, c.name, True) for c in calls]
    assert entries[0].data["sessionId"] == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert reply.ts == 1770757919186  # 2026-02-10T21:11:59.186Z


def test_a_reply_continued_after_its_tool_result_keeps_every_call_before_its_result() -> None:
    entries, report = scan(FIXTURES / "claude-code-tool_heavy.jsonl")
    assert report.continued_lines == 1
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, ToolCall):
            seen.add(entry.id or "")
        if isinstance(entry, ToolResult):
            assert entry.call_id in seen, f"result {entry.id} before its call"
    tail = [type(e).__name__ for e in entries[-6:]]
    assert tail == ["Assistant", "ToolCall", "ToolResult", "ToolCall", "ToolResult", "User"]
    assert entries[-3].id == "toolu_017Q5Sr8KaSgowYhbKXBnfV2"  # WebFetch, written after the Read's result


def _line(**fields: object) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def test_compact_boundary_and_summary_become_metadata_and_a_compaction(tmp_path: Path) -> None:
    path = copy("claude-code-short.jsonl", tmp_path)
    with path.open("ab") as fh:
        fh.write(_line(type="system", subtype="compact_boundary", content="Conversation compacted", uuid="b-1",
                       timestamp="2026-02-10T21:20:00.000Z", compactMetadata={"trigger": "auto", "preTokens": 155123},
                       sessionId="55604662-cf2a-4331-851a-ec234028f8ca"))
        fh.write(_line(type="user", uuid="s-1", timestamp="2026-02-10T21:20:01.000Z", isCompactSummary=True,
                       message={"role": "user", "content": "This session is being continued. Summary: ..."}))
        fh.write(_line(type="user", uuid="u-9", timestamp="2026-02-10T21:20:02.000Z",
                       message={"role": "user", "content": "go on"}))
    entries, report = scan(path)
    boundary, summary, after = entries[-3:]
    assert isinstance(boundary, Metadata) and boundary.kind == "compact_boundary"
    assert boundary.data["compactMetadata"]["preTokens"] == 155123
    assert isinstance(summary, Compaction) and summary.id == "s-1" and summary.tokens_before == 155123
    assert summary.summary.startswith("This session is being continued") and summary.first_kept is None
    assert isinstance(after, User) and after.content == "go on"
    assert report.compactions == 1 and report.metadata["compact_boundary"] == 1


def test_torn_tail_is_imported_as_far_as_good_and_reported(tmp_path: Path) -> None:
    path = copy("claude-code-short.jsonl", tmp_path)
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last + 40])  # the last line cut after 40 bytes
    entries, report = scan(path)
    assert report.torn_tail_line == 15 and report.torn_tail_bytes == 40 and report.damaged_lines == []
    assert report.damaged and report.entries == len(entries) == 9  # the last system line is gone
    assert report.damage_reasons[0].startswith("line 15: torn write")


def test_a_garbage_line_in_the_middle_is_skipped_and_everything_after_it_kept(tmp_path: Path) -> None:
    path = copy("claude-code-short.jsonl", tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:7] + [b"\x00garbage{not json\n", b"[1, 2]\n"] + lines[7:]))
    entries, report = scan(path)
    assert report.damaged_lines == [8, 9] and report.torn_tail_line is None
    assert "not valid JSON" in report.damage_reasons[0] and "not a JSON object" in report.damage_reasons[1]
    assert report.entries == len(entries) == 10  # nothing good was lost
    assert report.merged_lines == 4  # the reply's lines around the garbage still merge


def test_a_truncated_multi_line_reply_keeps_what_was_written(tmp_path: Path) -> None:
    path = copy("claude-code-short.jsonl", tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:7]) + lines[7][:100])  # text and thinking written, the tool_use line torn
    entries, report = scan(path)
    assert report.torn_tail_line == 8 and report.replies == 1 and report.merged_lines == 2
    assert [type(e).__name__ for e in entries] == ["Metadata", "User", "Assistant"]
    assert entries[2].content.startswith("Let me check") and entries[2].usage["input_tokens"] == 3
    assert entries[2].thinking.startswith("The user is having trouble")


def test_an_invalid_claude_code_line_is_damage_not_a_crash(tmp_path: Path) -> None:
    path = copy("claude-code-short.jsonl", tmp_path)
    with path.open("ab") as fh:
        fh.write(_line(type="assistant", uuid="x", message={"role": "assistant", "content": 42}))
        fh.write(_line(type="user", uuid="y"))
        fh.write(_line(type="brand-new-kind", uuid="z", value=1))
    entries, report = scan(path)
    assert report.damaged_lines == [16, 17]
    assert isinstance(entries[-1], Metadata) and entries[-1].kind == "unknown:brand-new-kind"
    assert entries[-1].data["value"] == 1


def test_a_foreign_file_is_not_a_transcript_and_nothing_is_written(tmp_path: Path) -> None:
    aptmem_log = tmp_path / "aptmem.jsonl"
    aptmem_log.write_bytes(encode_line(User(ts=1, content="hi")))
    for bad in (aptmem_log, FIXTURES / "pi-large-session.jsonl", tmp_path):
        with pytest.raises(NotATranscriptError):
            import_session("claude-code", bad, tmp_path / "dest")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(NotATranscriptError, match="empty file"):
        import_session("claude-code", tmp_path / "empty.jsonl", tmp_path / "dest")
    assert not (tmp_path / "dest").exists() or not any((tmp_path / "dest").iterdir())


def test_import_session_writes_a_session_that_reads_back_the_same_entries(tmp_path: Path) -> None:
    src = FIXTURES / "claude-code-subagent.jsonl"
    report = import_session("claude-code", src, tmp_path)
    with JsonlStore(tmp_path) as store:
        assert list(store.iter_entries(report.session_id)) == scan(src)[0]
        assert store.stats(report.session_id).entries == report.entries == 69
    meta = WorkingMemory(tmp_path, report.session_id).load()
    assert meta.model == "claude-opus-4-6" and meta.title == "imported from claude-code: claude-code-subagent.jsonl"
    assert report.source_session_id == "491e126e-1e71-469c-ade2-fcc8af567c74"


def test_command_line_import_json_and_exit_codes(tmp_path: Path) -> None:
    done = aptmem("import", "--from", "claude-code", str(FIXTURES / "claude-code-tool_heavy.jsonl"), str(tmp_path / "s"),
                  "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert (out["entries"], out["damaged"]) == (26, False)
    assert out["skipped"] == {"file-history-snapshot": 3, "progress:hook_progress": 10, "queue-operation": 2,
                              "empty text block": 1}
    assert Path(out["path"]).exists() and out["session_id"] in out["path"]
    torn = copy("claude-code-tool_heavy.jsonl", tmp_path)
    torn.write_bytes(torn.read_bytes()[:-30])
    done = aptmem("import", "--from", "auto", str(torn), str(tmp_path / "s"), "--json")
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["damaged"] and out["torn_tail_line"] == 39 and out["entries"] == 25
    done = aptmem("import", "--from", "claude-code", str(FIXTURES / "pi-large-session.jsonl"), str(tmp_path / "t"))
    assert done.returncode == 2 and "not a claude-code transcript" in done.stderr
    assert not (tmp_path / "t").exists()
    assert aptmem("import", "--from", "nope", "a", "b").returncode == 2


def test_importing_the_importers_stays_light() -> None:
    code = ("import sys, aptmem.importers, aptmem.importers.usage, aptmem.cli; aptmem.cli.build_parser(); "
            "print([m for m in ('polars', 'hydra', 'transformers', 'matplotlib', 'omegaconf', 'tiktoken', 'numpy') "
            "if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(("name", "entries", "replies", "thinking", "pre_tokens"), [
    ("claude-code-compacted-auto.jsonl", 517, 139, 14, 170_251),
    ("claude-code-compacted-manual.jsonl", 739, 217, 6, 142_431),
])
def test_real_sessions_with_a_compaction_import_their_thinking_and_their_compaction(
        name: str, entries: int, replies: int, thinking: int, pre_tokens: int) -> None:
    imported, report = scan(FIXTURES / name)
    assert (report.entries, report.replies, report.requests_with_usage, report.compactions) == (entries, replies, replies, 1)
    assert not report.damaged and "thinking" not in report.metadata
    thoughts = [e for e in imported if isinstance(e, Assistant) and e.thinking]
    assert len(thoughts) == thinking and all(e.thinking.strip() for e in thoughts)
    (compaction,) = [e for e in imported if isinstance(e, Compaction)]
    assert compaction.tokens_before == pre_tokens and compaction.first_kept is None
    assert compaction.summary.startswith("This session is being continued from a previous conversation")
    boundary = imported[imported.index(compaction) - 1]
    assert isinstance(boundary, Metadata) and boundary.kind == "compact_boundary"
