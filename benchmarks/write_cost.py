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

import sys
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def main(argv: list[str] | None = None) -> int:
    """Compose, measure, store, report; return the exit status."""
    from experiments.app import benchmark

    return benchmark(argv, name="write_cost", preset="latency", description=__doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
