"""Extending the harness the documented way, from the real command line in fresh processes:

* a toy measurement (one package, one registry line, one YAML file) runs, writes its section and
  is held by the gate;
* a toy fourth strategy family (one module, one YAML file) appears in the headline table and the
  Pareto figure, though no harness code names it;
* a strategy declaring a service gets it started before its stores are built, its settings
  merged into the store's, and stopped after.

The toy code lives in a scratch folder, never in the repository: Hydra finds its YAML through
``hydra.searchpath``, Python its modules through ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from experiments.core import figures
from experiments.core.strategy import load_strategy, services_started
from experiments.report.comparison import comparison_section, pareto_points

ROOT = Path(__file__).resolve().parent.parent

TOY_MEASUREMENT = '''
"""A toy measurement: counts its rows and the run's strategies into one table."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from experiments.core.metric import Metric
from experiments.core.runfolder import read_table


@dataclass(kw_only=True)
class ToySettings:
    """What the toy counts."""

    #: rows of the toy table
    rows: int = 3
    #: a label the YAML file changes
    label: str = "schema"


class Toy:
    """The toy measurement."""

    name = "toy"
    settings = ToySettings
    timed = False
    unit = "row"
    tables = ("toy",)

    def plan(self, settings, ctx):
        return settings.rows

    def run(self, settings, ctx, progress):
        table = pl.DataFrame({"row": list(range(settings.rows)), "strategies": [len(ctx.strategies)] * settings.rows})
        ctx.folder.write("toy", {"toy": table}, {"label": settings.label})
        progress(settings.rows)

    def section(self, run_dir):
        table = read_table(run_dir, "toy")
        if table is None:
            return None
        return f"## Toy rows\\n\\n{table.height} rows over {table['strategies'][0]} strategies."

    def metrics(self, run_dir):
        table = read_table(run_dir, "toy")
        if table is not None:
            yield Metric("toy.rows", float(table.height), "higher", 0, relative=False)
'''

# What the one registry line does, for a process that starts the real command line.
MAIN_WITH_TOY = """
import sys
import experiments.measurements as registry
from toy_measurement import Toy
registry.MEASUREMENTS = (*registry.MEASUREMENTS, Toy())
from experiments.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _env(*paths: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _run(args: list[str], *paths: Path, with_toy: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", MAIN_WITH_TOY, *args] if with_toy else [sys.executable, "-m", "experiments", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=_env(*paths), timeout=600)


def test_a_toy_measurement_runs_writes_its_section_and_gates(tmp_path: Path) -> None:
    code, configs = tmp_path / "code", tmp_path / "configs"
    (code / "toy_measurement").mkdir(parents=True)
    (code / "toy_measurement" / "__init__.py").write_text(TOY_MEASUREMENT)
    (configs / "measurements" / "toy").mkdir(parents=True)
    (configs / "measurements" / "toy" / "default.yaml").write_text("label: yaml  # what the run changes: the label\n")
    run_dir = tmp_path / "run"
    done = _run(["run", "measure=[toy]", "toy.rows=4", f"hydra.searchpath=[file://{configs}]", "progress=false",
                 "strategy=[jsonl_none,sqlite_wal_full]", f"hydra.run.dir={run_dir}"], code, with_toy=True)
    assert done.returncode == 0, done.stderr
    assert pl.read_parquet(run_dir / "toy.parquet").height == 4
    assert b'"label":"yaml"' in (run_dir / "toy_notes.json").read_bytes().replace(b" ", b"").replace(b"\n", b"")
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Toy rows\n\n4 rows over 2 strategies." in report

    baseline = tmp_path / "baseline.json"
    assert _run(["check", str(run_dir), "--baseline", str(baseline), "--update"], code, with_toy=True).returncode == 0
    assert _run(["check", str(run_dir), "--baseline", str(baseline)], code, with_toy=True).returncode == 0
    pl.DataFrame({"row": [0], "strategies": [2]}).write_parquet(run_dir / "toy.parquet")  # fewer rows: worse
    gated = _run(["check", str(run_dir), "--baseline", str(baseline)], code, with_toy=True)
    assert gated.returncode == 1 and "toy.rows" in gated.stdout and "regressed" in gated.stdout
    # Without the registry line the measurement does not exist: the harness names what it knows.
    unknown = _run(["run", "measure=[toy]", f"hydra.searchpath=[file://{configs}]", f"hydra.run.dir={tmp_path / 'x'}"])
    assert unknown.returncode != 0


TOY_STORE = '''
"""A toy strategy family: aptmem's log under a name no harness code knows."""

from aptmem.jsonl_store import JsonlStore


class ToyLogStore(JsonlStore):
    """aptmem's log, declared as a family of its own."""
'''

TOY_STRATEGY = """\
# @package strategy.toy_log
name: toy_log             # label in tables and figures
family: toylog            # a family the harness never heard of
durable: false            # no sync: a power loss may take the unsynced tail
recovery_setting: recovery  # the store setting naming its recovery mode
store:
  _target_: toy_store.ToyLogStore  # the store class (in the toy's own module)
  sync: none              # never sync
  recovery: skip          # the recovery mode it reads in
power_loss:               # how the crash measurement simulates a power loss
  model: trace            # its Python-level file-system calls, traced
  lines: true             # one entry a line
ignore_files: [.lock]     # the writer lock holds no data
"""


def test_a_toy_fourth_family_appears_in_the_headline_table_and_the_pareto_figure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, configs = tmp_path / "code", tmp_path / "configs"
    code.mkdir()
    (code / "toy_store.py").write_text(TOY_STORE)
    (configs / "strategy").mkdir(parents=True)
    (configs / "strategy" / "toy_log.yaml").write_text(TOY_STRATEGY)
    run_dir = tmp_path / "run"
    done = _run(["run", "measure=[write_cost,crash,anatomy]", f"hydra.searchpath=[file://{configs}]",
                 "strategy=[jsonl_none,sqlite_wal_full,full_json_atomic,toy_log]", "write_cost.entries=40",
                 "write_cost.quadratic_entries=20", "crash.kills=1", "crash.compaction_kills=0", "crash.images=1",
                 "crash.entries=30", "crash.damages=[torn,drop]", "crash.modes=[skip]", "progress=false",
                 f"hydra.run.dir={run_dir}"], code)
    assert done.returncode == 0, done.stderr
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## The four approaches compared" in report
    header = next(line for line in report.splitlines() if line.startswith("|  | jsonl"))
    assert header == "|  | jsonl | sqlite | full_json | toylog |"
    row = next(line for line in report.splitlines() if line.startswith("| fault tolerance |"))
    assert row.count("power loss (own unsynced tail") == 4  # every family measured, the toy too
    points = pareto_points(run_dir)
    assert points is not None and "toylog" in points["family"].to_list()

    drawn: list[list[str]] = []

    def keep_legend(fig, path, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append([text.get_text() for ax in fig.axes if ax.get_legend() for text in ax.get_legend().get_texts()])
        return real_save(fig, path, **kwargs)

    real_save = figures.save_figure
    monkeypatch.setattr("experiments.report.frontier.save_figure", keep_legend)
    assert comparison_section(run_dir) is not None
    families_drawn = {label.rsplit("(", 1)[-1].rstrip(")") for label in drawn[-1] if "(" in label}
    assert drawn and {"jsonl", "sqlite", "full_json", "toylog"} <= families_drawn


TOY_SERVICE = '''
"""A toy service: records that it ran, and hands the store a setting."""

from pathlib import Path


class ToyService:
    """Writes its state to ``marker``; its start yields the store's batch size."""

    def __init__(self, marker):
        self.marker = Path(marker)

    def start(self, scratch):
        assert Path(scratch).is_dir()
        self.marker.write_text("started")
        return {"batch_size": 7}

    def crash(self):
        self.marker.write_text("crashed")

    def restart(self):
        self.marker.write_text("restarted")

    def stop(self):
        self.marker.write_text("stopped")
'''


def _served_strategy(marker: Path) -> str:
    return f"""\
# @package strategy.toy_served
name: toy_served          # label in tables and figures
family: jsonl             # aptmem's log, with a service beside it
durable: false            # syncs per batch only
recovery_setting: recovery  # the store setting naming its recovery mode
store:
  _target_: strategies.jsonl.JsonlStore  # aptmem's log
  sync: batch             # sync every batch_size appends (the service says how many)
  recovery: skip          # the recovery mode it reads in
power_loss:               # how the crash measurement simulates a power loss
  model: trace            # traced
service:                  # started before the store is built, stopped after
  _target_: toy_service.ToyService  # the service class
  marker: {marker}        # where it records its state
"""


def test_a_declared_service_is_started_merged_into_the_store_and_stopped(tmp_path: Path) -> None:
    code, configs = tmp_path / "code", tmp_path / "configs"
    code.mkdir()
    (code / "toy_service.py").write_text(TOY_SERVICE)
    (configs / "strategy").mkdir(parents=True)
    marker = tmp_path / "marker"
    (configs / "strategy" / "toy_served.yaml").write_text(_served_strategy(marker))
    run_dir = tmp_path / "run"
    done = _run(["run", "measure=[anatomy]", f"hydra.searchpath=[file://{configs}]", "strategy=[jsonl_none,toy_served]",
                 "progress=false", f"hydra.run.dir={run_dir}"], code)
    assert done.returncode == 0, done.stderr
    variants = dict(pl.read_parquet(run_dir / "anatomy.parquet").select("strategy", "variant").iter_rows())
    assert "batch_size=7" in variants["toy_served"] and "batch_size" not in variants["jsonl_none"]
    assert marker.read_text() == "stopped"


def test_services_stop_in_reverse_order_even_when_one_fails_to_start(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import msgspec

    from experiments.core.strategy import ServiceSpec

    events: list[str] = []

    class Recorder:
        def __init__(self, name: str, fail: bool = False) -> None:
            self.name, self.fail = name, fail

        def start(self, scratch: Path) -> dict[str, object]:
            if self.fail:
                raise RuntimeError(f"{self.name} cannot start")
            events.append(f"start {self.name}")
            return {}

        def stop(self) -> None:
            events.append(f"stop {self.name}")

    module = type(sys)("toy_recorders")
    module.Recorder = Recorder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toy_recorders", module)
    base = load_strategy("jsonl_none")

    def served(name: str, fail: bool = False):  # type: ignore[no-untyped-def]
        service = ServiceSpec(target="toy_recorders.Recorder", settings={"name": name, "fail": fail})
        return msgspec.structs.replace(base, name=name, service=service)

    with services_started([served("a"), base, served("b")], tmp_path) as ready:
        assert [s.name for s in ready] == ["a", "jsonl_none", "b"] and ready[1] is base
    assert events == ["start a", "start b", "stop b", "stop a"]
    events.clear()
    with pytest.raises(RuntimeError, match="c cannot start"):
        with services_started([served("a"), served("c", fail=True)], tmp_path):
            pass
    assert events == ["start a", "stop a"]
    assert not list(tmp_path.iterdir())  # the services' scratch folders went with them
