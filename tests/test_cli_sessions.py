"""One command-line convention: the original design's lines through every command, PATH or --root DIR
SESSION_ID everywhere, ``ls`` and ``context``, and every command refusing what is not a session log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.cli import main
from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Compaction, Metadata, ToolResult, decode_line
from aptmem.ids import new_session_id
from aptmem.jsonl_store import DEFAULT_SYNC, JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory
from context_checks import check_both, check_openai
from test_context import ORIGINAL

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "real"
METADATA = b'{"type":"metadata","title":"bug hunt","created":1717000000000,"model":"claude-sonnet-4","ts":1717000000000}'
MARKER = b'{"type":"compaction_marker","summary":"the user asked about a bug in src/foo.ts","ts":1717000003000}'


def run(capsys: pytest.CaptureFixture[str], *argv: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """Run one command in-process (as ``python -m aptmem`` does); return (exit code, stdout, stderr)."""
    if stdin is not None:
        read, write = os.pipe()
        os.write(write, stdin)
        os.close(write)
        saved = sys.stdin
        sys.stdin = os.fdopen(read, "r")
        try:
            code = main(list(argv))
        finally:
            sys.stdin.close()
            sys.stdin = saved
    else:
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def write_log(root: Path, body: bytes) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{new_session_id()}.jsonl"
    path.write_bytes(body)
    return path


# -- the original design's lines -------------------------------------------------------------------


def test_the_four_original_lines_through_fsck_cat_stats_and_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_log(tmp_path / "sessions", b"\n".join(ORIGINAL) + b"\n")
    code, out, _ = run(capsys, "fsck", str(path))
    assert code == 0 and f"{path}: clean, 4 entries" in out
    code, out, _ = run(capsys, "fsck", str(path), "--json")
    assert code == 0 and json.loads(out)["entries"] == 4
    code, out, _ = run(capsys, "cat", str(path))
    assert code == 0 and [decode_line(line.encode()) for line in out.splitlines()] == [decode_line(x) for x in ORIGINAL]
    code, out, _ = run(capsys, "stats", str(path), "--json")
    stats = json.loads(out)
    assert (stats["entries"], stats["damaged_lines"], stats["by_type"]["tool_result"]) == (4, 0, 1)
    code, out, _ = run(capsys, "context", str(path), "--format", "openai")
    body = json.loads(out)
    assert code == 0 and list(body) == ["messages"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "assistant", "tool"]
    assert body["messages"][3]["tool_call_id"] == body["messages"][2]["tool_calls"][0]["id"]
    check_openai(body)
    code, out, _ = run(capsys, "context", str(path), "--format", "anthropic", "--system-prompt", "Be brief.")
    body = json.loads(out)
    assert code == 0 and list(body) == ["system", "messages"] and body["system"] == "Be brief."


def test_the_original_lines_through_append_replay_compact_continue_and_session(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "sessions"
    sid = new_session_id()
    lines = [METADATA, *ORIGINAL, MARKER, b'{"type":"user","content":"and now?","ts":1717000004000}']
    code, out, err = run(capsys, "append", "--root", str(root), sid, "--json", stdin=b"\n".join(lines) + b"\n")
    assert code == 0, err
    assert json.loads(out)["appended"] == len(lines) and json.loads(out)["sync"] == DEFAULT_SYNC == "batch"
    path = root / f"{sid}.jsonl"
    stored = [decode_line(x) for x in path.read_bytes().splitlines()]
    assert stored == [decode_line(x) for x in lines], "every line stored, every field kept"
    meta = stored[0]
    assert isinstance(meta, Metadata) and (meta.title, meta.created, meta.model) == ("bug hunt", 1717000000000, "claude-sonnet-4")
    assert isinstance(stored[4], ToolResult) and stored[4].call_id is None and stored[4].name == "read"

    code, out, err = run(capsys, "replay", str(path), "--window", "100000", "--json")
    report = json.loads(out.splitlines()[-1])
    assert code == 0 and report["entries"] == len(lines) and report["damaged_lines"] == [] and report["split_tool_pairs"] == 0

    code, out, err = run(capsys, "compact", "--root", str(root), sid, "--window", "100000", "--force", "--json")
    assert code == 0, err
    after = [decode_line(x) for x in path.read_bytes().splitlines()]
    assert after[: len(lines)] == stored, "an appended compaction leaves every entry on disk"

    code, out, err = run(capsys, "continue", str(path), "--with-history", "--json")
    assert code == 0, err
    new = json.loads(out)["session_id"]
    with JsonlStore(root) as store:
        assert list(store.iter_entries(new)) == after
        session = Session(store, sid, policy=CompactionPolicy(window=100_000), estimator=get_estimator("medium"))
        assert isinstance(session.live[0], Compaction)
        check_both(session.context())
        whole = Session(store, new_session_id(), policy=CompactionPolicy(window=100_000), estimator=get_estimator("medium"))
        for entry in stored:
            whole.append(entry)
        assert len(whole.live) >= 2


def test_a_name_only_result_after_a_missing_final_newline_is_not_quarantined(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_log(tmp_path / "sessions", b"\n".join(ORIGINAL))  # no final newline
    code, _, err = run(capsys, "append", str(path), stdin=b'{"type":"user","content":"next","ts":1717000009000}\n')
    assert code == 0, err
    assert len(path.read_bytes().splitlines()) == 5 and not Path(str(path) + ".quarantine").exists()
    code, out, _ = run(capsys, "fsck", str(path), "--repair")
    assert code == 0 and "clean, 5 entries" in out


# -- one convention --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["cat"], ["stats", "--json"], ["fsck", "--json"], ["context"], ["tokens", "--json"]])
def test_a_path_and_root_dir_session_id_name_the_same_session(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    root = tmp_path / "sessions"
    path = write_log(root, b"\n".join(ORIGINAL) + b"\n")
    sid = path.name[: -len(".jsonl")]
    name, *flags = command
    by_path = run(capsys, name, str(path), *flags)
    by_root = run(capsys, name, "--root", str(root), sid, *flags)
    monkeypatch.setenv("APTMEM_ROOT", str(root))
    by_id = run(capsys, name, sid, *flags)
    assert by_path[0] == 0, by_path[2]
    if name == "tokens":  # the time it took differs
        by_path, by_root, by_id = ([{**json.loads(r[1]), "seconds": 0}] for r in (by_path, by_root, by_id))
    assert by_path == by_root == by_id


def test_missing_sessions_and_bad_combinations_name_the_flags_and_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    sid = new_session_id()
    for command in (["cat"], ["stats"], ["fsck"], ["context"], ["continue"], ["compact", "--window", "1000"]):
        code, _, err = run(capsys, command[0], "--root", str(root), sid, *command[1:])
        assert code == 2 and str(root) in err and sid in err, (command, err)
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "continue", "--root", str(root), sid, "--with-summary", "--with-history")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--with-summary" in err and "--with-history" in err
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes(b"\n".join(ORIGINAL) + b"\n")
    code, _, err = run(capsys, "compact", str(loose), "--window", "1000")
    assert code == 2 and "<uuid>.jsonl" in err and "--root DIR SESSION_ID" in err
    code, _, err = run(capsys, "cat", "--root", str(root), "../../etc/passwd")
    assert code == 2 and "looks like a path" in err
    for flags, named in ((["--keep-turns", "0"], "--keep-turns"), (["--trigger", "0.2"], "--trigger"), ([], "--window")):
        code, _, err = run(capsys, "replay", str(loose), "--window", "100" if not flags else "1000", *flags)
        assert code == 2 and named in err and "keep_turns" not in err, err


def test_ls_lists_the_sessions_of_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "sessions"
    code, out, _ = run(capsys, "new", "--root", str(root), "--title", "bug hunt")
    first = out.strip()
    WorkingMemory(root, first).set_text("the user prefers small commits")
    run(capsys, "append", "--root", str(root), first, stdin=b"\n".join(ORIGINAL) + b"\n")
    second = new_session_id()
    run(capsys, "append", "--root", str(root), second, stdin=METADATA + b"\n" + ORIGINAL[0] + b"\n")
    foreign = root / f"{new_session_id()}.jsonl"
    shutil.copy(REAL / "pi-large-session.jsonl", foreign)
    (root / "notes.txt").write_text("not a session")
    code, out, _ = run(capsys, "ls", "--root", str(root), "--json")
    assert code == 0
    listing = json.loads(out)
    rows = {row["session_id"]: row for row in listing["sessions"]}
    assert set(rows) == {first, second, foreign.stem}
    assert (rows[first]["title"], rows[first]["entries"], rows[first]["last_ts"]) == ("bug hunt", 4, 1717000002001)
    assert rows[first]["bytes"] == (root / f"{first}.jsonl").stat().st_size
    assert (rows[second]["title"], rows[second]["entries"]) == ("bug hunt", 2)  # the title of its metadata line
    code, out, _ = run(capsys, "context", "--root", str(root), first, "--tokens", "--tier", "medium")
    assert rows[first]["live_tokens"] == json.loads(out)["tokens"] > 0
    assert "Working memory:\nthe user prefers small commits" in json.loads(out)["messages"][0]["content"]
    assert "pi transcript" in rows[foreign.stem]["error"] and rows[foreign.stem]["live_tokens"] is None
    code, out, _ = run(capsys, "ls", "--root", str(root))
    assert code == 0 and first in out and "bug hunt" in out and "3 sessions" in out
    code, _, err = run(capsys, "ls", "--root", str(tmp_path / "nowhere"))
    assert code == 2 and "nowhere" in err and not (tmp_path / "nowhere").exists()


# -- what is not a session log ---------------------------------------------------------------------


def _foreign(tmp_path: Path, kind: str) -> Path:
    root = tmp_path / "sessions"
    root.mkdir(exist_ok=True)
    if kind == "sidecar":
        sid = new_session_id()
        WorkingMemory(root, sid).create(title="t", memory="m", working={"plan": [1, 2]})
        return root / f"{sid}.meta.json"
    path = root / f"{new_session_id()}.jsonl"  # named as a log, so every command would take it
    if kind == "pretty json":
        path.write_text(json.dumps({"type": "user", "content": "hi", "ts": 1, "nested": {"a": [1, 2]}}, indent=2))
    elif kind == "json array":
        path.write_text(json.dumps([{"type": "user", "content": "hi", "ts": 1}], indent=1))
    elif kind == "claude-code":
        shutil.copy(REAL / "claude-code-tool_heavy.jsonl", path)
    elif kind == "pi":
        shutil.copy(REAL / "pi-large-session.jsonl", path)
    elif kind == "text":
        path.write_text("# notes\nnot json at all\n")
    return path


_KINDS = ["sidecar", "pretty json", "json array", "claude-code", "pi", "text"]
_COMMANDS = [["fsck"], ["fsck", "--repair"], ["fsck", "--repair", "--mode", "point_in_time"], ["cat"], ["stats"],
             ["context"], ["replay", "--window", "1000"], ["compact", "--window", "1000", "--force"], ["append"],
             ["continue"], ["tokens", "--entries"]]


@pytest.mark.parametrize("kind", _KINDS)
def test_every_command_refuses_what_is_not_a_session_log_and_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    path = _foreign(tmp_path, kind)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    for command in _COMMANDS:
        if command[0] in ("compact", "append", "continue") and not path.name.endswith(".jsonl"):
            continue  # these need <uuid>.jsonl; for a sidecar they refuse by its name (below)
        stdin = ORIGINAL[0] + b"\n" if command[0] == "append" else None
        code, out, err = run(capsys, command[0], str(path), *command[1:], stdin=stdin)
        assert code == 2, (kind, command, out, err)
        assert str(path) in err and len(err.strip().splitlines()) == 1, (kind, command, err)
        if kind in ("claude-code", "pi"):
            assert f"a {kind} transcript" in err and "aptmem import" in err
        elif kind == "sidecar":
            assert "sidecar" in err
        after = {p.name: p.read_bytes() for p in path.parent.iterdir()}
        assert after == before, f"{kind}: {' '.join(command)} changed the folder"


def test_fsck_repair_on_a_sidecar_and_on_pretty_json_exits_2_and_changes_nothing(tmp_path: Path) -> None:
    """The regression of issue 11, finding 4: ``fsck --repair`` used to empty these files."""
    for kind in ("sidecar", "pretty json"):
        path = _foreign(tmp_path, kind)
        before = path.read_bytes()
        done = subprocess.run([sys.executable, "-m", "aptmem", "fsck", str(path), "--repair"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        assert path.read_bytes() == before and not Path(str(path) + ".quarantine").exists()
        assert "not a" in done.stderr and "Traceback" not in done.stderr


def test_damaged_logs_are_still_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "torn first line": b'{"type":"user","cont\n' + ORIGINAL[0] + b"\n",
        "zero-filled": b"\x00" * 64,
        "empty": b"",
        "damaged entry": b'{"type":"user","ts":"not a number"}\n',
        "unknown type": b'{"type":"future_thing","ts":1}\n',
    }
    for name, body in cases.items():
        path = write_log(tmp_path / name.replace(" ", "-"), body)
        code, _, err = run(capsys, "fsck", str(path))
        assert code in (0, 1), (name, err)


def test_usage_check_takes_from_auto(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "usage-check", str(REAL), "--from", "auto", "--tiers", "rough:bytes", "--json")
    assert code == 0, err
    result = json.loads(out.splitlines()[-1])
    assert {s["format"] for s in result["sessions"]} == {"claude-code", "pi"} and result["requests"] > 0
    code, out, _ = run(capsys, "usage-check", str(REAL), "--from", "pi", "--tiers", "rough:bytes", "--json")
    assert {s["format"] for s in json.loads(out.splitlines()[-1])["sessions"]} == {"pi"}
