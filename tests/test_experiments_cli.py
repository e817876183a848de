"""``python -m experiments``, run for real: the Hydra app, typed configs, the report rebuilt from tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent


def experiments(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "experiments", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_run_writes_tables_figure_and_report_and_report_rebuilds_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = experiments("run", "write_cost.entries=60", "write_cost.full_json_entries=20", "write_cost.early=[1,20]",
                       "write_cost.late_size=20", "strategy=[jsonl_none,sqlite_wal_off,full_json_atomic]",
                       "progress=false", f"hydra.run.dir={run_dir}")
    assert done.returncode == 0, done.stderr
    report = run_dir / "report.md"
    assert done.stdout.strip().splitlines()[-1] == str(report)
    samples = pl.read_parquet(run_dir / "write_cost_samples.parquet")
    per_strategy = dict(samples.filter(pl.col("kind") == "strategy").group_by("strategy").agg(pl.len()).iter_rows())
    assert per_strategy == {"jsonl_none": 60, "sqlite_wal_off": 60, "full_json_atomic": 20}
    assert {"strategy", "variant", "workload", "seed", "commit", "machine"} <= set(samples.columns)
    assert (run_dir / ".hydra" / "config.yaml").is_file(), "Hydra's saved config sits beside the tables"
    text = report.read_text(encoding="utf-8")
    assert "| jsonl_none |" in text and "figures/append_latency.png" in text

    report.unlink()
    (run_dir / "figures" / "append_latency.png").unlink()
    again = experiments("report", str(run_dir))
    assert again.returncode == 0, again.stderr
    assert report.read_text(encoding="utf-8") == text
    assert (run_dir / "figures" / "append_latency.png").stat().st_size > 10_000


def test_a_typo_in_an_override_fails_at_load(tmp_path: Path) -> None:
    done = experiments("run", "write_cost.entriez=5", f"hydra.run.dir={tmp_path}")
    assert done.returncode != 0
    assert "entriez" in done.stderr


def test_usage_errors() -> None:
    assert experiments().returncode == 2
    assert experiments("bogus").returncode == 2
    assert experiments("report", "/no/such/folder").returncode == 2
