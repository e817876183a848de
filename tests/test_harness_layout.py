"""The harness's shape: a dozen top-level modules at most, no import cycle, layers that import only
downwards, no measurement importing another, no strategy family named in harness code, and every
registered measurement complete (its interface, its config group)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from experiments.core.measurement import Measurement
from experiments.core.strategy import CONFIG_DIR
from experiments.measurements import MEASUREMENTS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "experiments"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The harness modules ``path`` imports anywhere in it (top level or inside a function)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found |= {n for n in names if n in known}
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(path, known) - {name} for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_at_most_a_dozen_top_level_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert packages == ["core", "gate", "measurements", "report", "workloads"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "experiments"


def test_layers_import_only_downwards() -> None:
    """core and workloads import no measurement, report, gate or app; a measurement imports no other."""
    upper = {"measurements", "report", "gate", "app", "__main__", "sweep"}
    wrong = []
    for module, imported in _graph().items():
        layer = _layer(module)
        for target in imported:
            if layer in ("core", "workloads") and _layer(target) in upper:
                wrong.append(f"{module} -> {target}")
            if layer == "workloads" and _layer(target) == "core" and not target.startswith("experiments.core.runinfo"):
                wrong.append(f"{module} -> {target}")
            if layer == "measurements" and _layer(target) in upper - {"measurements"}:
                wrong.append(f"{module} -> {target}")
            if layer == "measurements" and module.count(".") >= 2 and target.startswith("experiments.measurements."):
                if target.split(".")[2] != module.split(".")[2]:
                    wrong.append(f"{module} -> {target} (a measurement imports another)")
    assert not wrong, "\n".join(sorted(wrong))


def _families() -> list[str]:
    families = {OmegaConf.load(p).family for p in (CONFIG_DIR / "strategy").glob("*.yaml")}
    return sorted(str(f) for f in families)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _family_literals(source: str, families: list[str]) -> Iterator[str]:
    """String literals (not docstrings) naming a family: the family as a word of its own, not a file
    extension (``.jsonl``) nor part of a longer name (``jsonl_none``, ``sqlite3``) nor a URL's scheme
    (``postgres://``, in a workload's text)."""
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, families)) + r")(?!\w|://)")
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if pattern.search(node.value):
                yield f"line {node.lineno}: {node.value[:80]!r}"


def test_the_family_check_finds_a_family_literal() -> None:
    families = ["jsonl", "sqlite"]
    assert list(_family_literals('x = y == "sqlite"\n', families)) == ["line 1: 'sqlite'"]
    assert list(_family_literals('f"{n} is jsonl"\n', families))
    assert not list(_family_literals('"""A jsonl docstring."""\np = "x.jsonl"; q = "jsonl_none"; import sqlite3\n', families))
    assert not list(_family_literals('url = "sqlite://db1.internal/app"\n', families))


@pytest.mark.parametrize("path", sorted([*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_harness_code_names_a_strategy_family(path: Path) -> None:
    found = list(_family_literals(path.read_text(encoding="utf-8"), _families()))
    assert not found, f"{path.relative_to(ROOT)} names a strategy family (declare it in the strategy's YAML):\n" + "\n".join(found)


@pytest.mark.parametrize("measurement", MEASUREMENTS, ids=lambda m: m.name)
def test_every_registered_measurement_is_complete(measurement: Measurement) -> None:
    assert isinstance(measurement, Measurement)  # every member of the interface is there
    assert measurement.name.isidentifier() and measurement.tables
    assert isinstance(measurement.settings, type) and isinstance(measurement.timed, bool) and measurement.unit
    assert (CONFIG_DIR / "measurements" / measurement.name / "default.yaml").is_file()
    package = PACKAGE / "measurements" / measurement.name
    assert (package / "__init__.py").is_file() and type(measurement).__module__ == f"experiments.measurements.{measurement.name}"
    assert len({m.name for m in MEASUREMENTS}) == len(MEASUREMENTS)


def test_no_measurement_module_is_long() -> None:
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert not long, "\n".join(long)
