"""The run report: ``report.md`` and its figures, rebuilt from the run folder's tables alone.

The page opens with the headline comparison (:mod:`experiments.report.comparison`) and the
recommendation computed from it (:mod:`experiments.report.recommend`), then each
measurement of the registry contributes its section (:meth:`Measurement.section`), in registry
order; a section whose tables are not in the folder (the run did not measure it) is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from experiments import measurements as registry
from experiments.core.measurement import Measurement
from experiments.report.comparison import comparison_section
from experiments.report.recommend import recommendation_section

__all__ = ["build_report"]


def build_report(run_dir: Path, measurements: Sequence[Measurement] | None = None) -> Path:
    """Write ``run_dir/report.md`` (and ``figures/*.png``) from the stored tables; return its path."""
    if measurements is None:
        measurements = registry.MEASUREMENTS  # read at call time: a test may add a measurement
    run_dir = Path(run_dir)
    info = _run_info(run_dir)
    parts = [
        "# aptmem: storage strategies compared",
        "",
        f"Commit `{info.get('commit', 'unknown')}` on {info.get('machine', 'unknown')}. Every number below is "
        "computed from the tables in this folder (`python -m experiments report <this folder>` rebuilds this page).",
        "",
    ]
    for text in (comparison_section(run_dir), recommendation_section(run_dir),
                 *(m.section(run_dir) for m in measurements)):
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
