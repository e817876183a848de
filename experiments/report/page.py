"""The run report: ``report.md`` and its figures, rebuilt from the run folder's tables alone.

Each measurement contributes a section function ``(run_dir) -> markdown | None`` that reads only
its stored tables and draws its figures into ``run_dir/figures``; a section whose tables are
not in the folder (the run did not measure it) is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from experiments.report.comparison import comparison_section
from experiments.measurements.compaction.report import compaction_section
from experiments.measurements.concurrency.report import concurrency_section
from experiments.measurements.crash_explore.report import crash_explore_section
from experiments.measurements.crash.report import crash_section
from experiments.measurements.fuzz.report import fuzz_section
from experiments.measurements.hostile.report import hostile_section
from experiments.measurements.memory.report import memory_section
from experiments.measurements.tokens.report import tokens_section
from experiments.measurements.transcripts.report import transcripts_section
from experiments.measurements.write_cost.report import write_cost_section

__all__ = ["build_report", "SECTIONS"]

#: The report's sections, in order.
SECTIONS: list[Callable[[Path], str | None]] = [
    comparison_section,
    write_cost_section,
    memory_section,
    crash_section,
    crash_explore_section,
    concurrency_section,
    hostile_section,
    fuzz_section,
    tokens_section,
    compaction_section,
    transcripts_section,
]


def build_report(run_dir: Path) -> Path:
    """Write ``run_dir/report.md`` (and ``figures/*.png``) from the stored tables; return its path."""
    run_dir = Path(run_dir)
    info = _run_info(run_dir)
    parts = [
        "# aptmem: storage strategies compared",
        "",
        f"Commit `{info.get('commit', 'unknown')}` on {info.get('machine', 'unknown')}. Every number below is "
        "computed from the tables in this folder (`python -m experiments report <this folder>` rebuilds this page).",
        "",
    ]
    for section in SECTIONS:
        text = section(run_dir)
        if text:
            parts += [text, ""]
    path = run_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _run_info(run_dir: Path) -> dict[str, object]:
    """The commit and machine of a run, from whichever notes file it has."""
    for notes in sorted(run_dir.glob("*_notes.json")):
        info = msgspec.json.decode(notes.read_bytes())
        if "commit" in info:
            return info
    return {}
