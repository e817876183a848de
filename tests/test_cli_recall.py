"""``aptmem index`` and ``aptmem recall`` from the real command line, and ``continue --with-recall``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec

from aptmem.entries import Compaction, ToolResult, User, decode_line


def aptmem(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aptmem`` as a user would."""
    return subprocess.run([sys.executable, "-m", "aptmem", *args], capture_output=True, text=True, input=stdin, timeout=120)


def _lines(*entries) -> str:
    return "".join(msgspec.json.encode(e).decode() + "\n" for e in entries)


def test_index_and_recall_on_a_root_of_sessions(tmp_path: Path) -> None:
    root = str(tmp_path / "sessions")
    sid = aptmem("new", "--root", root, "--title", "db migration").stdout.strip()
    other = aptmem("new", "--root", root, "--title", "weekend plans").stdout.strip()
    # The original design's lines (no ids), a minified JSON tool result, a Chinese message.
    done = aptmem("append", "--root", root, sid, stdin=_lines(
        User(content="the staging DATABASE_URL is postgres://db7.internal:5432/pay", ts=1717000000000),
        ToolResult(call_id="c1", content='{"cfg":{"deep":[0,{"token":"zx81-secret"}]}}', ts=1717000001000, id="r1"),
        User(content="我们决定把数据库从 MySQL 迁移到 PostgreSQL 16", ts=1717000002000)))
    assert done.returncode == 0, done.stderr
    assert aptmem("append", "--root", root, other, stdin=_lines(User(content="hiking on saturday", ts=1))).returncode == 0

    indexed = aptmem("index", "--root", root, "--json")
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert report["index"]["sessions"] == 2 and report["index"]["engines"] == ["fts"]

    found = aptmem("recall", "--root", root, "zx81-secret", "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert set(json.loads(found.stdout)) == {"results"}
    assert all(set(r) == {"session_id", "entry_id", "level", "score", "text"} for r in results)
    assert results[0]["session_id"] == sid and results[0]["entry_id"] == "r1" and results[0]["level"] == "l3"
    assert isinstance(results[0]["score"], float) and "zx81-secret" in results[0]["text"]

    chinese = json.loads(aptmem("recall", "--root", root, "还记得我们讨论的数据库迁移方案吗？", "--json", "--k", "1").stdout)
    assert chinese["results"][0]["entry_id"] == "@2"  # no id: its position among the good entries
    l2 = json.loads(aptmem("recall", "--root", root, "db migration", "--level", "l2", "--json").stdout)["results"]
    assert l2 and all(r["level"] == "l2" for r in l2) and l2[0]["session_id"] == sid

    text = aptmem("recall", "--root", root, "staging database url")
    assert text.returncode == 0 and f"session {sid}\n[1] l3 chunk entry @0 " in text.stdout and "postgres://db7" in text.stdout

    # Appends after indexing are found without running index: recall catches up first.
    assert aptmem("append", "--root", root, other, stdin=_lines(User(content="ticket OPS-4242 is the blocker", ts=2))).returncode == 0
    late = json.loads(aptmem("recall", "--root", root, "OPS-4242", "--json", "--k", "1").stdout)["results"]
    assert late[0]["session_id"] == other and late[0]["entry_id"] == "@1"

    rebuilt = aptmem("index", "--root", root, "--rebuild")
    assert rebuilt.returncode == 0 and "2 sessions" in rebuilt.stdout


def test_continue_with_recall(tmp_path: Path) -> None:
    root = str(tmp_path / "sessions")
    old = aptmem("new", "--root", root).stdout.strip()
    aptmem("append", "--root", root, old, stdin=_lines(User(content="we pinned fastapi==0.110.2 for billing", ts=1)))
    new = aptmem("continue", old, "--root", root, "--with-recall", "fastapi pin billing")
    assert new.returncode == 0, new.stderr
    first = decode_line((Path(root) / f"{new.stdout.strip()}.jsonl").read_bytes().splitlines()[0])
    assert isinstance(first, Compaction) and "fastapi==0.110.2" in first.summary and old in first.summary


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    missing = aptmem("recall", "--root", str(tmp_path / "nope"), "anything")
    assert missing.returncode == 2 and "not a folder of sessions" in missing.stderr
    assert not (tmp_path / "nope").exists()  # nothing created
    (tmp_path / "r").mkdir()
    assert aptmem("recall", "--root", str(tmp_path / "r"), "x", "--k", "0").returncode == 2
    (tmp_path / "r" / "recall-index.sqlite").write_bytes(b"this is not sqlite" * 100)
    damaged = aptmem("index", "--root", str(tmp_path / "r"))
    assert damaged.returncode == 2 and "--rebuild" in damaged.stderr
    assert aptmem("index", "--root", str(tmp_path / "r"), "--rebuild").returncode == 0
