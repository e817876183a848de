"""Where the medium tier's numpy path gets faster than its big-integer path: both timed per text length.

    python benchmarks/medium_crossover.py                  # english, code, json, chinese, mixed texts
    python benchmarks/medium_crossover.py --repeats 9

The medium tier counts a text either with big-integer popcounts (cheap per call, ~15 passes over
the text) or with one numpy lookup per character (a few microseconds per call, one pass);
``aptmem.tokens.medium.NUMPY_FROM`` says from which length it takes the second. This script
times both paths side by side on texts of the token measurement's corpus, cut to each length
(the two paths alternate, pass by pass, so drift hits both alike), and prints the median time per
text of each path, their ratio, and the shortest length from which numpy is faster on every kind.
The two paths give the same counts (tests/test_medium_lookup.py); only their speed differs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

LENGTHS = (100, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000)
KINDS = ("english", "code", "json", "logs", "chinese", "mixed")


def main(argv: list[str] | None = None) -> int:
    """Time both paths per kind and length; print the table and the crossover."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="timed passes per path, kind and length (default 5)")
    p.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    args = p.parse_args(argv)

    from aptmem.tokens import MediumEstimator, medium
    from experiments.measurements.tokens.corpus import token_corpus

    est = MediumEstimator()
    est.count("warm up")
    shipped = medium.NUMPY_FROM
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| kind | chars | popcount us | numpy us | popcount / numpy |\n|---|---:|---:|---:|---:|")
    faster_from: dict[str, int] = {}
    try:
        for kind in KINDS:
            joined = "\n\n".join(s.text for s in token_corpus(args.seed, 200, kinds=[kind]))
            for n in LENGTHS:
                texts = [joined[i * n:(i + 1) * n] for i in range(20) if len(joined) >= (i + 1) * n]
                pop, num = _time_both(medium, "NUMPY_FROM", est.count, texts, args.repeats)
                print(f"| {kind} | {n} | {pop:.1f} | {num:.1f} | {pop / num:.2f} |")
                if num < pop and kind not in faster_from:
                    faster_from[kind] = n
    finally:
        medium.NUMPY_FROM = shipped
    print(f"\nnumpy faster from (chars): {faster_from}; NUMPY_FROM is {shipped}\n")
    _costs_crossover(est, args)
    return 0


def _time_both(module, threshold: str, call, texts: list[str], repeats: int) -> tuple[float, float]:  # noqa: ANN001
    """Median microseconds per text of ``call`` without numpy and with it (``module.<threshold>`` set to force each), alternating."""
    times: dict[int, list[float]] = {1 << 30: [], 0: []}
    for _ in range(repeats):
        for value, spent in times.items():
            setattr(module, threshold, value)
            started = time.perf_counter_ns()
            for text in texts:
                call(text)
            spent.append((time.perf_counter_ns() - started) / len(texts) / 1000)
    return statistics.median(times[1 << 30]), statistics.median(times[0])


def _costs_crossover(est, args: argparse.Namespace) -> None:  # noqa: ANN001 (a MediumEstimator)
    """The same for the non-ASCII counts (scripts and character costs) of Chinese text: numpy against regex."""
    from aptmem.tokens import medium
    from experiments.measurements.tokens.corpus import token_corpus

    joined = "".join(s.text for s in token_corpus(args.seed, 200, kinds=["chinese"]))
    shipped, costs, faster = medium.COSTS_NUMPY_FROM, est.costs, None
    print("| non-ASCII chars | regex us | numpy us | regex / numpy |\n|---:|---:|---:|---:|")
    try:
        for n in (16, 32, 48, 64, 96, 128, 256, 512):
            texts = [joined[i * n:(i + 1) * n] for i in range(40)]
            regex, numpy = _time_both(medium, "COSTS_NUMPY_FROM", costs.non_ascii, texts, args.repeats)
            print(f"| {n} | {regex:.1f} | {numpy:.1f} | {regex / numpy:.2f} |")
            if numpy < regex and faster is None:
                faster = n
    finally:
        medium.COSTS_NUMPY_FROM = shipped
    print(f"\nnumpy faster from (non-ASCII chars): {faster}; COSTS_NUMPY_FROM is {shipped}")


if __name__ == "__main__":
    sys.exit(main())
