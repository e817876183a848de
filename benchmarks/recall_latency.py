"""Query latency of the recall engines, repeated, on the recall benchmark's workload.

    python benchmarks/recall_latency.py ROOT SESSIONS ENGINES     # e.g. /tmp/r20k 180 fts,fts_xl

Writes the workload of ``recall_bench.py`` (seed 7, 100 entries a session, 400 facts) to ROOT if it
is not there yet (or ROOT has no ``ROOT.questions`` beside it: then ROOT is written afresh), indexes it with ENGINES, then asks every question three times, each question of
every engine in turn (side by side, so a load that comes and goes weighs on all of them alike), and
prints p50/p95 per engine and repeat with the load average, and each engine's p50 over the first's.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_workload import build_workload  # noqa: E402

from aptmem.recall.api import open_index  # noqa: E402


def main(argv: list[str]) -> int:
    """Run the latency measurement; see the module docstring."""
    root, sessions, engines = argv[0], int(argv[1]), argv[2].split(",")
    questions = Path(f"{root}.questions")
    if not os.path.exists(root) or not questions.exists():
        # The questions are the workload's: writing it again (seeded) gives the same logs and the
        # same questions, so a root made by another script still gets its questions file.
        if os.path.exists(root):
            shutil.rmtree(root)
        workload = build_workload(root, seed=7, sessions=sessions, entries_per_session=100, facts=400)
        questions.write_text("\n".join(q.text for q in workload.questions), encoding="utf-8")
    asked = questions.read_text(encoding="utf-8").split("\n")
    index = open_index(root, engines=tuple(engines))
    start = time.perf_counter()
    index.refresh()
    print(f"refresh {time.perf_counter() - start:.1f} s, {sum(index.stats().records.values())} records", flush=True)
    for engine in engines:
        index.search("warm up", engine=engine)
    for repeat in range(3):
        load = os.getloadavg()[0]
        times: dict[str, list[float]] = {engine: [] for engine in engines}
        for question in asked:
            for engine in engines:
                t0 = time.perf_counter_ns()
                index.search(question, k=10, engine=engine)
                times[engine].append((time.perf_counter_ns() - t0) / 1e6)
        first = None
        for engine in engines:
            ordered = sorted(times[engine])
            p50 = ordered[len(ordered) // 2]
            first = first or p50
            print(f"{engine} repeat {repeat} load {load:.1f} p50 {p50:.2f} ms p95 {ordered[int(len(ordered) * 0.95)]:.2f} ms "
                  f"({p50 / first:.2f}x {engines[0]})", flush=True)
    index.close()
    index.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
