"""The regression gate's arithmetic, the sweep cache and the combined sweep report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from omegaconf import OmegaConf

from experiments import sweep
from experiments.gate.check import compare, read_baseline, write_baseline
from experiments.gate.metrics import Metric

ROOT = Path(__file__).resolve().parent.parent


def test_compare_flags_moves_beyond_tolerance_in_the_wrong_direction(tmp_path: Path) -> None:
    baseline = {
        "a.lower": Metric("a.lower", 2.0, "lower", 0.5),        # may rise to 3.0
        "b.higher": Metric("b.higher", 0.9, "higher", 0.05, relative=False),  # may fall to 0.85
        "c.equal": Metric("c.equal", 40, "equal", 0, relative=False),
        "d.gone": Metric("d.gone", 1.0, "lower", 0.1),
    }
    path = tmp_path / "baseline.json"
    write_baseline(path, baseline, source="test")
    assert read_baseline(path) == baseline
    current = {
        "a.lower": Metric("a.lower", 3.2, "lower", 0.5),
        "b.higher": Metric("b.higher", 0.99, "higher", 0.05, relative=False),
        "c.equal": Metric("c.equal", 40, "equal", 0, relative=False),
    }
    table = compare(current, read_baseline(path))
    assert dict(zip(table["metric"], table["status"])) == {
        "a.lower": "regressed", "b.higher": "improved", "c.equal": "ok", "d.gone": "missing"}
    assert table.filter(pl.col("metric") == "a.lower")["change"].item() == pytest.approx(1.2)
    assert compare({**current, "c.equal": Metric("c.equal", 41, "equal", 0, relative=False)},
                   baseline).filter(pl.col("metric") == "c.equal")["status"].item() == "regressed"


def test_check_command_exit_codes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    def summary(ratio: float) -> None:
        pl.DataFrame({"strategy": ["s"], "paired_ratio_raw_write": [ratio], "ratio_raw_fdatasync": [None],
                      "growth": [1.0]}, schema_overrides={"ratio_raw_fdatasync": pl.Float64}).write_parquet(
            run / "write_cost_summary.parquet")

    summary(2.0)
    baseline = tmp_path / "baseline.json"

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "experiments", "check", str(run), "--baseline", str(baseline), *extra],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)

    assert check().returncode == 2  # no baseline yet
    assert check("--update").returncode == 0
    ok = check()
    assert ok.returncode == 0 and "nothing moved" in ok.stdout
    summary(9.0)
    bad = check()
    assert bad.returncode == 1 and "write_cost.s.paired_ratio_raw_write" in bad.stdout and "regressed" in bad.stdout


def test_the_cache_reuses_a_job_only_at_a_clean_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = OmegaConf.create({"seed": 1, "force": False, "progress": True, "write_cost": {"entries": 10}})
    monkeypatch.setattr(sweep, "commit", lambda: "abc123")
    key = sweep.job_key(cfg)
    assert key is not None and key == sweep.job_key(OmegaConf.create({**OmegaConf.to_container(cfg), "force": True}))
    assert key != sweep.job_key(OmegaConf.create({**OmegaConf.to_container(cfg), "seed": 2}))
    out, again, cache = tmp_path / "job", tmp_path / "again", tmp_path / "cache"
    out.mkdir(), again.mkdir()
    (out / "write_cost_summary.parquet").write_bytes(b"table")
    assert not sweep.restore(key, again, cache)
    sweep.store(key, out, cache)
    assert sweep.restore(key, again, cache) and (again / "write_cost_summary.parquet").read_bytes() == b"table"
    monkeypatch.setattr(sweep, "commit", lambda: "abc123+dirty")
    assert sweep.job_key(cfg) is None


def test_a_sweep_ends_with_one_combined_table_and_report(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    done = subprocess.run(
        [sys.executable, "-m", "experiments", "run", "-m", "measure=[write_cost]", "strategy=[jsonl_none],[sqlite_wal_off]",
         "write_cost.entries=50",
         "write_cost.warmup=5", "write_cost.window=20", "progress=false", f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(sweep_dir / "report.md")
    combined = pl.read_parquet(sweep_dir / "write_cost_samples.parquet")
    assert sorted(combined["job"].unique().to_list()) == ["0", "1"]
    assert set(combined.filter(pl.col("job") == "1")["strategy"].unique()) == {"sqlite_wal_off"}
    text = (sweep_dir / "report.md").read_text()
    assert "[0/report.md](0/report.md)" in text and "write_cost.sqlite_wal_off.paired_ratio_raw_write" in text
