"""The real command line, run as a subprocess: fsck, cat, stats, new, continue; exit codes; start-up cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.entries import Assistant, Compaction, User, encode_line

ROOT = Path(__file__).resolve().parent.parent


def aptmem(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aptmem`` for real."""
    return subprocess.run([sys.executable, "-m", "aptmem", *args], capture_output=True, text=True, input=stdin,
                          cwd=cwd or ROOT, timeout=120)


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def lines(*entries: object) -> bytes:
    return b"".join(encode_line(e) for e in entries)  # type: ignore[arg-type]


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(
        lines(User(content="帮我看看这个 bug", ts=1, id="u1"), Assistant(content="ok 😀", ts=2, id="a1"))
        + b"this line is garbage\n"
        + lines(User(content="after", ts=3, id="u2"))
        + b'{"type":"assistant","content":"tor'
    )
    return path


def test_fsck_clean_file_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(lines(User(content="x", ts=1), Assistant(content="y", ts=2)))
    done = aptmem("fsck", str(path), "--json")
    assert done.returncode == 0, done.stderr
    report = last_json(done.stdout)
    assert (report["entries"], report["damaged_lines"], report["torn_tail_bytes"], report["loadable"]) == (2, [], 0, True)
    assert (report["repaired"], report["quarantined"], report["clean"]) == (False, 0, True)


@pytest.mark.parametrize(
    ("mode", "entries", "loadable"),
    [("skip", 3, True), ("point_in_time", 2, True), ("truncate_tail", 0, False), ("strict", 0, False)],
)
def test_fsck_reports_damage_per_mode_and_exits_1(damaged: Path, mode: str, entries: int, loadable: bool) -> None:
    before = damaged.read_bytes()
    done = aptmem("fsck", str(damaged), "--mode", mode, "--json")
    assert done.returncode == 1, done.stderr
    report = last_json(done.stdout)
    assert report["entries"] == entries and report["loadable"] is loadable
    assert report["damaged_lines"] == [3]
    assert report["torn_tail_bytes"] == len(b'{"type":"assistant","content":"tor')
    assert report["repaired"] is False and report["quarantined"] == 0
    assert damaged.read_bytes() == before, "fsck without --repair changes nothing"


def test_fsck_repair_then_clean(damaged: Path) -> None:
    done = aptmem("fsck", str(damaged), "--repair", "--json")
    assert done.returncode == 1
    report = last_json(done.stdout)
    assert (report["repaired"], report["quarantined"], report["entries"]) == (True, 2, 3)
    assert Path(report["quarantine_path"]).exists()
    again = aptmem("fsck", str(damaged), "--mode", "strict", "--json")
    assert again.returncode == 0 and last_json(again.stdout)["entries"] == 3


def test_fsck_strict_repair_changes_nothing(damaged: Path) -> None:
    before = damaged.read_bytes()
    done = aptmem("fsck", str(damaged), "--mode", "strict", "--repair", "--json")
    assert done.returncode == 1
    report = last_json(done.stdout)
    assert report["loadable"] is False and report["repaired"] is False
    assert damaged.read_bytes() == before


def test_fsck_human_output_names_lines(damaged: Path) -> None:
    done = aptmem("fsck", str(damaged))
    assert done.returncode == 1
    assert "1 damaged line (3)" in done.stdout and "torn tail of 34 bytes at line 5" in done.stdout


@pytest.mark.parametrize("target", ["missing", "folder", "binary", "symlink"])
def test_fsck_exits_2_on_input_that_is_not_a_session(tmp_path: Path, target: str) -> None:
    path = tmp_path / "thing"
    if target == "folder":
        path.mkdir()
    elif target == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif target == "symlink":
        (tmp_path / "real.jsonl").write_bytes(lines(User(content="x", ts=1)))
        os.symlink(tmp_path / "real.jsonl", path)
    before = path.read_bytes() if target == "binary" else None
    done = aptmem("fsck", str(path), "--repair")
    assert done.returncode == 2
    assert done.stderr.startswith("aptmem: ") and str(path) in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    if before is not None:
        assert path.read_bytes() == before, "a file that is not a session is never 'repaired'"


def test_fsck_bad_usage_exits_2(damaged: Path) -> None:
    assert aptmem("fsck", str(damaged), "--mode", "bogus").returncode == 2
    assert aptmem("fsck").returncode == 2


def test_cat_prints_good_entries_canonically(damaged: Path) -> None:
    done = aptmem("cat", str(damaged))
    assert done.returncode == 0
    out = done.stdout.splitlines()
    assert out == [
        '{"type":"user","content":"帮我看看这个 bug","ts":1,"id":"u1"}',
        '{"type":"assistant","content":"ok 😀","ts":2,"id":"a1"}',
        '{"type":"user","content":"after","ts":3,"id":"u2"}',
    ]
    assert "skipped damage" in done.stderr


def test_cat_keeps_unknown_types_verbatim_and_live_reads_from_the_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    unknown = b'{"type":"future", "spacing" : [1,2] ,"ts":5}'
    path.write_bytes(lines(User(content="a", ts=1, id="u1"), User(content="b", ts=2, id="u2"))
                     + unknown + b"\n" + lines(Compaction(summary="s", first_kept="u2", ts=6), User(content="c", ts=7, id="u3")))
    done = aptmem("cat", str(path))
    assert done.stdout.splitlines()[2] == unknown.decode()
    live = aptmem("cat", "--live", str(path)).stdout.splitlines()
    assert [json.loads(l).get("id") or json.loads(l)["type"] for l in live] == ["compaction", "u2", "future", "u3"]


def test_cat_strict_on_damage_exits_1_with_the_line(damaged: Path) -> None:
    done = aptmem("cat", "--mode", "strict", str(damaged))
    assert done.returncode == 1
    assert f"{damaged}:3:" in done.stderr and "Traceback" not in done.stderr


def test_stats(damaged: Path) -> None:
    done = aptmem("stats", "--json", str(damaged))
    assert done.returncode == 0
    stats = last_json(done.stdout)
    assert stats["entries"] == 3 and stats["by_type"] == {"assistant": 1, "user": 2}
    assert stats["damaged_lines"] == 1 and stats["bytes_on_disk"] == damaged.stat().st_size


def test_importing_aptmem_stays_light() -> None:
    code = ("import sys, aptmem, aptmem.cli, aptmem.jsonl_store, aptmem.entries; "
            "heavy = [m for m in ('polars', 'hydra', 'transformers', 'matplotlib', 'omegaconf', 'tiktoken') if m in sys.modules]; "
            "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_new_and_continue_carry_working_memory(tmp_path: Path) -> None:
    from aptmem.working_memory import WorkingMemory

    root = tmp_path / "sessions"
    done = aptmem("new", "--root", str(root), "--title", "bug hunt", "--json")
    assert done.returncode == 0, done.stderr
    old = last_json(done.stdout)["session_id"]
    memory = WorkingMemory(root, old)
    memory.set("plan", ["reproduce", "fix"])
    memory.set_text("user prefers small commits")
    done = aptmem("continue", old, "--root", str(root))
    assert done.returncode == 0, done.stderr
    new = done.stdout.strip()
    assert new != old
    inherited = WorkingMemory(root, new).load()
    assert (inherited.title, inherited.memory, inherited.working, inherited.parent) == (
        "bug hunt", "user prefers small commits", {"plan": ["reproduce", "fix"]}, old)
    assert (root / f"{new}.jsonl").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/etc/passwd", "0B7E4D5C-2B1F-4C3A-9D8E-7F6A5B4C3D2E", "x\u2010y"])
def test_continue_refuses_bad_ids_with_exit_2(tmp_path: Path, bad: str) -> None:
    done = aptmem("continue", bad, "--root", str(tmp_path))
    assert done.returncode == 2
    assert "invalid session id" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_continue_of_a_missing_session_exits_2(tmp_path: Path) -> None:
    done = aptmem("continue", "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e", "--root", str(tmp_path))
    assert done.returncode == 2 and "not found" in done.stderr


# -- issue 11 and 12 ---------------------------------------------------------------------------------

SID11 = "3d6f1c2a-8b4e-4f5a-9c7d-1e2f3a4b5c6d"


def _readme_lines(n: int) -> str:
    """Turns written as the README's `aptmem append` example writes them: no ids."""
    return "".join(json.dumps({"type": kind, "content": f"{kind} {i} " + "word " * 30, "ts": 1717000000000 + 2 * i + (kind == "assistant")}) + "\n"
                   for i in range(n) for kind in ("user", "assistant"))


def test_an_append_compaction_of_id_less_turns_keeps_them_live_and_a_rewrite_keeps_them(tmp_path: Path) -> None:
    """Finding 2: `compact --persist append` over `aptmem append` lines keeps its turns live."""
    assert aptmem("append", "--root", str(tmp_path), SID11, stdin=_readme_lines(30)).returncode == 0
    log = tmp_path / f"{SID11}.jsonl"
    done = aptmem("compact", str(log), "--window", "2000", "--keep-turns", "3", "--force", "--tier", "rough", "--no-confirm", "--json")
    assert done.returncode == 0, done.stderr
    assert last_json(done.stdout)["kept_turns"] == 3
    live = aptmem("cat", "--live", str(log)).stdout.splitlines()
    assert len(live) == 7, "the summary and the 6 entries of the 3 kept turns"
    rewrite = aptmem("compact", str(log), "--window", "2000", "--keep-turns", "3", "--force", "--persist", "rewrite",
                     "--tier", "rough", "--no-confirm")
    assert rewrite.returncode == 0 and "unchanged" in rewrite.stdout  # nothing new to summarize
    assert aptmem("cat", "--live", str(log)).stdout.splitlines() == live


def test_compact_right_after_a_compaction_writes_nothing_and_a_rewrite_says_what_left(tmp_path: Path) -> None:
    """Issue 12: --force with nothing to summarize changes nothing; a rewrite says what left the disk."""
    assert aptmem("append", "--root", str(tmp_path), SID11, stdin=_readme_lines(30)).returncode == 0
    log = tmp_path / f"{SID11}.jsonl"
    args = ("--window", "2000", "--keep-turns", "3", "--force", "--tier", "rough", "--no-confirm", "--persist", "rewrite")
    first = aptmem("compact", str(log), *args)
    assert first.returncode == 0 and "left the file: 54 entries" in first.stdout, first.stdout
    before = log.read_bytes()
    again = aptmem("compact", str(log), *args, "--json")
    assert log.read_bytes() == before, "a compaction with nothing to summarize wrote a marker"
    out = last_json(again.stdout)
    assert again.returncode == 0 and out["changed"] is False and out["reason"].startswith("nothing to summarize")


@pytest.mark.parametrize("command", ["fsck", "cat", "stats"])
def test_a_fifo_at_the_log_path_is_refused_not_waited_on(tmp_path: Path, command: str) -> None:
    """Finding 7: a FIFO is refused before an open could block (each command used to hang forever)."""
    fifo = tmp_path / f"{SID11}.jsonl"
    os.mkfifo(fifo)
    done = aptmem(command, str(fifo))
    assert done.returncode == 2 and "is not a regular file" in done.stderr, (done.returncode, done.stderr)


def test_append_and_continue_refuse_a_fifo_where_the_log_or_the_sidecar_should_be(tmp_path: Path) -> None:
    """Finding 7: `append` and `continue` too, for the log and for the sidecar."""
    os.mkfifo(tmp_path / f"{SID11}.jsonl")
    done = aptmem("append", "--root", str(tmp_path), SID11, stdin=_readme_lines(1))
    assert done.returncode == 2 and "is not a regular file" in done.stderr, done.stderr
    other = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
    assert aptmem("append", "--root", str(tmp_path), other, stdin=_readme_lines(1)).returncode == 0
    os.mkfifo(tmp_path / f"{other}.meta.json")
    done = aptmem("continue", other, "--root", str(tmp_path))
    assert done.returncode == 2 and "is not a regular file" in done.stderr, done.stderr


def test_fsck_repair_on_a_full_disk_names_the_file_and_changes_nothing(tmp_path: Path) -> None:
    """Finding 9: the error names the log; the log is unchanged and the quarantine holds no partial piece."""
    log = tmp_path / "s.jsonl"
    log.write_bytes(lines(User(content="a", ts=1)) + b"garbage\n" + lines(User(content="b", ts=2)))
    script = ("import errno, os, sys\n"
              "from aptmem.cli import main\n"
              "real = os.write\n"
              "def full(fd, data):\n"
              "    if os.readlink(f'/proc/self/fd/{fd}').endswith('.quarantine'):\n"
              "        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
              "    return real(fd, data)\n"
              "os.write = full\n"
              f"sys.exit(main(['fsck', '--repair', {str(log)!r}]))\n")
    before = log.read_bytes()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and str(log) in done.stderr and "No space left" in done.stderr, done.stderr
    assert log.read_bytes() == before
    quarantine = tmp_path / "s.jsonl.quarantine"
    assert not quarantine.exists() or quarantine.read_bytes() == b""


def test_fsck_repair_refuses_a_file_of_old_mac_line_ends_instead_of_quarantining_it_whole(tmp_path: Path) -> None:
    """Finding 9: CR-only line ends are entries, not damage; nothing is moved, the reason says what to do."""
    log = tmp_path / "s.jsonl"
    data = lines(User(content="a", ts=1), User(content="b", ts=2)).replace(b"\n", b"\r")
    log.write_bytes(data)
    done = aptmem("fsck", "--repair", "--json", str(log))
    assert done.returncode == 1 and log.read_bytes() == data, done.stdout
    assert not (tmp_path / "s.jsonl.quarantine").exists()
    report = last_json(done.stdout)
    assert report["loadable"] is False and "old Mac line ends" in report["error"]
