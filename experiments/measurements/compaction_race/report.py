"""The compaction race's section of the report, from the stored ``compaction_race`` table alone."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_table

__all__ = ["compaction_race_section"]

_HEADERS = {"cell_acknowledged": "appends acknowledged", "cell_lost": "lost", "duplicated": "duplicated",
            "cell_compactions": "compactions", "noop": "nothing to summarize", "waits": "lock waits past timeout",
            "cell_entries_at_end": "entries at the end", "cell_live_consistent": "live = select_live(history)",
            "seconds": "seconds", "writers": "writers"}


def compaction_race_section(run_dir: Path) -> str | None:
    """Markdown: one row per (strategy, persist way), then the strategies left out and why."""
    table = read_table(run_dir, "compaction_race")
    if table is None:
        return None
    notes_path = run_dir / "compaction_race_notes.json"
    notes = json.loads(notes_path.read_text(encoding="utf-8")) if notes_path.exists() else {}
    raced = table.filter(pl.col("kind") != "-")
    left_out = table.filter(pl.col("kind") == "-").select("strategy", "error").unique(maintain_order=True)
    parts = ["## Compaction racing writers", "",
             "Real processes append to one session while others compact it, released together: library writers "
             "(one long-lived store, and a new store per append), for the JSONL log also `aptmem append` per entry and "
             "one long-lived `aptmem append`, against a library Session compacting in a loop (and `aptmem compact "
             "--force` for the JSONL log). Then every acknowledged entry is looked for, in the session or among what a "
             "committed compaction summarized; `lost` counts those found in neither. "
             f"Size `{notes.get('size', '?')}`, seed {notes.get('seed', '?')}.", ""]
    if raced.height:
        cells = (raced.group_by("strategy", "persist", maintain_order=True)
                 .agg(pl.col("cell_acknowledged").first(), pl.col("cell_lost").first(), pl.col("duplicated").sum(),
                      pl.col("cell_compactions").first(), pl.col("noop").sum(),
                      pl.col("errors").filter(pl.col("role") == "writer").sum().alias("waits"),
                      pl.col("cell_entries_at_end").first(), pl.col("cell_live_consistent").first(),
                      pl.col("name").filter(pl.col("role") == "writer").str.join(", ").alias("writers"),
                      pl.col("seconds").first(), pl.col("error").drop_nulls().first()))
        parts += [markdown_table(cells, headers=_HEADERS), ""]
        lost = int(cells["cell_lost"].sum())
        parts += [("Nothing acknowledged was lost or doubled in any cell." if lost == 0 and int(cells["duplicated"].sum()) == 0
                   else f"**{lost} acknowledged entries were lost**: the cells' folders are kept for a look."), ""]
    if left_out.height:
        parts += ["Not raced:", "", *[f"- `{s}`: {why}" for s, why in left_out.iter_rows()], ""]
    return "\n".join(parts)
