"""The Hydra app behind ``python -m experiments run``: compose the config, measure, report.

The app iterates the registry (:data:`experiments.measurements.MEASUREMENTS`): for each name of
``cfg.measure`` it takes the measurement's typed settings, holds the machine's timing lock if it
times anything, and runs it into Hydra's output folder with a progress bar; then the report is
built from the folder's tables alone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import hydra
from omegaconf import DictConfig

from experiments.core.measurement import Measurement
from experiments.core.strategy import CONFIG_DIR

__all__ = ["benchmark", "measure_all", "measure_one", "run"]


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


def measure_all(cfg: DictConfig, out: Path, measurements: Sequence[Measurement] | None = None) -> None:
    """Run each measurement of ``cfg.measure`` in turn into ``out``, each with its own progress bar.

    The strategies are checked against their spec first, and any service one declares is started
    for the whole run (stopped when it ends, however it ends).
    """
    from omegaconf import OmegaConf
    from tqdm import tqdm

    from experiments.core.config import settings_of
    from experiments.core.measurement import RunContext
    from experiments.core.runfolder import RunFolder
    from experiments.core.runfolder import write_strategies
    from experiments.core.strategy import Service, Skipped, services_started, strategy_specs
    from experiments.core.timing import timing_slot
    from experiments.measurements import by_name

    registry = by_name(None if measurements is None else tuple(measurements))
    unknown = [name for name in cfg.measure if name not in registry]
    if unknown:
        raise ValueError(f"unknown measurement(s) {unknown}; choose from {', '.join(registry)}")
    chosen = [(registry[name], settings_of(cfg, registry[name])) for name in cfg.measure]  # every setting checked first
    workload = OmegaConf.to_object(cfg.workload)
    folder = RunFolder(out)
    skipped: list[Skipped] = []
    live: dict[str, Service] = {}
    with services_started(strategy_specs(cfg.strategy), skipped=skipped, live=live) as strategies:
        write_strategies(folder, strategies, skipped)
        for gone in skipped:
            print(f"skipped {gone.strategy}: {gone.reason}", file=sys.stderr)
        ctx = RunContext(strategies=strategies, workload=workload, folder=folder, services=live)
        for measurement, settings in chosen:
            started = time.perf_counter()
            with timing_slot(measurement.timed), tqdm(total=measurement.plan(settings, ctx), unit=measurement.unit,
                                                      desc=f"{measurement.name:<12}", disable=not cfg.progress,
                                                      file=sys.stderr) as bar:
                measurement.run(settings, ctx, bar.update)
            if cfg.progress:
                print(f"{measurement.name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)


def measure_one(name: str, overrides: Sequence[str], out: Path, preset: str) -> Path:
    """Measure ``name`` alone into ``out`` with the config the app composes for ``overrides`` (``experiment=preset``
    unless they name a preset), without Hydra's run folder; build the report; return its path.

    What a benchmark script runs: the same measurement, settings and report as ``python -m
    experiments run measure=[name]``, with no second set of settings.
    """
    from experiments.core.config import compose
    from experiments.measurements import MEASUREMENTS
    from experiments.report.page import build_report

    chosen = [] if any(o.startswith("experiment=") for o in overrides) else [f"experiment={preset}"]
    cfg = compose(MEASUREMENTS, [*chosen, *overrides, f"measure=[{name}]"])
    measure_all(cfg, out)
    return build_report(out)


def benchmark(argv: Sequence[str] | None, *, name: str, preset: str, description: str) -> int:
    """A benchmark script's command line: ``[--out DIR] [HYDRA OVERRIDES...]``; measure ``name`` alone
    (:func:`measure_one`), print the report, and last its path. Returns the exit status."""
    import argparse

    from experiments.core.runinfo import REPO_ROOT

    parser = argparse.ArgumentParser(description=description, epilog="The overrides are those of "
                                     "`python -m experiments run`; experiment=" + preset + " unless another preset is named.")
    parser.add_argument("--out", type=Path, default=None, help=f"output folder (default reports/runs/{name}-<time>)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the run config")
    args = parser.parse_intermixed_args(argv)
    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime(f"{name}-%Y%m%d-%H%M%S")
    report = measure_one(name, args.overrides, out, preset=preset)
    print(report.read_text(encoding="utf-8"))
    print(report)
    return 0
