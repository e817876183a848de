"""``python -m aptmem tokens``, run for real: files, stdin, sessions, errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.entries import Assistant, Metadata, ToolCall, ToolResult, User, encode_line
from aptmem.tokens import count_entries, get_estimator

ROOT = Path(__file__).resolve().parent.parent


def aptmem(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aptmem`` for real."""
    return subprocess.run([sys.executable, "-m", "aptmem", *args], capture_output=True, text=True, input=stdin,
                          cwd=ROOT, timeout=120, env={**os.environ, **(env or {})})


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.strip().splitlines()]


@pytest.fixture
def texts(tmp_path: Path) -> tuple[Path, Path]:
    hello = tmp_path / "hello.txt"
    hello.write_text("hello world\n", encoding="utf-8")
    chinese = tmp_path / "zh.txt"
    chinese.write_text("帮我看看这个 bug", encoding="utf-8")
    return hello, chinese


def test_json_per_file_with_exact_precise_counts(texts: tuple[Path, Path]) -> None:
    hello, chinese = texts
    run = aptmem("tokens", "--tier", "precise", "--json", str(hello), str(chinese))
    assert run.returncode == 0, run.stderr
    rows = json_lines(run.stdout)
    assert [r["file"] for r in rows] == [str(hello), str(chinese)]
    assert [r["tokens"] for r in rows] == [3, 8]
    assert rows[1]["chars"] == 10 and rows[1]["bytes"] == 22
    for row in rows:
        assert row["tier"] == "precise" and row["tokenizer"] == "cl100k_base"
        assert {"file", "tier", "tokenizer", "tokens", "chars", "bytes", "seconds"} <= set(row)


def test_stdin_and_every_tier(texts: tuple[Path, Path]) -> None:
    for tier in ("rough", "medium", "precise"):
        run = aptmem("tokens", "--tier", tier, "--json", "-", stdin="hello world\n")
        assert run.returncode == 0, run.stderr
        (row,) = json_lines(run.stdout)
        assert row["file"] == "-" and row["tier"] == tier and row["tokens"] >= 1
    rough = json_lines(aptmem("tokens", "--tier", "rough", "--json", "-", stdin="abcdefgh").stdout)[0]
    assert rough["tokens"] == 2


def test_plain_output_has_a_total(texts: tuple[Path, Path]) -> None:
    hello, chinese = texts
    run = aptmem("tokens", "--tier", "precise", str(hello), str(chinese))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[0].split() == ["3", str(hello), "(text)"]
    assert lines[-1].split()[:2] == ["11", "total"]


def test_missing_file_is_one_line_and_exit_2_others_still_counted(texts: tuple[Path, Path], tmp_path: Path) -> None:
    hello, _ = texts
    missing = tmp_path / "nope.txt"
    run = aptmem("tokens", "--json", str(missing), str(hello))
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [f"aptmem: {missing}: No such file or directory"]
    assert [r["file"] for r in json_lines(run.stdout)] == [str(hello)]
    folder = aptmem("tokens", str(tmp_path))
    assert folder.returncode == 2 and "Is a directory" in folder.stderr


def test_unavailable_tokenizer_is_one_line_and_exit_2(texts: tuple[Path, Path], tmp_path: Path) -> None:
    hello, _ = texts
    run = aptmem("tokens", "--tier", "precise", "--tokenizer", "o200k_base", str(hello),
                 env={"TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")})
    assert run.returncode == 2
    assert run.stdout == ""
    (line,) = run.stderr.strip().splitlines()
    assert "o200k_base" in line and "TIKTOKEN_CACHE_DIR" in line
    bad = aptmem("tokens", "--tier", "exact", str(hello))
    assert bad.returncode == 2  # argparse: invalid choice


def test_entries_of_a_session_file(tmp_path: Path) -> None:
    entries = [User(ts=1, content="帮我看看这个 bug", id="u1"), ToolCall(ts=2, name="read", args={"path": "a.py"}, id="c1"),
               ToolResult(ts=3, call_id="c1", content="def f():\n    return 1\n", name="read"),
               Metadata(ts=4, kind="note"), Assistant(ts=5, content="Fixed.", id="a1")]
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"".join(encode_line(e) for e in entries) + b"garbage line\n")
    run = aptmem("tokens", "--entries", "--tier", "precise", "--json", str(log))
    assert run.returncode == 0, run.stderr
    (row,) = json_lines(run.stdout)
    assert row["entries"] == 5 and row["damaged_lines"] == 1
    assert row["tokens"] == count_entries(get_estimator("precise"), entries)
    assert row["counted"] == "entries"
    live = json_lines(aptmem("tokens", "--entries", "--live", "--json", str(log)).stdout)
    assert live[0]["entries"] == 5 and live[0]["counted"] == "live"
    # A session file is counted as the model is sent it unless told otherwise, and the line says so.
    (default,) = json_lines(aptmem("tokens", "--tier", "precise", "--json", str(log)).stdout)
    assert (default["tokens"], default["counted"]) == (row["tokens"], "entries")
    plain = aptmem("tokens", "--tier", "precise", str(log))
    assert plain.stdout.split() == [str(row["tokens"]), str(log), "(entries:", "5", "entries", "as", "sent)"]
    (text,) = json_lines(aptmem("tokens", "--tier", "precise", "--text", "--json", str(log)).stdout)
    assert text["counted"] == "text" and text["tokens"] == get_estimator("precise").count(log.read_text())
    refused = aptmem("tokens", "--live", "--text", str(log))
    assert refused.returncode == 2 and "--live" in refused.stderr and "--text" in refused.stderr
    not_a_log = aptmem("tokens", "--live", str(tmp_path))
    assert not_a_log.returncode == 2


def test_a_transcript_is_refused_unless_counted_as_text(tmp_path: Path) -> None:
    src = ROOT / "tests" / "fixtures" / "real" / "claude-code-short.jsonl"
    hello = tmp_path / "hello.txt"
    hello.write_text("hello world\n", encoding="utf-8")
    run = aptmem("tokens", "--json", str(src), str(hello))
    assert run.returncode == 2
    assert "claude-code transcript" in run.stderr and "aptmem import" in run.stderr
    assert [r["file"] for r in json_lines(run.stdout)] == [str(hello)]  # the other file is still counted
    (text,) = json_lines(aptmem("tokens", "--text", "--json", str(src)).stdout)
    assert text["counted"] == "text" and text["bytes"] == src.stat().st_size
