"""What taking the writer lock per append costs, as ratios measured side by side in one run.

    python benchmarks/append_lock_cost.py                  # 20,000 appends per way, seed 0
    python benchmarks/append_lock_cost.py --entries 5000 --json

A JSONL store takes the session's writer lock for each append (one ``flock`` on a descriptor it
keeps, and one ``fstat`` to see whether a rewrite replaced the file), so that it never holds the
lock of a session it is not writing to. For the same entries, in a random order per entry, this
times:

* ``raw``: ``os.write`` of the entry's line on an ``O_APPEND`` descriptor (the floor);
* ``per_append``: ``JsonlStore.append`` (the default: the lock taken per append);
* ``burst``: ``JsonlStore.append`` inside ``store.holding(sid)`` (the lock held for the burst);
* ``no_lock``: ``JsonlStore(lock=False).append`` (unsafe with other writers);
* ``flock_pair`` and ``filelock_pair``: one acquire and release of ``aptmem.locking.SessionLock``
  and of ``filelock.FileLock`` (which aptmem used before and which reopens the file each time).

Prints p50/p90/p99 per way and the ratios of medians to ``raw`` and to ``no_lock``. Sync policy
``none`` throughout, so the lock's cost is not hidden behind an fsync.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def _percentiles(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": statistics.median(ordered) / 1000, "p90": q[89] / 1000, "p99": q[98] / 1000, "max": ordered[-1] / 1000}


def measure(entries: int, seed: int, folder: str) -> dict[str, dict[str, float]]:
    """Time every way once per entry, in a random order per entry; return µs percentiles per way."""
    import filelock

    from aptmem.entries import encode_line
    from aptmem.ids import new_session_id
    from aptmem.jsonl_store import JsonlStore
    from aptmem.locking import SessionLock
    from experiments.workloads.synthetic import generate

    rng = random.Random(seed)
    workload = generate(turns=max(10, entries // 8), seed=seed).entries
    items = [workload[i % len(workload)] for i in range(entries)]
    locked, unlocked, bursting = JsonlStore(folder), JsonlStore(folder, lock=False), JsonlStore(folder)
    sids = {name: new_session_id() for name in ("per_append", "burst", "no_lock")}
    raw_fd = os.open(os.path.join(folder, "raw.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    session_lock = SessionLock(os.path.join(folder, "probe.lock"))
    file_lock = filelock.FileLock(os.path.join(folder, "probe-filelock.lock"), thread_local=False)
    times: dict[str, list[int]] = {name: [] for name in ("raw", "per_append", "burst", "no_lock", "flock_pair", "filelock_pair")}
    clock = time.perf_counter_ns

    def raw(entry: object) -> None:
        line = encode_line(entry)  # type: ignore[arg-type]
        start = clock()
        os.write(raw_fd, line)
        times["raw"].append(clock() - start)

    def timed(name: str, call) -> None:  # type: ignore[no-untyped-def]
        start = clock()
        call()
        times[name].append(clock() - start)

    def pair(lock) -> None:  # type: ignore[no-untyped-def]
        lock.acquire()
        lock.release()

    burst = bursting.holding(sids["burst"])
    burst.__enter__()
    try:
        for entry in items:
            ways = [
                lambda: raw(entry),
                lambda: timed("per_append", lambda: locked.append(sids["per_append"], entry)),
                lambda: timed("burst", lambda: bursting.append(sids["burst"], entry)),
                lambda: timed("no_lock", lambda: unlocked.append(sids["no_lock"], entry)),
                lambda: timed("flock_pair", lambda: pair(session_lock)),
                lambda: timed("filelock_pair", lambda: pair(file_lock)),
            ]
            rng.shuffle(ways)
            for way in ways:
                way()
    finally:
        burst.__exit__(None, None, None)
        for store in (locked, unlocked, bursting):
            store.close()
        session_lock.close()
        os.close(raw_fd)
    return {name: _percentiles(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table (or one JSON object)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=20_000, help="appends per way (default 20,000)")
    p.add_argument("--seed", type=int, default=0, help="workload and order seed (default 0)")
    p.add_argument("--tmp", default=None, help="folder for the scratch files (default: system temp)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aptmem-lockcost-", dir=args.tmp) as folder:
        result = measure(args.entries, args.seed, folder)
    ratios = {name: {"to_raw": result[name]["p50"] / result["raw"]["p50"], "to_no_lock": result[name]["p50"] / result["no_lock"]["p50"]}
              for name in ("per_append", "burst", "no_lock")}
    ratios["filelock_to_flock"] = {"pair": result["filelock_pair"]["p50"] / result["flock_pair"]["p50"]}
    if args.json:
        print(json.dumps({"entries": args.entries, "seed": args.seed, "microseconds": result, "ratios": ratios}))
        return 0
    print(f"append lock cost, {args.entries:,} appends per way, seed {args.seed} (µs)\n")
    print("| way | p50 | p90 | p99 | max | p50 / raw | p50 / no_lock |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in result.items():
        r = ratios.get(name, {})
        print(f"| {name} | {row['p50']:.2f} | {row['p90']:.2f} | {row['p99']:.2f} | {row['max']:.0f} | "
              f"{r.get('to_raw', float('nan')):.2f} | {r.get('to_no_lock', float('nan')):.2f} |")
    print(f"\nfilelock acquire+release / SessionLock acquire+release (p50): {ratios['filelock_to_flock']['pair']:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
