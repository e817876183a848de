"""The Hydra app behind ``python -m experiments run``: compose the config, measure, report."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import hydra
from omegaconf import DictConfig

from experiments.core.strategy import CONFIG_DIR

__all__ = ["run"]


# An absolute config path: a relative one is resolved as a Python package when the app is
# started with ``python -m``, and configs/ is a folder of YAML files, not a package.
@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def run(cfg: DictConfig) -> str:
    """Make the measurements ``cfg.measure`` lists into Hydra's output folder; print the report's path."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from experiments.report.page import build_report
    from experiments.sweep import job_key, restore, store

    hydra_cfg = HydraConfig.get()
    out = Path(hydra_cfg.runtime.output_dir)
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    key = job_key(cfg) if sweeping else None
    if sweeping and not cfg.force and restore(key, out):
        print(f"reused the tables of an earlier job with the same config (key {key}); force=true measures again",
              file=sys.stderr)
    else:
        measure_all(cfg, out)
        store(key, out)
    report = build_report(out)
    print(report)
    return str(report)


def measure_all(cfg: DictConfig, out: Path) -> None:
    """Run each measurement of ``cfg.measure`` in turn, each with its own progress bar."""
    from tqdm import tqdm

    from experiments.core.measurement import MEASURES
    from experiments.core.timing import timing_slot

    unknown = [name for name in cfg.measure if name not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measurement(s) {unknown}; choose from {', '.join(MEASURES)}")
    for name in cfg.measure:
        measure = MEASURES[name]
        started = time.perf_counter()
        with timing_slot(measure.timed), tqdm(total=measure.plan(cfg), unit=measure.unit, desc=f"{name:<12}",
                                              disable=not cfg.progress, file=sys.stderr) as bar:
            measure.run(cfg, out, bar.update)
        if cfg.progress:
            print(f"{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
