"""The measurements a run can make, behind one small interface the Hydra app iterates over.

Each has a name (what ``measure: [...]`` lists), whether it times anything (timed ones hold the
machine's timing lock, :mod:`experiments.core.timing`), how much work it plans (for the progress bar)
and how to run it on a composed config. Each writes its own tables into the run folder; the
report reads them back (:mod:`experiments.report.page`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

__all__ = ["MEASURES", "Measure"]

Progress = Callable[[int], object]


@dataclass(frozen=True)
class Measure:
    """One measurement: ``plan(cfg)`` units of work, ``run(cfg, out, progress)`` writes its tables."""

    name: str
    timed: bool
    unit: str
    plan: Callable[[DictConfig], int]
    run: Callable[[DictConfig, Path, Progress], object]


def _strategies(cfg: DictConfig) -> list[Any]:
    """The composed strategy configs of the run (command-line overrides included)."""
    return list(cfg.strategy.values())


def _settings(node: Any) -> Any:
    return OmegaConf.to_object(node)


def _write_cost_plan(cfg: DictConfig) -> int:
    from experiments.measurements.write_cost.job import planned_appends

    return planned_appends(_strategies(cfg), _settings(cfg.write_cost))


def _write_cost_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.write_cost.job import run_write_cost

    return run_write_cost(_strategies(cfg), _settings(cfg.write_cost), _settings(cfg.workload), out, progress=progress)


def _memory_plan(cfg: DictConfig) -> int:
    from experiments.measurements.memory.job import planned_measurements

    return planned_measurements(_strategies(cfg), _settings(cfg.memory))


def _memory_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.memory.job import run_memory

    return run_memory(_strategies(cfg), _settings(cfg.memory), _settings(cfg.workload), out, progress=progress)


def _crash_plan(cfg: DictConfig) -> int:
    from experiments.measurements.crash.job import planned_cases

    return planned_cases(_strategies(cfg), _settings(cfg.crash))


def _crash_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.crash.job import run_crash

    return run_crash(_strategies(cfg), _settings(cfg.crash), _settings(cfg.workload), out, progress=progress)


def _concurrency_plan(cfg: DictConfig) -> int:
    from experiments.measurements.concurrency.job import planned_mode_runs

    return len(cfg.strategy) + planned_mode_runs(_settings(cfg.concurrency))


def _hostile_plan(cfg: DictConfig) -> int:
    from experiments.measurements.hostile.job import planned_cases

    return planned_cases()


def _hostile_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.hostile.job import run_hostile

    return run_hostile(out, progress=progress)


def _concurrency_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.concurrency.job import run_concurrency

    return run_concurrency(_strategies(cfg), _settings(cfg.concurrency), out, progress=progress)


def _anatomy_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.anatomy.job import run_anatomy

    tables = run_anatomy(_strategies(cfg), out)
    progress(len(cfg.strategy))
    return tables


def _tokens_plan(cfg: DictConfig) -> int:
    from experiments.measurements.tokens.job import planned_steps

    return planned_steps(_settings(cfg.tokens))


def _tokens_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.tokens.job import run_tokens

    return run_tokens(_settings(cfg.tokens), out, progress=progress)


def _compaction_plan(cfg: DictConfig) -> int:
    from experiments.measurements.compaction.job import planned_appends

    return planned_appends(_settings(cfg.compaction), _settings(cfg.workload))


def _compaction_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.compaction.job import run_compaction

    return run_compaction(_settings(cfg.compaction), _settings(cfg.workload), out, progress=progress)


def _transcripts_plan(cfg: DictConfig) -> int:
    from experiments.measurements.transcripts.job import planned_steps

    return planned_steps(_settings(cfg.transcripts))


def _transcripts_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.transcripts.job import run_transcripts

    return run_transcripts(_settings(cfg.transcripts), out, progress=progress)


def _crash_explore_plan(cfg: DictConfig) -> int:
    from experiments.measurements.crash_explore.job import planned_units

    return planned_units(_strategies(cfg), _settings(cfg.crash_explore))


def _crash_explore_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.crash_explore.job import run_crash_explore

    return run_crash_explore(_strategies(cfg), _settings(cfg.crash_explore), _settings(cfg.workload), out,
                             progress=progress)


def _fuzz_plan(cfg: DictConfig) -> int:
    from experiments.measurements.fuzz.job import planned_inputs

    return planned_inputs(_settings(cfg.fuzz))


def _fuzz_run(cfg: DictConfig, out: Path, progress: Progress) -> object:
    from experiments.measurements.fuzz.job import run_fuzz

    return run_fuzz(_settings(cfg.fuzz), out, progress=progress)


#: Every measurement, in the order a run makes them.
MEASURES: dict[str, Measure] = {m.name: m for m in (
    Measure("write_cost", True, "append", _write_cost_plan, _write_cost_run),
    Measure("memory", True, "process", _memory_plan, _memory_run),
    Measure("crash", False, "case", _crash_plan, _crash_run),
    Measure("crash_explore", False, "operation", _crash_explore_plan, _crash_explore_run),
    Measure("concurrency", False, "run", _concurrency_plan, _concurrency_run),
    Measure("hostile", False, "case", _hostile_plan, _hostile_run),
    Measure("anatomy", False, "strategy", lambda cfg: len(cfg.strategy), _anatomy_run),
    Measure("tokens", True, "step", _tokens_plan, _tokens_run),
    Measure("compaction", False, "append", _compaction_plan, _compaction_run),
    Measure("transcripts", False, "step", _transcripts_plan, _transcripts_run),
    Measure("fuzz", False, "input", _fuzz_plan, _fuzz_run),
)}
