"""Every config option composes, validates and instantiates; every YAML setting says what it is."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from experiments.measures import MEASURES
from conftest import skip_if_unavailable
from experiments.schema import RunConfig, register
from experiments.strategy_configs import CONFIG_DIR, strategy_names

EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))
YAMLS = sorted(CONFIG_DIR.rglob("*.yaml"))


@pytest.fixture(scope="module", autouse=True)
def _schemas() -> None:
    register()


def _compose(*overrides: str, hydra: bool = False):  # type: ignore[no-untyped-def]
    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIG_DIR)):
        return compose("config", overrides=list(overrides), return_hydra_config=hydra)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_preset_composes_into_valid_typed_settings(experiment: str) -> None:
    cfg = _compose(f"experiment={experiment}")
    run = OmegaConf.to_object(cfg)
    assert isinstance(run, RunConfig)  # every settings dataclass validated itself (__post_init__)
    assert run.measure and set(run.measure) <= set(MEASURES)
    assert set(run.strategy) <= set(strategy_names())
    for name in run.strategy:
        assert run.strategy[name].name == name


@pytest.mark.parametrize("name", strategy_names())
def test_every_strategy_config_instantiates_its_store(name: str, tmp_path: Path) -> None:
    cfg = _compose(f"strategy=[{name}]")
    try:
        store = instantiate(cfg.strategy[name].store, root=str(tmp_path))
    except Exception as exc:
        skip_if_unavailable(exc)  # a server strategy where the server's binaries are missing
        raise
    assert store.capabilities.durability in ("per_append", "batch", "process", "none")
    assert (cfg.strategy[name].durable is True) == (store.capabilities.durability == "per_append")
    store.close()


@pytest.mark.parametrize("group", ["workload", "crash", "tokens", "compaction"])
def test_every_group_option_composes(group: str) -> None:
    for option in sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml")):
        cfg = _compose(f"{group}={option}")
        assert OmegaConf.to_object(cfg[group]) is not None


@pytest.mark.parametrize(("launcher", "plugin"), [("local", "hydra_plugins.hydra_joblib_launcher"),
                                                   ("slurm", "hydra_plugins.hydra_submitit_launcher"),
                                                   ("ray_cluster", "hydra_plugins.hydra_ray_launcher")])
def test_launcher_configs_compose_where_their_plugin_is_installed(launcher: str, plugin: str) -> None:
    if importlib.util.find_spec(plugin) is None:
        pytest.skip(f"{plugin} is not installed (pip install 'aptmem[cluster]' for the cluster launchers)")
    cfg = _compose(f"hydra/launcher={launcher}", hydra=True)
    assert "_target_" in cfg.hydra.launcher


def test_a_typo_fails_at_load() -> None:
    with pytest.raises(Exception, match="write_cost"):
        _compose("write_cost.entriez=5")
    with pytest.raises(ValueError, match="sideways"):
        OmegaConf.to_object(_compose("crash.damages=[torn,sideways]"))  # a value the settings refuse


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: str(p.relative_to(CONFIG_DIR)))
def test_every_yaml_setting_has_a_comment(path: Path) -> None:
    missing = [f"{path.name}:{number}: {line.strip()}" for number, line in enumerate(path.read_text().splitlines(), 1)
               if re.match(r"^\s*[A-Za-z_][\w.]*:\s*[^\s#]", line) and "#" not in line]
    assert not missing, "settings without a comment:\n" + "\n".join(missing)
