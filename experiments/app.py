"""The Hydra app behind ``python -m experiments run``: compose the config, measure, report."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from experiments.strategy_configs import CONFIG_DIR

__all__ = ["run"]


# An absolute config path: a relative one is resolved as a Python package when the app is
# started with ``python -m``, and configs/ is a folder of YAML files, not a package.
@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def run(cfg: DictConfig) -> str:
    """Run the measurements of ``cfg`` into Hydra's output folder; print and return the report's path."""
    from hydra.core.hydra_config import HydraConfig
    from tqdm import tqdm

    from hydra.types import RunMode

    from experiments.report import build_report
    from experiments.sweep import job_key, restore, store
    from experiments.timing import timing_slot
    from experiments.write_cost_job import planned_appends, run_write_cost

    hydra_cfg = HydraConfig.get()
    out = Path(hydra_cfg.runtime.output_dir)
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    key = job_key(cfg) if sweeping else None
    if sweeping and not cfg.force and restore(key, out):
        print(f"reused the tables of an earlier job with the same config (key {key}); force=true measures again",
              file=sys.stderr)
    else:
        names = [str(s.name) for s in cfg.strategy.values()]
        workload = OmegaConf.to_object(cfg.workload)
        settings = OmegaConf.to_object(cfg.write_cost)
        total = planned_appends(names, settings)
        with timing_slot(), tqdm(total=total, unit="append", desc="write cost", disable=not cfg.progress,
                                 file=sys.stderr) as bar:
            run_write_cost(names, settings, workload, out, progress=bar.update)
        store(key, out)
    report = build_report(out)
    print(report)
    return str(report)
