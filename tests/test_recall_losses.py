"""benchmarks/recall_losses.py: each lost question gets the first category that holds, and ``--by`` splits the table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import polars as pl
import pytest

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "recall_losses.py"


def _module():
    spec = importlib.util.spec_from_file_location("recall_losses", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["recall_losses"] = module
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path) -> Path:
    """A run folder of one strategy, window and seed with four questions, one per category."""
    key = {"strategy": "l3_keyword", "window": 8000, "seed": 1}
    ids = ["a", "b", "c", "d"]
    pl.DataFrame([{"seed": 1, "item": i, "type": "fact", "carrier": "tool", "format": "log", "subject": i,
                   "answers": "v"} for i in ids]).write_parquet(tmp_path / "memory_items.parquet")
    answered = {"a": True, "b": False, "c": False, "d": False}
    rows = []
    for i in ids:
        for budget in (None, 1024):
            rows.append({**key, "item": i, "wording": "template", "budget": budget, "answerable": answered[i]})
    pl.DataFrame(rows, schema={"strategy": pl.String, "window": pl.Int64, "seed": pl.Int64, "item": pl.String,
                               "wording": pl.String, "budget": pl.Int64, "answerable": pl.Boolean}) \
        .write_parquet(tmp_path / "memory_answers.parquet")
    # b: its answer is in the kept history at the end (the reader missed it there); c, d: lost from the context.
    where = {"a": "kept", "b": "kept", "c": "lost", "d": "lost"}
    pl.DataFrame([{**key, "item": i, "at": "end", "where": where[i]} for i in ids]) \
        .write_parquet(tmp_path / "memory_checks.parquet")
    # c: its evidence is not in the top 10 (b's is not either: held_missed comes first); d: shown but cut.
    rank = {"a": 1, "b": None, "c": None, "d": 2}
    pl.DataFrame([{**key, "item": i, "wording": "template", "evidence": 1, "evidence_indexed": 1, "entry_rank": rank[i],
                   "shown": 5, "answers_in_packet": i == "a", "answerable": i == "a"} for i in ids],
                 schema={**{k: pl.String for k in ("strategy", "item", "wording")}, "window": pl.Int64, "seed": pl.Int64,
                         "evidence": pl.Int64, "evidence_indexed": pl.Int64, "entry_rank": pl.Int64, "shown": pl.Int64,
                         "answers_in_packet": pl.Boolean, "answerable": pl.Boolean}) \
        .write_parquet(tmp_path / "memory_recall.parquet")
    return tmp_path


def test_categories_and_by(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = _module()
    run = _run(tmp_path)
    frame = module.categorized(run)
    assert dict(zip(frame["item"], frame["category"])) == {"a": "answered", "b": "held_missed", "c": "not_retrieved",
                                                            "d": "cut"}
    assert module.main([str(run), "--by", "wording"]) == 0
    assert "template" in capsys.readouterr().out
    assert module.main([str(run), "--by", "nonsense"]) == 2
    assert module.categorized(tmp_path / "missing") is None


def test_loss_table_share() -> None:
    module = _module()
    frame = pl.DataFrame({"strategy": ["s"] * 4, "window": [8000] * 4,
                          "category": ["answered", "answered", "held_missed", "not_retrieved"]})
    table = module.loss_table(frame)
    assert table.row(0, named=True) == {"strategy": "s", "window": 8000, "answered": 2, "held_missed": 1,
                                        "not_retrieved": 1, "answerable_1024": 0.5}
