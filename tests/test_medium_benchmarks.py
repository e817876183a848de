"""The medium tier's two benchmarks run from the command line: the real-session text check, the kernel load and the side-by-side timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"
sys.path.insert(0, str(ROOT / "benchmarks"))

import medium_real_text  # noqa: E402


def test_every_text_of_the_real_sessions_gets_one_kind() -> None:
    texts = medium_real_text.session_texts(FIXTURES)
    kinds = {kind for kind, _, _ in texts}
    assert kinds == {"prose", "json", "bash_output", "read_output", "other_output"}
    assert {session for _, session, _ in texts} == {p.name for p in FIXTURES.glob("*.jsonl")}
    assert all(text.strip() for _, _, text in texts)
    # a Read result is numbered source lines; a tool call's arguments are JSON
    assert any("\u2192" in text or "\t" in text for kind, _, text in texts if kind == "read_output")


def test_the_real_text_check_reports_every_kind_and_fails_on_an_empty_folder(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "medium_real_text.py"), "--per-kind", "20"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    for kind in ("prose", "json", "bash_output", "read_output", "other_output", "all"):
        assert f"| {kind} |" in done.stdout
    empty = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "medium_real_text.py"), "--transcripts", str(tmp_path)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert empty.returncode == 2 and "no session" in empty.stderr


@pytest.mark.slow
def test_the_kernel_load_benchmark_times_the_load_and_both_paths() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "medium_kernel_load.py"), "--processes", "1",
                           "--repeats", "1"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "kernel's first call" in done.stdout and "KERNEL_AFTER_SECONDS is" in done.stdout


def test_the_side_by_side_timing_runs_against_a_commit() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "medium_against.py"), "--rev", "HEAD", "--repeats", "1",
                           "--per-kind", "3"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "| all |" in done.stdout and "tiktoken / HEAD" in done.stdout
