"""Each strategy's store gets the hostile cases; a category its YAML declares not applicable is skipped with the reason."""

from __future__ import annotations

from experiments.core.strategy import load_strategy
from experiments.measurements.hostile.job import run_case
from experiments.measurements.hostile.stores import CATEGORIES, store_cases


def test_every_store_refuses_hostile_input_or_declares_why_not() -> None:
    strategies = [load_strategy(name) for name in ("jsonl_always", "jsonl_none", "langchain_file")]
    rows = [run_case(case) for case in store_cases(strategies)]
    by = {(row["surface"], row["category"], row["case"]): row for row in rows}
    assert {row["category"] for row in rows} == set(CATEGORIES)
    fsync = by[("library: jsonl_always append", "fsync error", "fsync and fdatasync raise EIO during an append")]
    assert fsync["outcome"] == "refused" and fsync["intact"], fsync
    skipped = by[("library: jsonl_none append", "fsync error", "fsync and fdatasync raise EIO during an append")]
    assert skipped["outcome"] == "skipped" and "never syncs" in skipped["note"]
    ids = [row for row in rows if row["category"] == "session id"]
    assert ids and all(row["outcome"] == "refused" and row["intact"] for row in ids), \
        [row for row in ids if row["outcome"] != "refused"]
