"""Compaction racing writers (issue 11, finding 1): real processes, nothing acknowledged lost.

The default run races a short seeded cell per case (seconds); ``pytest -m slow`` runs the full
size (at least 1,000 compactions racing at least 10,000 appends per strategy and persist mode)
on a durable JSONL and a durable SQLite setting; ``python -m experiments.measurements.compaction_race
--size full`` runs every strategy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.entries import User
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from experiments.measurements.compaction_race.driver import plan_cells, run_cell
from experiments.measurements.compaction_race.spec import SIZES
from experiments.measurements.compaction_race.child import digest
from experiments.measurements.compaction_race.oracle import check


def _race(strategy: str, persist: str, size: str, tmp_path: Path, seed: int) -> list:
    cells, skipped = plan_cells([strategy], size, seed=seed, persist=(persist,))
    assert not skipped and len(cells) == 1
    rows = run_cell(cells[0], tmp_path)
    where = f"{strategy} {persist} seed={seed}"
    first = rows[0]
    assert first.error is None, f"{where}: {first.error}"
    assert first.cell_lost == 0 and not any(r.duplicated for r in rows), (where, rows)
    assert first.cell_live_consistent and first.cell_left_append_log == 0, (where, rows)
    return rows


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_a_short_seeded_race_loses_nothing_on_the_jsonl_log(persist: str, tmp_path: Path) -> None:
    """Library, per-entry CLI and long-lived CLI appenders against library and CLI compactions."""
    rows = _race("jsonl_always", persist, "ci", tmp_path, seed=11)
    writers = {r.kind: r for r in rows if r.role == "writer"}
    assert set(writers) == {"library", "library_fresh", "cli_each", "cli_stream"}
    assert all(r.acknowledged >= {"library": SIZES["ci"].library, "library_fresh": SIZES["ci"].library_fresh,
                                  "cli_each": SIZES["ci"].cli_each, "cli_stream": SIZES["ci"].cli_stream}[k]
               for k, r in writers.items()), rows
    compactors = {r.kind: r for r in rows if r.role == "compactor"}
    assert compactors["library"].compactions >= SIZES["ci"].library_compactions
    assert compactors["cli"].compactions >= SIZES["ci"].cli_compactions
    if persist == "rewrite":  # entries did leave the file: they must be exactly the summarized ones
        assert rows[0].cell_entries_at_end < rows[0].cell_acknowledged


def test_a_short_seeded_race_loses_nothing_on_sqlite(tmp_path: Path) -> None:
    for persist in ("append", "rewrite"):
        rows = _race("sqlite_wal_full", persist, "ci", tmp_path, seed=12)
        assert {r.kind for r in rows} == {"library", "library_fresh"}


def test_a_store_not_safe_for_several_processes_gets_a_row_not_a_race() -> None:
    cells, skipped = plan_cells(["full_json_atomic"], "ci")
    assert cells == [] and {r.persist for r in skipped} == {"append", "rewrite"}
    assert all("multi_process_safe" in (r.error or "") for r in skipped)


def test_the_oracle_counts_what_is_neither_in_the_session_nor_summarized(tmp_path: Path) -> None:
    """The check is not vacuous: an acknowledged entry missing from the session is lost, unless a
    committed compaction summarized it; in the append way a summarized entry must still be there."""
    sid = new_session_id()
    kept, gone, summarized = (User(content=f"entry {n}", ts=n) for n in range(3))
    with JsonlStore(tmp_path / "s") as store:
        store.append(sid, kept)
        acks, logs = tmp_path / "w.out", tmp_path / "c.out"
        acks.write_text("\n".join(digest(e) for e in (kept, gone, summarized)) + "\n", encoding="ascii")
        logs.write_text('{"changed": true, "error": null, "digests": ["%s"]}\n' % digest(summarized), encoding="ascii")
        rewrite = check(store, sid, "rewrite", {"w": acks}, {"c": logs})
        append = check(store, sid, "append", {"w": acks}, {"c": logs})
    assert rewrite.lost == {"w": 1} and rewrite.left_append_log == 0
    assert append.lost == {"w": 1} and append.left_append_log == 1


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["jsonl_always", "sqlite_wal_full"])
@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_the_full_race_loses_nothing(strategy: str, persist: str, tmp_path: Path) -> None:
    """At least 1,000 compactions racing at least 10,000 appends."""
    rows = _race(strategy, persist, "full", tmp_path, seed=0)
    assert rows[0].cell_acknowledged >= 10_000 and rows[0].cell_compactions >= 1_000, rows


def test_the_measurement_writes_its_table_section_and_gate(tmp_path: Path) -> None:
    """As a run makes it: one typed table, a report section naming what was not raced, gate metrics at zero."""
    from experiments.core.measurement import RunContext
    from experiments.core.runfolder import RunFolder, read_table
    from experiments.core.strategy import load_strategy
    from experiments.measurements.compaction_race import CompactionRace, CompactionRaceSettings
    from experiments.measurements.compaction_race.job import SCHEMA

    measurement = CompactionRace()
    settings = CompactionRaceSettings(persist=["append"], seed=5)
    strategies = (load_strategy("jsonl_none"), load_strategy("full_json_atomic"))
    folder = RunFolder(tmp_path / "run")
    folder.path.mkdir()
    measurement.run(settings, RunContext(strategies=strategies, workload=None, folder=folder), lambda n: None)
    table = read_table(folder.path, "compaction_race")
    assert table is not None and dict(table.schema) == SCHEMA
    section = measurement.section(folder.path)
    assert section is not None and "| jsonl_none | append |" in section and "`full_json_atomic`: not safe" in section
    metrics = {m.name: m.value for m in measurement.metrics(folder.path)}
    assert metrics == {"compaction_race.jsonl_none.append.lost": 0.0, "compaction_race.jsonl_none.append.duplicated": 0.0,
                       "compaction_race.jsonl_none.append.live_consistent": 1.0, "compaction_race.jsonl_none.append.failed": 0.0}


def test_the_table_schema_has_a_column_per_row_field() -> None:
    import msgspec

    from experiments.measurements.compaction_race.job import SCHEMA
    from experiments.measurements.compaction_race.spec import RaceRow

    assert list(SCHEMA) == [f.name for f in msgspec.structs.fields(RaceRow)]


@pytest.mark.parametrize("bad", [{"size": "huge"}, {"persist": ["sideways"]}, {"persist": []}])
def test_bad_settings_are_refused(bad: dict) -> None:
    from experiments.measurements.compaction_race import CompactionRaceSettings

    with pytest.raises(ValueError, match="compaction_race"):
        CompactionRaceSettings(**bad)

