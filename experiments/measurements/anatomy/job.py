"""Readability and complexity of each strategy, measured rather than asserted.

* Readability of the files on disk, after writing the same small session with every strategy:
  the share of bytes that are printable UTF-8 text, whether a plain-text search finds an
  entry's words, how many entries a line holds (1 for a log a line-oriented tool can cut and
  tail), and whether the file's last line is the last entry (``tail -n 1`` works).
* Complexity of the code this repository maintains for it: non-blank, non-comment, non-docstring
  lines of every module of the repo the strategy's class reaches through its imports, not
  counting the core every strategy shares (entries, ids, errors, the store protocol, ...). What
  a strategy leans on outside the repo (the SQLite engine in the standard library) is named.
"""

from __future__ import annotations

import ast
import importlib.util
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from aptmem.entries import User
from experiments.core.runfolder import RunFolder
from experiments.core.runinfo import REPO_ROOT
from experiments.core.strategy import StrategySpec, build_store

__all__ = ["TABLES", "code_lines", "reachable_modules", "run_anatomy"]

TABLES = ("anatomy",)
SESSION = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
_PACKAGES = ("aptmem", "strategies")


def _find(name: str) -> Path | None:
    """The file of a repo module, or None (not a module, or not ours)."""
    try:
        return _module_path(name)
    except (ImportError, ValueError):
        return None


def _module_path(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    return path if REPO_ROOT in path.parents else None


@cache
def _imports(name: str) -> frozenset[str]:
    """The repo modules a module imports (statically, at any depth of its own code)."""
    path = _module_path(name)
    if path is None:
        return frozenset()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from package import module`` names a module; ``from module import name`` does not.
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        for imported in names:
            if imported.split(".")[0] in _PACKAGES and _find(imported) is not None:
                found.add(imported)
    return frozenset(found)


def reachable_modules(name: str) -> set[str]:
    """Every repo module reachable from ``name`` through imports, ``name`` included."""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(_imports(current))
    return seen


def code_lines(path: Path) -> int:
    """Lines of code: not blank, not a comment, not part of a docstring."""
    source = path.read_text(encoding="utf-8")
    doc_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc_lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), start=1)
               if line.strip() and not line.strip().startswith("#") and number not in doc_lines)


def _readability(strategy: StrategySpec) -> dict[str, Any]:
    """Write a small session with the strategy and look at its files as a text tool would (files it
    declares as holding no session data left out)."""
    if strategy.data_in == "server":
        # Its root holds at most a connection note: the entries are in the server's own files,
        # readable only through the server (SQL), so a text tool has nothing to look at.
        return {"data_in": "server", "bytes_on_disk": None, "printable_pct": None, "grep_finds_text": None,
                "entries_per_line": None, "tail_is_last_entry": None}
    entries = [User(content=f"readable entry number {i} about the parser", ts=i, id=f"e{i}") for i in range(40)]
    ignore = tuple(strategy.ignore_files)
    with tempfile.TemporaryDirectory(prefix="aptmem-anatomy-") as scratch:
        store = build_store(strategy, scratch)
        for entry in entries:
            store.append(SESSION, entry)
        store.close()
        data = b"".join(p.read_bytes() for p in sorted(Path(scratch).iterdir()) if p.is_file() and not p.name.endswith(ignore))
    text = data.decode("utf-8", "replace")
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text if ch != "\ufffd")
    lines = [line for line in data.split(b"\n") if line.strip()]
    last = lines[-1] if lines else b""
    return {
        "data_in": "root",
        "bytes_on_disk": len(data),
        "printable_pct": round(100 * printable / max(len(text), 1), 1),
        "grep_finds_text": b"readable entry number 39 about the parser" in data,
        "entries_per_line": round(len(entries) / max(len(lines), 1), 2),
        "tail_is_last_entry": b'"e39"' in last and b'"e38"' not in last,
    }


def run_anatomy(strategies: Sequence[StrategySpec], out: Path | RunFolder) -> dict[str, pl.DataFrame]:
    """Measure readability and complexity of each strategy; write the ``anatomy`` table to ``out``."""
    folder = RunFolder.of(out)
    targets = {s.store.target.rpartition(".")[0] for s in strategies}
    shared = set.intersection(*(reachable_modules(t) for t in targets)) if targets else set()
    rows = []
    for strategy in strategies:
        module = strategy.store.target.rpartition(".")[0]
        own = sorted(reachable_modules(module) - shared)
        rows.append({
            **strategy.columns(),
            **_readability(strategy),
            "code_lines": sum(code_lines(p) for p in map(_module_path, own) if p is not None),
            "modules": ", ".join(own),
            "shared_core_lines": sum(code_lines(p) for p in map(_module_path, sorted(shared)) if p is not None),
            "external_engine": strategy.engine or "none",
            "commit": folder.meta.commit, "machine": folder.meta.machine,
        })
    return folder.write("anatomy", {"anatomy": pl.DataFrame(rows, infer_schema_length=None)}, {})
