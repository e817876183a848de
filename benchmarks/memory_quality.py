"""Memory quality: what the agent still knows, per memory strategy, window and seed.

    python benchmarks/memory_quality.py                                     # held-out phrasings, seeds 100-102
    python benchmarks/memory_quality.py experiment=full                     # 5 sessions of 40 turns, 5 seeds
    python benchmarks/memory_quality.py memory_quality.workload.generator=independent   # sessions written apart
    python benchmarks/memory_quality.py memory_quality.workload.split=dev 'memory_quality.seeds=[0,1,2]' \\
        'memory_quality.strategies=[salient,kv_dict]'

The same measurement as ``python -m experiments run 'measure=[memory_quality]'``, composed from
the same Hydra config (``configs/``: the settings and their defaults are
``experiments/measurements/memory_quality/settings.py``, what a run changes
``configs/measurements/memory_quality/default.yaml`` and the presets; the arguments are Hydra
overrides, ``experiment=memory_quality`` unless another preset is named: the measurement's own size),
without Hydra's run folder.
Writes the tables, ``figures/memory_frontier.png`` and ``report.md`` to ``--out`` and prints the
report; its last line is the report's path. ``python -m experiments report DIR`` rebuilds it.
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

    return benchmark(argv, name="memory_quality", preset="memory_quality", description=__doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
