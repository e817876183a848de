"""The medium tier of this checkout, of another commit and tiktoken, timed side by side on the token measurement's corpus.

    python benchmarks/medium_against.py                     # against main's aptmem/tokens/medium.py
    python benchmarks/medium_against.py --rev HEAD~3 --repeats 15

For every text of ``token_corpus(seed, per_kind)`` (the corpus the token measurement times),
the three counters run one after the other, ``--repeats`` times, each going first in turn (the
first after another's run finds its data out of the caches), and each keeps its best time for that text: on a shared machine the best of several timings is the one no other process
interrupted, and the three are timed in the same moments. Prints per kind (and all kinds) the
summed times and the ratios. The other commit's tier (its ``medium*.py`` and ``char_costs.py``
modules and its shipped constants) is read with ``git show`` and imported beside this checkout's
package, so two commits with different features compare. ``--kernel`` says when a tier's compiled
kernel loads (default: from the first count, so the steady state is timed; ``python`` times the
pure-Python path a short-lived process counts with).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def _estimator_at(rev: str, folder: Path, kernel: str):  # noqa: ANN202 (the other commit's MediumEstimator)
    """The medium tier as it is at ``rev``: its modules (``medium*.py``, ``char_costs.py``) and shipped constants, imported apart.

    ``kernel``: when its compiled kernel loads, where that commit has one (older commits take no such argument).
    """
    listed = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:aptmem/tokens/"], cwd=_ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    modules = [name[:-3] for name in listed if name.endswith(".py") and (name.startswith("medium") or name in ("char_costs.py", "piece_vocab.py"))]
    for name in modules:
        source = subprocess.run(["git", "show", f"{rev}:aptmem/tokens/{name}.py"], cwd=_ROOT, capture_output=True,
                                text=True, check=True).stdout
        # Its own modules, features and constants, not this checkout's (they may differ in number and order).
        for other in modules:
            source = source.replace(f"from aptmem.tokens.{other} import", f"from {other}_at_rev import")
            source = source.replace(f"from aptmem.tokens import {other}\n", f"import {other}_at_rev as {other}\n")
        (folder / f"{name}_at_rev.py").write_text(source, encoding="utf-8")
    constants = subprocess.run(["git", "show", f"{rev}:aptmem/tokens/medium_constants.json"], cwd=_ROOT,
                               capture_output=True, check=True).stdout
    (folder / "medium_constants.json").write_bytes(constants)
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("medium_at_rev", folder / "medium_at_rev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    options = {"kernel": kernel} if "kernel" in inspect.signature(module.MediumEstimator).parameters else {}
    return module.MediumEstimator(constants_path=folder / "medium_constants.json", **options)


def main(argv: list[str] | None = None) -> int:
    """Time the three counters per text; print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rev", default="main", help="the other commit (default main)")
    p.add_argument("--repeats", type=int, default=9, help="timings per text and counter, the best kept (default 9)")
    p.add_argument("--seed", type=int, default=1, help="corpus seed (default 1, the measurement's)")
    p.add_argument("--per-kind", type=int, default=60, help="texts per kind (default 60, the CI run's)")
    p.add_argument("--kernel", default="compiled", choices=("auto", "compiled", "python"),
                   help="when each tier's compiled kernel loads, where it has one (default compiled: from the start)")
    args = p.parse_args(argv)

    from aptmem.tokens import MediumEstimator, get_estimator
    from experiments.measurements.tokens.corpus import token_corpus

    with tempfile.TemporaryDirectory() as folder:
        other = _estimator_at(args.rev, Path(folder), args.kernel)
        other.count("warm up " * 300)  # reads its constants and loads its kernel or long path before the folder goes
    counters = {"this": MediumEstimator(kernel=args.kernel), args.rev: other, "tiktoken": get_estimator("precise", "cl100k_base")}
    for counter in counters.values():
        counter.count("warm up " * 300)
    clock = time.perf_counter_ns
    totals: dict[str, dict[str, int]] = {}
    print(f"load average {os.getloadavg()[0]:.2f}; kernel {args.kernel}")
    for sample in token_corpus(args.seed, args.per_kind):
        best = dict.fromkeys(counters, 1 << 62)
        for repeat in range(args.repeats):
            # Each counter goes first as often as the others: the first after another counter's run
            # meets its data out of the caches (about 20% slower on these texts, measured at load 8).
            order = list(counters.items())
            order = order[repeat % len(order):] + order[:repeat % len(order)]
            for name, counter in order:
                started = clock()
                counter.count(sample.text)
                best[name] = min(best[name], clock() - started)
        for kind in (sample.kind, "all"):
            for name, ns in best.items():
                totals.setdefault(kind, dict.fromkeys(counters, 0))[name] += ns
    print(f"\n| kind | this us | {args.rev} us | tiktoken us | {args.rev} / this | tiktoken / this | tiktoken / {args.rev} |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, t in totals.items():
        this, rev, tik = t["this"], t[args.rev], t["tiktoken"]
        print(f"| {kind} | {this / 1e3:.0f} | {rev / 1e3:.0f} | {tik / 1e3:.0f} | {rev / this:.2f} | {tik / this:.2f} | {tik / rev:.2f} |")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
