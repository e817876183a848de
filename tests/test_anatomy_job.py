"""Readability and complexity figures: computed from the files and the code, not typed in."""

from __future__ import annotations

from pathlib import Path

from experiments.core.strategy import load_strategy
from experiments.measurements.anatomy.job import code_lines, reachable_modules, run_anatomy


def test_code_lines_skip_blanks_comments_and_docstrings(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('"""Module doc\n\nspanning lines."""\n\n# a comment\nimport os\n\n\ndef f():\n'
                      '    """Doc."""\n    return os.sep  # trailing comment counts as code\n')
    assert code_lines(source) == 3


def test_strategies_reach_their_own_modules() -> None:
    assert {"strategies.sqlite", "strategies.sqlite_sql"} <= reachable_modules("strategies.sqlite")
    assert "aptmem.recovery" in reachable_modules("strategies.jsonl")
    assert "aptmem.recovery" not in reachable_modules("strategies.full_json")


def test_readability_and_complexity_per_strategy(tmp_path: Path) -> None:
    table = run_anatomy([load_strategy(n) for n in ("jsonl_none", "sqlite_wal_normal", "full_json_atomic")], tmp_path)["anatomy"]
    rows = {r["strategy"]: r for r in table.iter_rows(named=True)}
    jsonl, sqlite, full = rows["jsonl_none"], rows["sqlite_wal_normal"], rows["full_json_atomic"]
    assert (jsonl["printable_pct"], jsonl["entries_per_line"], jsonl["tail_is_last_entry"]) == (100.0, 1.0, True)
    assert full["entries_per_line"] == 40.0 and full["tail_is_last_entry"] is False
    assert sqlite["printable_pct"] < 90 and "SQLite" in sqlite["external_engine"]
    assert all(r["grep_finds_text"] for r in rows.values())
    assert "aptmem.recovery" in jsonl["modules"] and "strategies.sqlite_sql" in sqlite["modules"]
    assert jsonl["code_lines"] > full["code_lines"] > 0 and jsonl["shared_core_lines"] == sqlite["shared_core_lines"]
    assert (tmp_path / "anatomy.parquet").exists()
