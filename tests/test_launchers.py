"""The SLURM launcher config runs a real sweep through submitit, on submitit's local executor.

The test keeps everything of ``configs/hydra/launcher/slurm.yaml`` (its parameters go through the
submitit launcher's SLURM path, prefixed as SLURM wants them) and swaps only the cluster: a tiny
Hydra plugin, written to the test's folder, makes the launcher's ``submitit.AutoExecutor`` a local
one, which runs each job of the array as its own process on this machine. Skipped without the
launcher (``pip install -e ".[test]"`` installs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("hydra_plugins.hydra_submitit_launcher")

ROOT = Path(__file__).resolve().parent.parent
#: the sweep every launcher test runs: two jobs of a tiny write-cost measurement
_TINY_SWEEP = ["measure=[write_cost]", "strategy=[jsonl_none],[sqlite_wal_off]", "write_cost.entries=50",
               "write_cost.warmup=5", "write_cost.window=20", "progress=false"]

_SHIM = '''
"""SLURM launcher whose executor runs the jobs locally (submitit's LocalExecutor)."""
import submitit
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher


class SlurmOnLocal(SlurmLauncher):
    """SlurmLauncher with submitit's local cluster under it: slurm_* parameters are set, then ignored."""

    def launch(self, job_overrides, initial_job_idx):
        real = submitit.AutoExecutor

        def local(*args, cluster=None, **kwargs):
            assert cluster == "slurm", cluster  # the SLURM path, up to the cluster itself
            return real(*args, cluster="local", **kwargs)

        submitit.AutoExecutor = local
        try:
            return super().launch(job_overrides, initial_job_idx)
        finally:
            submitit.AutoExecutor = real
'''


def test_the_slurm_launcher_runs_a_sweep_through_submitit_locally(tmp_path: Path) -> None:
    plugin = tmp_path / "plugins" / "hydra_plugins" / "aptmem_slurm_on_local"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(_SHIM)
    sweep_dir = tmp_path / "sweep"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "plugins"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "experiments", "run", "-m", "hydra/launcher=slurm",
         "hydra.launcher._target_=hydra_plugins.aptmem_slurm_on_local.SlurmOnLocal", "hydra.launcher.timeout_min=10",
         *_TINY_SWEEP, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Submitit 'slurm' sweep output dir" in done.stdout + done.stderr  # Hydra's log: the SLURM launcher's path
    jobs = sorted((sweep_dir / ".submitit").glob("*/*_result.pkl"))
    assert len(jobs) == 2, "each job ran as a submitit job of its own"
    combined = pl.read_parquet(sweep_dir / "write_cost_samples.parquet")
    assert sorted(combined["job"].unique().to_list()) == ["0", "1"]
    assert done.stdout.strip().splitlines()[-1] == str(sweep_dir / "report.md")
    # and the sweep folder is rebuilt by `experiments report`, like a run folder
    (sweep_dir / "report.md").unlink()
    again = subprocess.run([sys.executable, "-m", "experiments", "report", str(sweep_dir)], capture_output=True, text=True,
                           cwd=ROOT, timeout=600)
    assert again.returncode == 0, again.stderr
    assert (sweep_dir / "report.md").is_file() and "[0/report.md](0/report.md)" in (sweep_dir / "report.md").read_text()


def test_the_ray_launcher_runs_a_sweep_on_a_ray_instance_of_its_own(tmp_path: Path) -> None:
    """``configs/hydra/launcher/ray_cluster.yaml`` as shipped, with ``address=local``: Ray starts on this machine for
    the sweep and stops after it; both jobs run as Ray tasks and the sweep is combined."""
    pytest.importorskip("hydra_plugins.hydra_ray_launcher")
    sweep_dir = tmp_path / "sweep"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-m", "experiments", "run", "-m", "hydra/launcher=ray_cluster",
         "hydra.launcher.ray.init.address=local", "+hydra.launcher.ray.init.num_cpus=2",
         *_TINY_SWEEP, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True, text=True, cwd=ROOT, env={**env, "RAY_DISABLE_USAGE_STATS": "1"}, timeout=900)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    assert "Ray Launcher is launching 2 jobs" in log and "Started a local Ray instance" in log
    assert "(_run_job pid=" in log  # the jobs ran in Ray's worker processes
    for job in ("0", "1"):
        assert (sweep_dir / job / "report.md").exists()
    combined = pl.read_parquet(sweep_dir / "write_cost_summary.parquet")
    assert sorted(combined["strategy"].to_list()) == ["jsonl_none", "sqlite_wal_off"]
