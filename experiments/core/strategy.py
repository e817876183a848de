"""Find and build the storage strategies declared in ``configs/strategy/``.

The YAML files are the one registry of strategies: the Hydra app composes them as a config
group, and tests and benchmarks that run outside Hydra load the same files here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from aptmem.store import SessionStore

__all__ = ["CONFIG_DIR", "strategy_names", "load_strategy", "build_store"]

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


def strategy_names() -> list[str]:
    """Return the names of every strategy config, sorted."""
    return sorted(p.stem for p in (CONFIG_DIR / "strategy").glob("*.yaml"))


def load_strategy(name: str) -> Any:
    """Load one strategy config (an OmegaConf ``DictConfig``) by name."""
    from omegaconf import OmegaConf

    path = CONFIG_DIR / "strategy" / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    return OmegaConf.load(path)


def build_store(strategy: str | Any, root: str | os.PathLike[str], **overrides: Any) -> SessionStore:
    """Instantiate a strategy's store under ``root`` through its ``_target_``."""
    from hydra.utils import instantiate

    cfg = load_strategy(strategy) if isinstance(strategy, str) else strategy
    return instantiate(cfg.store, root=os.fspath(root), **overrides)
