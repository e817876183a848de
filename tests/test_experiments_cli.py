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
    done = experiments("run", "measure=[write_cost]", "write_cost.entries=60", "write_cost.quadratic_entries=20", "write_cost.warmup=10",
                       "write_cost.window=20", "strategy=[jsonl_none,sqlite_wal_off,full_json_atomic]",
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
    for figure in (run_dir / "figures").iterdir():
        figure.unlink()
    again = experiments("report", str(run_dir))
    assert again.returncode == 0, again.stderr
    assert report.read_text(encoding="utf-8") == text
    assert (run_dir / "figures" / "append_latency.png").stat().st_size > 10_000


TINY = [
    "strategy=[jsonl_always,sqlite_wal_full,full_json_atomic]",
    "write_cost.entries=60", "write_cost.quadratic_entries=20", "write_cost.warmup=10", "write_cost.window=20",
    "memory.sizes_mb=[0.1,0.2]", "memory.repeats=1", "memory.trace=false", "memory.strategies=[]",
    "crash.kills=1", "crash.compaction_kills=1", "crash.images=1", "crash.entries=40", "crash.damages=[torn,drop]",
    "crash.modes=[skip]",
    "concurrency.writers=2", "concurrency.appends=5", "concurrency.cli_appends=20", "concurrency.max_bytes_per_writer=2000000",
    "concurrency.sidecar_sets=5",
    "tokens.per_kind=10", "tokens.repeats=1", "tokens.growth_entries=50",
    "compaction.windows=[8000]", "compaction.turns=30", "compaction.facts=5",
    "transcripts.tiers=[rough:bytes,medium]", "transcripts.windows=[32000]",
    "progress=false",
]


def test_a_tiny_run_of_every_measurement_writes_every_table_and_figure(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = experiments("run", *TINY, f"hydra.run.dir={run_dir}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(run_dir / "report.md")
    tables = {p.stem for p in run_dir.glob("*.parquet")}
    for name in ("write_cost_samples", "memory", "recovery", "concurrency", "concurrency_modes", "hostile", "anatomy",
                 "tokens", "token_speed",
                 "occupancy", "compaction", "facts", "usage", "usage_summary", "transcript_compaction"):
        assert name in tables, name
        assert (run_dir / f"{name}.csv").exists(), name
        table = pl.read_parquet(run_dir / f"{name}.parquet")
        assert table.height > 0, name
        assert {"commit", "machine"} <= set(table.columns), name
    figures = {p.name for p in (run_dir / "figures").iterdir()}
    assert {"append_latency.png", "load_time.png", "peak_memory.png", "recovery_outcomes.png", "token_error.png",
            "compaction_occupancy.png", "pareto.png", "transcript_usage.png", "transcript_compaction.png"} <= figures
    text = (run_dir / "report.md").read_text(encoding="utf-8")
    for heading in ("## The three approaches compared", "## Write cost per append", "## Crash recovery",
                    "## Concurrency safety", "## Hostile input", "## Real transcripts", "## Which strategy for which need"):
        assert heading in text, heading
    assert "not measured" not in text.split("## Write cost")[0], "every cell of the comparison is measured"


def test_a_typo_in_an_override_fails_at_load(tmp_path: Path) -> None:
    done = experiments("run", "write_cost.entriez=5", f"hydra.run.dir={tmp_path}")
    assert done.returncode != 0
    assert "entriez" in done.stderr


def test_usage_errors() -> None:
    assert experiments().returncode == 2
    assert experiments("bogus").returncode == 2
    assert experiments("report", "/no/such/folder").returncode == 2
