"""The memory-quality measurement's entry point: every strategy, window and seed on the same workload.

``run_memory_quality(settings, out, progress)`` builds the workload of each seed once, runs it
through each memory strategy at each window (:mod:`.replay`), and writes the tables of
:mod:`.tables` to ``out`` as parquet and CSV, with ``memory_quality_notes.json`` (settings,
commit, machine, what was left out and why). The report section is built from those files alone
(:mod:`.report`).

Each strategy is built from its ``configs/memory/NAME.yaml`` (:func:`memory_config`), which states
the defaults of aptmem's registry (what ``aptmem replay --memory NAME`` builds; a test holds them equal).

The LLM summarizer (strategy ``llm``) runs only when ``llm_model`` is set and an
OpenAI-compatible endpoint is configured (``llm_base_url`` or ``$OPENAI_BASE_URL``); its rows are
the ``llm`` strategy's, apart from the offline ones, and it is never part of the default run.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import polars as pl
from hydra.utils import instantiate
from omegaconf import OmegaConf

from aptmem.memory.base import MemoryStrategy
from aptmem.tokens.tiers import build_estimator
from experiments.core.runfolder import RunFolder
from experiments.core.strategy import CONFIG_DIR
from experiments.measurements.memory_quality.recall_scoring import RecallScores
from experiments.measurements.memory_quality.replay import replay_workload
from experiments.measurements.memory_quality.settings import MemoryQualitySettings
from experiments.measurements.memory_quality.tables import (ANSWER_SCHEMA, CHECK_SCHEMA, ITEM_SCHEMA, PLANT_SCHEMA,
                                                             RUN_SCHEMA, summarize)
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.workload import Workload

__all__ = ["MemoryQualitySettings", "memory_config", "planned_runs", "run_memory_quality"]



def memory_config(name: str, **overrides: object) -> MemoryStrategy:
    """The strategy ``configs/memory/NAME.yaml`` declares, built by Hydra (``overrides`` set its summarizer's fields).

    The YAML states aptmem's registry defaults (``aptmem replay --memory NAME`` builds those), a test
    holds them equal, so the measurement and the command line run the same strategy.
    """
    path = CONFIG_DIR / "memory" / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"no memory strategy config {path}")
    config = OmegaConf.load(path)
    for key, value in overrides.items():
        config.summarizer[key] = value
    return instantiate(config)


def _strategies(settings: MemoryQualitySettings, notes: list[str]) -> dict[str, MemoryStrategy]:
    built: dict[str, MemoryStrategy] = {}
    for name in settings.strategies:
        if name == "llm":
            if not settings.llm_model or not (settings.llm_base_url or os.environ.get("OPENAI_BASE_URL")):
                notes.append("llm left out: no llm_model or no OpenAI-compatible endpoint configured")
                continue
            built[name] = memory_config(name, model=settings.llm_model,
                                        base_url=settings.llm_base_url or os.environ.get("OPENAI_BASE_URL"))
        else:
            built[name] = memory_config(name)
    return built


def _item_rows(seed: int, workload: Workload, split: str) -> list[dict[str, object]]:
    return [{"seed": seed, "split": split, "item": i.id, "type": i.type, "kind": i.kind, "lang": i.lang,
             "carrier": i.carrier, "format": i.format, "subject": i.subject, "answers": " | ".join(i.answers),
             "stale": i.stale, "evidence": len(i.evidence), "session": i.session, "turn": i.turn,
             "first_turn": i.first_turn} for i in workload.items]


def planned_runs(settings: MemoryQualitySettings) -> int:
    """Runs the measurement makes (strategies x windows x seeds; an ``llm`` left out counts too)."""
    return len(settings.strategies) * len(settings.windows) * len(settings.seeds)


def run_memory_quality(settings: MemoryQualitySettings, out: Path | RunFolder,
                       progress: Callable[[int], object] | None = None) -> dict[str, pl.DataFrame]:
    """Run every strategy at every window on every seed's workload; write and return the tables.

    ``progress(1)`` is called after each run (strategies x windows x seeds of them).
    """
    folder = RunFolder.of(out)
    tick = progress or (lambda n: None)
    started = time.perf_counter()
    notes: list[str] = []
    strategies = _strategies(settings, notes)
    estimator = build_estimator(settings.tier)
    meta = {"commit": folder.meta.commit, "machine": folder.meta.machine}
    items: list[dict[str, object]] = []
    checks: list[dict[str, object]] = []
    answers: list[dict[str, object]] = []
    plants: list[dict[str, object]] = []
    runs: list[dict[str, object]] = []
    recall = RecallScores()  # retrieval figures of the recall strategies (aptmem.memory.recall)
    for seed in settings.seeds:
        workload = GENERATORS[settings.workload.generator](settings.workload, seed)
        items += _item_rows(seed, workload, settings.workload.split if settings.workload.generator == "planted" else settings.workload.generator)
        for name, strategy in strategies.items():
            for window in settings.windows:
                key = {"strategy": name, "window": window, "seed": seed}
                with tempfile.TemporaryDirectory(prefix="aptmem-memory-", dir=settings.tmp) as root:
                    rows = replay_workload(workload, strategy, settings.policy(window), estimator, settings.budgets, Path(root))
                    recall.score(key, workload, strategy, Path(root))
                checks += [{**key, **row} for row in rows.checks]
                answers += [{**key, **row} for row in rows.answers]
                plants += [{**key, **row} for row in rows.plants]
                runs.append({**key, **rows.run, "items": len(workload.items), "dropped": workload.dropped,
                             "distractors": workload.distractors, **meta})
                tick(1)
    tables = {
        "memory_items": pl.DataFrame(items, schema=ITEM_SCHEMA),
        "memory_checks": pl.DataFrame(checks, schema=CHECK_SCHEMA),
        "memory_answers": pl.DataFrame(answers, schema=ANSWER_SCHEMA),
        "memory_runs": pl.DataFrame(runs, schema=RUN_SCHEMA),
        "memory_plants": pl.DataFrame(plants, schema=PLANT_SCHEMA),
    }
    tables.update(recall.tables())
    tables["memory_summary"] = summarize(tables["memory_items"], tables["memory_checks"], tables["memory_answers"],
                                         tables["memory_runs"], tables["memory_plants"])
    notes_doc = {"settings": asdict(settings), "notes": notes, "seconds": round(time.perf_counter() - started, 2),
                 "strategies": list(strategies)}
    return folder.write("memory_quality", tables, notes_doc)
