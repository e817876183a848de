"""The run report: ``report.md`` and its figures, rebuilt from the run folder's tables alone."""

from __future__ import annotations

from pathlib import Path

from experiments.figures import append_latency_figure
from experiments.write_cost_job import read_tables
from experiments.write_cost_report import goals_markdown, summary_markdown

__all__ = ["build_report"]


def build_report(run_dir: Path) -> Path:
    """Write ``run_dir/report.md`` (and ``figures/*.png``) from the stored tables; return its path."""
    tables, notes = read_tables(run_dir)
    figure = append_latency_figure(tables["write_cost_samples"], run_dir / "figures" / "append_latency.png")
    parts = [
        "# aptmem: storage strategies compared",
        "",
        f"Commit `{notes['commit']}` on {notes['machine']}; measuring took {notes['seconds']} s. "
        "Every number below is computed from the tables in this folder "
        "(`python -m experiments report <this folder>` rebuilds this page).",
        "",
        "## Write cost per append",
        "",
        *_write_cost_notes(notes),
        "",
        summary_markdown(tables["write_cost_summary"]),
        "",
        f"![Append latency against entry number]({figure.relative_to(run_dir)})",
        "",
        "### Goals",
        "",
        goals_markdown(tables["write_cost_goals"]),
        "",
    ]
    path = run_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _write_cost_notes(notes: dict) -> list[str]:
    """How the write cost was measured, as bullet lines."""
    lines = [
        f"- Session: {notes['entries']} entries of the synthetic workload (seed {notes['seed']}), "
        f"{notes['session_mb']} MB as JSONL; every append timed with `perf_counter_ns`, every sample kept.",
        "- Beside each append, in the same run and in a random order per entry: a raw `os.write` of the same "
        "line to an `O_APPEND` file, aptmem's encoding of a fresh copy of the entry, and "
        + ("`os.write` + `fdatasync` beside strategies that sync per append."
           if notes["sync_baseline"] == "per_append" else "`os.write` + `fdatasync` (beside all)."),
        f"- Growth = median over the last {notes['late_size']} entries replayed / median over entries "
        f"{notes['early'][0]}-{notes['early'][1]}; raw write growth is the same for the raw write (the machine's drift).",
    ]
    if notes["capped"]:
        lines.append(f"- Capped (quadratic rewrite cost): {', '.join(notes['capped'])} replayed for their first "
                     f"{notes['cap']} entries only.")
    return lines
