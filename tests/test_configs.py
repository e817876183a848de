"""Every config option composes, validates and instantiates; every YAML setting says what it is; no
setting states its schema's default again."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from experiments.core.config import RunBase, register, run_schema
from experiments.core.strategy import (CONFIG_DIR, CrashModel, Explanations, StrategyConfigError, StrategySpec,
                                       build_store, capabilities, from_node, load_strategy, strategy_names,
                                       strategy_specs)
from experiments.measurements import MEASUREMENTS, by_name
from experiments.workloads.synthetic import WorkloadConfig
from experiments.workloads.transcripts import TranscriptWorkload
from conftest import skip_if_unavailable

EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))
YAMLS = sorted(CONFIG_DIR.rglob("*.yaml"))
REGISTRY = by_name()


@pytest.fixture(scope="module", autouse=True)
def _schemas() -> None:
    register(MEASUREMENTS)


def _compose(*overrides: str, hydra: bool = False):  # type: ignore[no-untyped-def]
    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIG_DIR)):
        return compose("config", overrides=list(overrides), return_hydra_config=hydra)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_preset_composes_into_valid_typed_settings(experiment: str) -> None:
    cfg = _compose(f"experiment={experiment}")
    run = OmegaConf.to_object(cfg)
    assert isinstance(run, RunBase)  # every settings dataclass validated itself (__post_init__)
    assert run.measure and set(run.measure) <= set(REGISTRY)
    for name in REGISTRY:
        assert isinstance(getattr(run, name), REGISTRY[name].settings)
    specs = strategy_specs(cfg.strategy)
    assert {s.name for s in specs} <= set(strategy_names())
    assert all(spec.name == key for spec, key in zip(specs, cfg.strategy, strict=True))


@pytest.mark.parametrize("name", strategy_names())
def test_every_strategy_config_is_a_spec_that_builds_its_store(name: str, tmp_path: Path) -> None:
    cfg = _compose(f"strategy=[{name}]")
    spec = strategy_specs(cfg.strategy)[0]
    assert spec == load_strategy(name)  # the Hydra node and the YAML file give the same spec
    try:
        store = build_store(spec, tmp_path)
    except Exception as exc:
        skip_if_unavailable(exc)  # a server strategy where the server's binaries are missing
        raise
    caps = store.capabilities
    store.close()
    assert caps.durability in ("per_append", "batch", "process", "none")
    assert spec.durable == (caps.durability == "per_append")
    assert capabilities(spec) == caps
    assert spec.default_mode(caps) in caps.recovery_modes
    # The spec crosses into a child process as JSON and comes back whole.
    assert msgspec.json.decode(msgspec.json.encode(spec), type=StrategySpec) == spec


def test_a_strategy_config_with_a_typo_fails_naming_its_file_and_field(tmp_path: Path) -> None:
    good = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "strategy" / "jsonl_none.yaml"))
    assert isinstance(good, dict)
    with pytest.raises(StrategyConfigError, match=r"toy\.yaml.*familly"):
        from_node({**good, "familly": "x"}, "toy.yaml")
    with pytest.raises(StrategyConfigError, match=r"toy\.yaml.*region"):
        from_node({**good, "power_loss": {"model": "sqlite_wal"}}, "toy.yaml")
    with pytest.raises(StrategyConfigError, match=r"toy\.yaml.*_target_"):
        from_node({**good, "store": {"sync": "none"}}, "toy.yaml")


@pytest.mark.parametrize("group", [f"measurements/{m.name}@{m.name}" for m in MEASUREMENTS] + ["workload"])
def test_every_group_option_composes(group: str) -> None:
    folder, _, key = group.partition("@")
    options = sorted(p.stem for p in (CONFIG_DIR / folder).glob("*.yaml"))
    assert options, f"configs/{folder}/ has no option: a measurement needs its default.yaml"
    for option in options:
        cfg = _compose(f"{group}={option}")
        assert OmegaConf.to_object(cfg[key or group]) is not None


def test_the_run_schema_is_built_from_the_registry() -> None:
    schema = run_schema(MEASUREMENTS)
    fields = {f.name: f for f in dataclasses.fields(schema)}
    for measurement in MEASUREMENTS:
        assert fields[measurement.name].type is measurement.settings
    assert schema().measure == [m.name for m in MEASUREMENTS]


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


# -- one source of defaults -------------------------------------------------------------------

def _defaults(schema: type) -> dict[str, Any]:
    """A dataclass schema's defaults, as a YAML file would spell them."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


def _struct_defaults(struct: type) -> dict[str, Any]:
    """A msgspec Struct's defaults (nested Structs as plain mappings)."""
    out = {}
    for f in msgspec.structs.fields(struct):
        if f.default is not msgspec.NODEFAULT:
            out[f.encode_name] = msgspec.to_builtins(f.default)
        elif f.default_factory is not msgspec.NODEFAULT:
            out[f.encode_name] = msgspec.to_builtins(f.default_factory())
    return out


def _restated(values: dict[str, Any], defaults: dict[str, Any], where: str) -> list[str]:
    """Settings of a YAML mapping whose value is the schema's own default (interpolations are changes)."""
    found = []
    for key, value in values.items():
        if key == "defaults" or key not in defaults or (isinstance(value, str) and value.startswith("${")):
            continue
        if value == defaults[key] or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and not isinstance(defaults[key], bool) and defaults[key] == value):
            found.append(f"{where}.{key} = {value!r} (the schema's default)")
    return found


def _yaml(path: Path) -> dict[str, Any]:
    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    return loaded if isinstance(loaded, dict) else {}


def _run_level(values: dict[str, Any], where: str) -> list[str]:
    """What a config at the run's level (config.yaml, a preset) restates of the run's and every measurement's defaults."""
    found = _restated({k: v for k, v in values.items() if k not in REGISTRY}, _defaults(run_schema(MEASUREMENTS)), where)
    for name, measurement in REGISTRY.items():
        if isinstance(values.get(name), dict):
            found += _restated(values[name], _defaults(measurement.settings), f"{where}:{name}")
    return found


def test_no_yaml_restates_a_default_its_schema_holds() -> None:
    """Every default lives in one place, its schema; a YAML file states only what it changes."""
    restated = _run_level(_yaml(CONFIG_DIR / "config.yaml"), "config.yaml")
    for path in sorted((CONFIG_DIR / "experiment").glob("*.yaml")):
        restated += _run_level(_yaml(path), f"experiment/{path.name}")
    for name, measurement in REGISTRY.items():
        for path in sorted((CONFIG_DIR / "measurements" / name).glob("*.yaml")):
            restated += _restated(_yaml(path), _defaults(measurement.settings), f"measurements/{name}/{path.name}")
    for path, schema in ((CONFIG_DIR / "workload" / "synthetic.yaml", WorkloadConfig),
                         (CONFIG_DIR / "workload" / "transcript.yaml", TranscriptWorkload)):
        restated += _restated(_yaml(path), _defaults(schema), f"workload/{path.name}")
    spec_defaults = _struct_defaults(StrategySpec)
    for path in sorted((CONFIG_DIR / "strategy").glob("*.yaml")):
        values = _yaml(path)
        restated += _restated(values, spec_defaults, f"strategy/{path.name}")
        for key, struct in (("power_loss", CrashModel), ("explain", Explanations)):
            if isinstance(values.get(key), dict):
                restated += _restated(values[key], _struct_defaults(struct), f"strategy/{path.name}:{key}")
    assert not restated, "YAML settings that restate their schema's default (delete them):\n" + "\n".join(restated)


def test_the_restated_default_check_catches_a_restated_default() -> None:
    wc = REGISTRY["write_cost"].settings
    assert _restated({"entries": 5000, "warmup": 7}, _defaults(wc), "x") == ["x.entries = 5000 (the schema's default)"]
    from experiments.measurements.crash.settings import DAMAGES

    crash = REGISTRY["crash"].settings
    assert _restated({"damages": list(DAMAGES)}, _defaults(crash), "x")  # a list default spelled out in YAML
    assert not _restated({"seed": "${seed}"}, {"seed": 0}, "x")


def test_a_group_file_changes_its_schema_and_a_preset_changes_both(monkeypatch: pytest.MonkeyPatch) -> None:
    """configs/measurements/<name>/default.yaml lands over the schema's defaults, the preset over both, the command line last."""
    monkeypatch.setenv("APTMEM_TRANSCRIPTS", "/somewhere/else")
    cfg = OmegaConf.to_object(_compose("seed=5"))
    assert cfg.crash.seed == 5  # crash/default.yaml: the run's seed
    assert cfg.transcripts.path == "/somewhere/else"  # transcripts/default.yaml: the environment
    assert cfg.memory.repeats == 1 and cfg.memory.keep_turns == 10  # experiment=default changes one, not the other
    assert OmegaConf.to_object(_compose("memory.repeats=9")).memory.repeats == 9


def _library_defaults_restated(source: str) -> list[str]:
    """Settings fields whose default is a literal equal to the library's own default of the same name
    (aptmem's compaction policy, the precise tier's default tokenizer), instead of naming it."""
    import ast
    import dataclasses as dc

    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.tokens import DEFAULT_TOKENIZER

    # persist is left out: where a measurement fixes it, it is what is judged (crash judges append only)
    library = {f.name: f.default for f in dc.fields(CompactionPolicy) if f.default is not dc.MISSING and f.name != "persist"}
    library["confirm"] = DEFAULT_TOKENIZER
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in library
                and isinstance(node.value, ast.Constant) and node.value.value is not None
                and node.value.value == library[node.target.id]):
            found.append(f"line {node.lineno}: {node.target.id} = {node.value.value!r}")
    return found


def test_no_settings_restate_a_library_default() -> None:
    """The harness replays aptmem's policy: a settings field that means a library default names it."""
    assert _library_defaults_restated("class S:\n    trigger: float = 0.8\n    keep_turns: int = 3\n") == [
        "line 2: trigger = 0.8"]
    restated = []
    for path in sorted((Path(__file__).resolve().parent.parent / "experiments").rglob("settings.py")):
        restated += [f"{path.parent.name}/settings.py {hit}" for hit in _library_defaults_restated(path.read_text())]
    assert not restated, "name the library's default instead (CompactionPolicy.<name>, DEFAULT_TOKENIZER):\n" + \
        "\n".join(restated)


def test_every_nested_setting_can_be_set_from_the_command_line() -> None:
    """A settings field that is itself a dataclass (memory_quality.workload) takes overrides, from a preset too."""
    nested = []
    for name, measurement in REGISTRY.items():
        for f in dataclasses.fields(measurement.settings):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if dataclasses.is_dataclass(default):
                number = next(g.name for g in dataclasses.fields(default) if isinstance(getattr(default, g.name), int))
                value = getattr(default, number) + 1
                cfg = OmegaConf.to_object(_compose(f"{name}.{f.name}.{number}={value}"))
                assert getattr(getattr(getattr(cfg, name), f.name), number) == value, (name, f.name, number)
                nested.append(f"{name}.{f.name}")
    assert "memory_quality.workload" in nested
    full = OmegaConf.to_object(_compose("experiment=full")).memory_quality
    assert full.workload.sessions > REGISTRY["memory_quality"].settings().workload.sessions  # the full size is the preset's
