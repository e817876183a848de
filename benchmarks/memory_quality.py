"""Memory quality: what the agent still knows, per memory strategy, window and seed.

    python benchmarks/memory_quality.py                        # default size, held-out phrasings, seeds 100-102
    python benchmarks/memory_quality.py --size full            # 5 sessions of 40 turns, 5 seeds
    python benchmarks/memory_quality.py --split dev --seeds 0,1,2 --strategies salient,kv_dict
    python benchmarks/memory_quality.py --report reports/runs/memory-...   # rebuild report.md from the tables

Runs :func:`experiments.measurements.memory_quality.job.run_memory_quality` (the harness's
``memory_quality`` measurement: ``python -m experiments run measure=[memory_quality]`` makes it
too) and writes the tables (parquet and CSV), ``memory_frontier.png`` and ``report.md`` (the
memory section) to ``--out``; the report's path is the last line printed.
Exit status: 0; 1 with ``--check`` if a target of the issue is not met; 2 on bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=("default", "full"), default="default", help="the preset whose memory_quality settings are run: experiment=default or experiment=full (default: default)")
    p.add_argument("--split", choices=("heldout", "dev"), default=None, help="statement phrasings (default: the preset's)")
    p.add_argument("--seeds", default=None, help="comma-separated workload seeds (default: the preset's)")
    p.add_argument("--windows", default=None, help="comma-separated context windows (default: the preset's)")
    p.add_argument("--strategies", default=None, help="comma-separated memory strategies (default: the preset's, all but llm)")
    p.add_argument("--llm-model", default=None, help="score the LLM summarizer too, with this model")
    p.add_argument("--llm-base-url", default=None, help="its OpenAI-compatible endpoint (default $OPENAI_BASE_URL)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/memory-<time>)")
    p.add_argument("--report", type=Path, default=None, metavar="RUN_DIR", help="only rebuild report.md of RUN_DIR")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is not met")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def _list(text: str | None, cast: type = str) -> list | None:  # type: ignore[type-arg]
    return None if text is None else [cast(part) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    """Measure (or rebuild), write the report, print its path; return the exit status."""
    args = parse_args(argv)
    from tqdm import tqdm

    from experiments.core.config import compose, settings_of
    from experiments.core.runfolder import read_measurement
    from experiments.core.runinfo import REPO_ROOT
    from experiments.measurements import MEASUREMENTS, by_name
    from experiments.measurements.memory_quality.job import planned_runs, run_memory_quality
    from experiments.measurements.memory_quality.report import memory_section, targets

    if args.report is not None:
        out = args.report
    else:
        # The sizes are the Hydra presets' (experiment=default or full), composed as the app would.
        composed = settings_of(compose(MEASUREMENTS, [f"experiment={args.size}"]), by_name()["memory_quality"])
        overrides: dict[str, object] = {}
        for name, value in (("seeds", _list(args.seeds, int)), ("windows", _list(args.windows, int)),
                            ("strategies", _list(args.strategies)), ("llm_model", args.llm_model),
                            ("llm_base_url", args.llm_base_url)):
            if value is not None:
                overrides[name] = value
        if args.split is not None:
            overrides["workload"] = dataclasses.replace(composed.workload, split=args.split)
        try:
            settings = dataclasses.replace(composed, **overrides)  # type: ignore[arg-type]
        except ValueError as exc:
            print(f"memory_quality: {exc}", file=sys.stderr)
            return 2
        out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("memory-%Y%m%d-%H%M%S")
        total = planned_runs(settings)
        with tqdm(total=total, unit="run", desc="memory_quality", disable=args.no_progress, file=sys.stderr) as bar:
            run_memory_quality(settings, out, progress=bar.update)
    report = out / "report.md"
    report.write_text("# Memory quality\n\n" + memory_section(out))
    print(report)
    if args.check:
        tables, _ = read_measurement(out, ["memory_summary"], "memory_quality")
        missed = targets(tables["memory_summary"]).filter(pl_col_false())
        return 1 if missed.height else 0
    return 0


def pl_col_false():  # noqa: ANN201 - a polars expression
    """Rows whose target is measured and not met."""
    import polars as pl

    return pl.col("met") == False  # noqa: E712 - polars expression, not a Python comparison


if __name__ == "__main__":
    sys.exit(main())
