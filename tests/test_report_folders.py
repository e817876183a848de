"""``experiments report`` refuses what is not a run, rebuilds sweeps; a strategy whose service cannot be had
is skipped with its reason in the run's ``strategies`` table and the report (never a silent gap)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import polars as pl
import pytest

from aptmem.errors import ServiceUnavailable
from experiments.core.runfolder import RunFolder, read_table, write_strategies
from experiments.core.strategy import ServiceSpec, Skipped, load_strategy, services_started
from experiments.report.page import build_report

ROOT = Path(__file__).resolve().parent.parent


def _report(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "experiments", "report", str(folder)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("kind", ["empty", "stray files", "missing", "a file"])
def test_report_refuses_a_folder_that_is_not_a_run_and_writes_nothing(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "x"
    if kind == "empty":
        folder.mkdir()
    elif kind == "stray files":
        folder.mkdir()
        (folder / "notes.txt").write_text("not a run")
    elif kind == "a file":
        folder.write_text("x")
    before = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else None
    done = _report(folder)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and str(folder) in done.stderr
    assert (sorted(p.name for p in folder.iterdir()) if folder.is_dir() else None) == before


class _Missing:
    """A service whose server is never there."""

    def __init__(self) -> None:
        pass

    def start(self, scratch: Path) -> dict[str, object]:
        raise ServiceUnavailable("ToyDB", "its binaries are not installed here", "install toydb")

    def crash(self) -> None: ...

    def restart(self) -> None: ...

    def stop(self) -> None: ...


def test_a_strategy_whose_service_is_missing_is_skipped_with_its_reason(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    module = type(sys)("toy_missing")
    module.Missing = _Missing  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toy_missing", module)
    base = load_strategy("jsonl_none")
    served = msgspec.structs.replace(base, name="toy_served", family="toydb", service=ServiceSpec(target="toy_missing.Missing"))
    skipped: list[Skipped] = []
    with services_started([base, served], skipped=skipped) as ready:
        assert [s.name for s in ready] == ["jsonl_none"]
        folder = RunFolder(tmp_path / "run")
        write_strategies(folder, ready, skipped)
    with pytest.raises(ServiceUnavailable):  # without a skip list, the error is the caller's
        with services_started([served]):
            pass
    table = read_table(tmp_path / "run", "strategies")
    assert table is not None
    row = table.filter(pl.col("strategy") == "toy_served").row(0, named=True)
    assert row["skipped"] and "not installed" in row["reason"] and row["family"] == "toydb"
    assert _report(tmp_path / "run").returncode == 0  # the strategies table alone makes it a run folder
    text = build_report(tmp_path / "run").read_text()
    assert "Skipped: `toy_served`" in text and "not installed" in text
