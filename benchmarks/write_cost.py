"""Write-cost benchmark: append latency of every strategy beside raw os.write, in one run.

    python benchmarks/write_cost.py                                  # all strategies, 5,000 entries
    python benchmarks/write_cost.py --strategies jsonl_none,sqlite_wal_full --entries 2000

The same measurement as ``python -m experiments run`` (:mod:`experiments.measurements.write_cost.job`),
without Hydra: handy for one quick comparison. Writes the tables and ``report.md`` to ``--out``
and prints the report; its last line is the report's path.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def _window(text: str) -> tuple[int, int]:
    lo, hi = (int(x) for x in text.split(","))
    return lo, hi


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=5000, help="entries in the session (default 5000)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--strategies", default="all", help="comma-separated strategy configs, or 'all' (default)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/write_cost-<time>)")
    p.add_argument("--full-json-entries", type=int, default=500,
                   help="replay the full_json family for this many entries only; 0 = no cap (default 500)")
    p.add_argument("--sync-baseline", choices=("per_append", "all"), default="per_append",
                   help="time os.write+fdatasync beside strategies that sync per append (default) or beside all")
    p.add_argument("--early", type=_window, default=(1, 100), help="early window for growth, 'lo,hi' 1-based entries")
    p.add_argument("--late-size", type=int, default=100, help="late window: the last N entries replayed (default 100)")
    p.add_argument("--tmp", default=None, help="folder for the temporary stores (default: system temp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.entries < 1 or args.full_json_entries < 0 or args.late_size < 1:
        p.error("--entries and --late-size must be >= 1, --full-json-entries >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure, store, report; return the exit status."""
    args = parse_args(argv)

    from tqdm import tqdm

    from experiments.report.page import build_report
    from experiments.core.runinfo import REPO_ROOT
    from experiments.core.strategy import strategy_names
    from experiments.workloads.synthetic import WorkloadConfig
    from experiments.measurements.write_cost.job import WriteCostSettings, planned_appends, run_write_cost

    known = strategy_names()
    names = known if args.strategies == "all" else [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"unknown strategies: {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("write_cost-%Y%m%d-%H%M%S")
    settings = WriteCostSettings(entries=args.entries, full_json_entries=args.full_json_entries,
                                 sync_baseline=args.sync_baseline, early=args.early, late_size=args.late_size)
    with tqdm(total=planned_appends(names, settings), unit="append", desc="write cost",
              disable=args.no_progress, file=sys.stderr) as bar:
        run_write_cost(names, settings, WorkloadConfig(seed=args.seed), out, tmp=args.tmp, progress=bar.update)
    report = build_report(out)
    print(report.read_text(encoding="utf-8"))
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
