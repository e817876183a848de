"""What loading the medium tier's compiled kernel costs a process, and how soon counting pays it back.

    python benchmarks/medium_kernel_load.py                # 7 fresh processes
    python benchmarks/medium_kernel_load.py --processes 15

``kernel="auto"`` (the default) counts in pure Python until the process has spent
``aptmem.tokens.medium.KERNEL_AFTER_SECONDS`` doing so, then loads the kernel: that constant
should be what the load costs. This script starts fresh processes (the machine code already
cached on disk, as on any machine after its first run; the first run is reported apart), each
timing ``import aptmem`` and then the load (``import numba``, the kernel module and its first call,
which reads the cache), and times both paths on the token measurement's corpus in this process,
side by side. It prints the median load, the two paths' cost per 1,000 characters and how many
characters a process counts in Python before the rule switches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

#: what a fresh process runs: the load timed after ``import aptmem`` (which every such process pays anyway)
_CHILD = """
import json, time
t0 = time.perf_counter()
from aptmem.tokens import MediumEstimator
est = MediumEstimator(kernel="python")
est.count("warm")
t1 = time.perf_counter()
from aptmem.tokens import medium
import numba
t2 = time.perf_counter()
MediumEstimator(kernel="compiled").count("warm")
t3 = time.perf_counter()
print(json.dumps({"aptmem": t1 - t0, "numba": t2 - t1, "kernel": t3 - t2}))
"""


def _child_load() -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, cwd=_ROOT)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    """Time the load in fresh processes and both paths here; print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--processes", type=int, default=7, help="fresh processes timed (default 7)")
    p.add_argument("--repeats", type=int, default=5, help="timed passes over the corpus per path (default 5)")
    args = p.parse_args(argv)

    from aptmem.tokens import MediumEstimator, medium
    from experiments.measurements.tokens.corpus import token_corpus

    print(f"load average {os.getloadavg()[0]:.2f}")
    first = _child_load()  # compiles if the cache is empty (a fresh clone), else reads it like the others
    loads = [_child_load() for _ in range(args.processes)]
    load = statistics.median(x["numba"] + x["kernel"] for x in loads)
    print(f"first process: import numba {first['numba']:.3f} s, kernel's first call {first['kernel']:.3f} s")
    print(f"median of {args.processes} fresh processes: import aptmem {statistics.median(x['aptmem'] for x in loads):.3f} s, "
          f"import numba {statistics.median(x['numba'] for x in loads):.3f} s, "
          f"kernel's first call {statistics.median(x['kernel'] for x in loads):.3f} s; load {load:.3f} s")

    texts = [s.text for s in token_corpus(1, 60)]
    chars = sum(map(len, texts))
    paths = {k: MediumEstimator(kernel=k) for k in ("python", "compiled")}
    best = dict.fromkeys(paths, float("inf"))
    for _ in range(args.repeats):
        for name, est in paths.items():  # alternating, so drift hits both alike
            started = time.perf_counter()
            for text in texts:
                est.count(text)
            best[name] = min(best[name], time.perf_counter() - started)
    per_kchar = {k: v / chars * 1e9 for k, v in best.items()}  # nanoseconds a character: microseconds per 1,000
    print(f"per 1,000 characters of the token corpus ({len(texts)} texts): python {per_kchar['python']:.2f} us, "
          f"compiled {per_kchar['compiled']:.2f} us ({per_kchar['python'] / per_kchar['compiled']:.1f}x)")
    print(f"the load equals {load / best['python'] * chars / 1e6:.0f}M characters counted in Python; "
          f"KERNEL_AFTER_SECONDS is {medium.KERNEL_AFTER_SECONDS}")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
