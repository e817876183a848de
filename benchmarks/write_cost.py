"""Write-cost benchmark: append latency of every strategy beside raw os.write, in one run.

    python benchmarks/write_cost.py                                   # every strategy (experiment=latency)
    python benchmarks/write_cost.py 'strategy=[jsonl_none,sqlite_wal_full]' write_cost.entries=2000
    python benchmarks/write_cost.py --out DIR experiment=default write_cost.quadratic_entries=100

The same measurement as ``python -m experiments run measure=[write_cost]``, composed from the
same Hydra config (``configs/``; the arguments are Hydra overrides, ``experiment=latency``
unless another preset is named), without Hydra's run folder: handy for one quick comparison.
Writes the tables and ``report.md`` to ``--out`` and prints the report; its last line is the
report's path.
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line: ``--out`` and Hydra overrides."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Overrides are those of `python -m experiments run`, e.g. write_cost.entries=2000.")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/write_cost-<time>)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides of the run config")
    return p.parse_intermixed_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Compose, measure, store, report; return the exit status."""
    args = parse_args(argv)

    from experiments.app import measure_all
    from experiments.core.config import compose
    from experiments.core.runinfo import REPO_ROOT
    from experiments.measurements import MEASUREMENTS
    from experiments.report.page import build_report

    preset = [] if any(o.startswith("experiment=") for o in args.overrides) else ["experiment=latency"]
    cfg = compose(MEASUREMENTS, [*preset, *args.overrides, "measure=[write_cost]"])
    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("write_cost-%Y%m%d-%H%M%S")
    measure_all(cfg, out)
    report = build_report(out)
    print(report.read_text(encoding="utf-8"))
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
