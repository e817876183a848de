"""Token-estimate accuracy and speed: every tier against cl100k_base, per content kind, in one run.

    python benchmarks/token_accuracy.py                               # experiment=tokens: 1,000 texts per kind, Tekken, real text
    python benchmarks/token_accuracy.py tokens.per_kind=100 tokens.repeats=3 'tokens.estimators=[rough:bytes,medium,precise:cl100k_base]'

The same measurement as ``python -m experiments run measure=[tokens]``, composed from the same
Hydra config (``configs/``; the arguments are Hydra overrides, ``experiment=tokens`` unless
another preset is named), without Hydra's run folder. Checks the goals (medium within 10% MAPE
of cl100k_base on every kind, at least 10x faster than tiktoken) on the held-out corpus seed,
writes the tables and ``report.md`` to ``--out`` and prints the report; its last line is the
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

    return benchmark(argv, name="tokens", preset="tokens", description=__doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
