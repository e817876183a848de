"""Sweeps: reuse configurations already measured, and combine the jobs into one table and report.

* A job's key is a hash of its resolved config (Hydra's own settings, ``force`` and ``progress``
  left out) and of the commit. A finished job's tables are stored under ``reports/cache/<key>``;
  a later job with the same key copies them instead of measuring again, unless ``force=true``.
  A work tree with uncommitted changes is never cached: its code cannot be named by a commit.
* :class:`CombineSweep`, a Hydra callback, runs once all jobs of a multirun are done: it
  concatenates each table over the jobs (adding ``job`` and ``overrides`` columns) into the sweep
  folder, and writes ``report.md`` there: the jobs, their overrides, every metric side by side,
  and links to each job's own report.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import polars as pl
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from experiments.core.markdown import markdown_table
from experiments.gate.metrics import collect_metrics
from experiments.core.runinfo import REPO_ROOT, commit

__all__ = ["CACHE_DIR", "CombineSweep", "combine", "job_key", "rebuild", "restore", "store"]

CACHE_DIR = REPO_ROOT / "reports" / "cache"
_DONE = "DONE"


def job_key(cfg: DictConfig) -> str | None:
    """The cache key of a job's config at this commit; None when the work tree is dirty."""
    revision = commit()
    if revision == "unknown" or revision.endswith("+dirty"):
        return None
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(plain, dict)
    for key in ("hydra", "force", "progress"):
        plain.pop(key, None)
    text = OmegaConf.to_yaml(OmegaConf.create(plain), sort_keys=True)
    return hashlib.sha256(f"{revision}\n{text}".encode()).hexdigest()[:20]


def restore(key: str | None, out: Path, cache: Path = CACHE_DIR) -> bool:
    """Copy a finished job's tables into ``out``; False when there is none for ``key``."""
    if key is None or not (cache / key / _DONE).exists():
        return False
    for item in (cache / key).iterdir():
        if item.name != _DONE and item.is_file():
            shutil.copy2(item, out / item.name)
    return True


def store(key: str | None, out: Path, cache: Path = CACHE_DIR) -> None:
    """Keep a finished job's tables (parquet, CSV, notes) under its key."""
    if key is None:
        return
    target = cache / key
    target.mkdir(parents=True, exist_ok=True)
    for item in out.iterdir():
        if item.is_file() and item.suffix in (".parquet", ".csv", ".json"):
            shutil.copy2(item, target / item.name)
    (target / _DONE).write_text("complete\n")


def _jobs(sweep_dir: Path) -> list[tuple[str, str, Path]]:
    """(job name, overrides, folder) of every finished job of a sweep, in job order."""
    jobs = []
    for folder in sorted((p for p in sweep_dir.iterdir() if p.is_dir()), key=lambda p: (len(p.name), p.name)):
        overrides_file = folder / ".hydra" / "overrides.yaml"
        if not overrides_file.exists() or not (folder / "report.md").exists():
            continue
        overrides = OmegaConf.load(overrides_file)
        jobs.append((folder.name, " ".join(str(o) for o in overrides), folder))
    return jobs


def combine(sweep_dir: Path) -> Path:
    """Concatenate every job's tables into ``sweep_dir`` and write the sweep's ``report.md``."""
    jobs = _jobs(sweep_dir)
    names = sorted({p.stem for _, _, folder in jobs for p in folder.glob("*.parquet")})
    for name in names:
        parts = [pl.read_parquet(folder / f"{name}.parquet").with_columns(pl.lit(job).alias("job"), pl.lit(over).alias("overrides"))
                 for job, over, folder in jobs if (folder / f"{name}.parquet").exists()]
        table = pl.concat(parts, how="diagonal_relaxed")
        table.write_parquet(sweep_dir / f"{name}.parquet")
        table.write_csv(sweep_dir / f"{name}.csv")
    metrics: dict[str, dict[str, Any]] = {}
    for job, _, folder in jobs:
        for name, metric in collect_metrics(folder).items():
            metrics.setdefault(name, {"metric": name})[f"job {job}"] = metric.value
    lines = ["# aptmem sweep", "", f"{len(jobs)} jobs; combined tables in this folder ({', '.join(names)}).", "",
             "## Jobs", "", markdown_table(pl.DataFrame(
                 [{"job": job, "overrides": over or "(defaults)", "report": f"[{job}/report.md]({job}/report.md)"}
                  for job, over, _ in jobs], schema={"job": pl.String, "overrides": pl.String, "report": pl.String})), ""]
    if metrics:
        table = pl.DataFrame(list(metrics.values()))
        lines += ["## Metrics side by side", "", markdown_table(table.sort("metric")), ""]
    path = sweep_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def rebuild(sweep_dir: Path) -> Path:
    """Rebuild every finished job's report from its tables, then the sweep's combined tables and report."""
    from experiments.core.runfolder import is_run_folder
    from experiments.report.page import build_report

    for folder in sorted(p for p in sweep_dir.iterdir() if p.is_dir()):
        if (folder / ".hydra" / "overrides.yaml").exists() and is_run_folder(folder):
            build_report(folder)
    return combine(sweep_dir)


class CombineSweep(Callback):
    """Hydra callback: after the last job of a multirun, combine the jobs (see :func:`combine`)."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Combine the sweep and print the path of its report (the last line printed)."""
        sweep_dir = Path(config.hydra.sweep.dir)
        if sweep_dir.is_dir():
            print(combine(sweep_dir))
