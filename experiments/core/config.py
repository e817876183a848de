"""The run config: typed schemas built from the measurement registry and registered in Hydra's ConfigStore.

Every setting has its default in one place, its measurement's settings dataclass; the YAML files
of ``configs/`` state only what they change (``tests/test_configs.py`` holds them to that). The
schema of the whole run is made from the registry (:func:`run_schema`): one field per
measurement, typed by its settings class, and one config group per measurement
(``configs/measurements/<name>/default.yaml``, placed at the measurement's key) in the schema's
defaults list, so adding a measurement edits no file of this package. :func:`compose` gives the same config to code that runs outside the
Hydra app (benchmarks, a measurement's own command line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, make_dataclass
from typing import Any

from omegaconf import MISSING, DictConfig, OmegaConf

from experiments.core.measurement import Measurement
from experiments.core.strategy import CONFIG_DIR
from experiments.workloads.synthetic import WorkloadConfig
from experiments.workloads.transcripts import TranscriptWorkload

__all__ = ["RunBase", "compose", "register", "run_schema", "settings_of"]


@dataclass(kw_only=True)
class RunBase:
    """The settings of a run that belong to no measurement."""

    #: seed of everything random in the run (workload, timing order)
    seed: int = 0
    #: show a progress bar per measurement on stderr
    progress: bool = True
    #: in a sweep, measure again even a configuration already measured at this commit
    force: bool = False
    #: the measurements to make, in this order (default: every registered one)
    measure: list[str] = field(default_factory=list)
    #: the strategy configs compared side by side, by name; each is checked against
    #: :class:`experiments.core.strategy.StrategySpec` before anything is measured
    strategy: dict[str, Any] = field(default_factory=dict)
    #: the workload group's choice, typed by its own schema: WorkloadConfig (synthetic) or
    #: TranscriptWorkload (transcript); the group always sets it
    workload: Any = MISSING


def run_schema(measurements: Sequence[Measurement]) -> type:
    """The dataclass of a whole run: :class:`RunBase` plus one typed field per measurement, and a defaults
    list naming each measurement's group (``configs/measurements/<name>/default.yaml``)."""
    names = [m.name for m in measurements]
    fields: list[tuple[str, Any, Any]] = [
        # _self_ first: the schema's defaults, then each group's YAML over them. The groups live under
        # configs/measurements/ (beside no axis of the run that might share a measurement's name).
        ("defaults", list[Any], field(default_factory=lambda: ["_self_", *({f"measurements/{name}@{name}": "default"}
                                                                         for name in names)])),
        ("measure", list[str], field(default_factory=lambda: list(names))),
    ]
    fields += [(m.name, m.settings, field(default_factory=m.settings)) for m in measurements]
    return make_dataclass("RunConfig", fields, bases=(RunBase,), kw_only=True)


def register(measurements: Sequence[Measurement]) -> None:
    """Put the run's schemas into Hydra's ConfigStore (once, before Hydra composes the config)."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=run_schema(measurements))
    cs.store(group="workload", name="synthetic_schema", node=WorkloadConfig)
    cs.store(group="workload", name="transcript_schema", node=TranscriptWorkload)


def compose(measurements: Sequence[Measurement], overrides: Sequence[str] = ()) -> DictConfig:
    """The run config the app would compose from ``measurements`` (the registry) and ``overrides``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    register(measurements)
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))


def settings_of(cfg: DictConfig, measurement: Measurement) -> Any:
    """A measurement's settings of a composed config, as its settings dataclass (validated)."""
    return OmegaConf.to_object(cfg[measurement.name])
