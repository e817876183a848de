"""benchmarks/peers.py: growth after a warm-up over windows that never overlap, and a real small run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("peers_bench", ROOT / "benchmarks" / "peers.py")
peers = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(peers)  # type: ignore[union-attr]


def test_growth_skips_the_warm_up_and_compares_disjoint_windows() -> None:
    """A slow warm-up does not count; early and late windows are the medians of their own appends."""
    appends = [900_000] * 10 + [1_000] * 20 + [5_000] * 30 + [2_000] * 20
    figures = peers.summarize({"append_ns": appends, "open_ns": [1_000_000], "load_ns": [3_000_000], "bytes": 7,
                               "durability": "none"}, warmup=10, window=20)
    assert figures["early_us"] == 1.0 and figures["late_us"] == 2.0 and figures["growth"] == 2.0
    assert figures["load_ms"] == 3.0 and figures["open_ms"] == 1.0


def test_overlapping_windows_are_refused() -> None:
    """Too few entries for warm-up + two windows: a usage error, not a silently overlapping ratio."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--entries", "250"], capture_output=True, text=True)
    assert done.returncode == 2 and "do not overlap" in done.stderr


def test_a_small_run_measures_every_store_in_its_own_process(tmp_path: Path) -> None:
    """Three stores, 60 appends each: a row per store, every entry read back, the JSON file last."""
    names = ["jsonl_none", "langchain_file", "openai_agents_sqlite"]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--entries", "60", "--warmup", "10",
                           "--window", "20", "--strategies", ",".join(names), "--out", str(tmp_path), "--tmp", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(tmp_path / "peers.json")
    result = json.loads((tmp_path / "peers.json").read_text())
    assert list(result["runs"]) == names
    for name in names:
        assert f"| {name} |" in done.stdout
        assert result["runs"][name][0]["bytes"] > 0
    assert "Command: `python benchmarks/peers.py" in (tmp_path / "peers.md").read_text()
