"""``python -m experiments.measurements.compaction_race``: run the race and print what it found.

    python -m experiments.measurements.compaction_race                      # ci size, every strategy
    python -m experiments.measurements.compaction_race --size full --out race.csv
    python -m experiments.measurements.compaction_race --strategies jsonl_always,sqlite_wal_full

Prints one markdown row per (strategy, persist): acknowledged entries, lost, duplicated,
compactions that changed the session (and no-ops), appends and seconds; with ``--out`` the tidy
rows (one per participant) go to a CSV. Exits 1 if anything acknowledged was lost.
"""

from __future__ import annotations

import argparse
import sys

import msgspec


def main(argv: list[str] | None = None) -> int:
    """Run the race as the options say; return 1 on a loss, else 0."""
    from experiments.measurements.compaction_race.driver import run_race
    from experiments.measurements.compaction_race.spec import SIZES
    from experiments.core.strategy import load_strategy, services_started, strategy_names

    p = argparse.ArgumentParser(prog="python -m experiments.measurements.compaction_race", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="ci", help="ci (seconds a cell) or full (>= 1,000 compactions, >= 10,000 appends)")
    p.add_argument("--strategies", default="all", help="comma-separated strategy configs, or 'all' (default)")
    p.add_argument("--persist", default="append,rewrite", help="ways to persist a compaction (default: both)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--tmp", default=None, help="folder for the sessions (default: system temp)")
    p.add_argument("--out", default=None, help="write the tidy rows to this CSV file")
    args = p.parse_args(argv)
    names = strategy_names() if args.strategies == "all" else [s.strip() for s in args.strategies.split(",") if s.strip()]
    print("| strategy | persist | acknowledged | lost | duplicated | compactions | no-op | appends at end | live ok | seconds | note |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|")

    def show(cell, rows) -> None:  # type: ignore[no-untyped-def]
        first = rows[0]
        dup = sum(r.duplicated for r in rows)
        noop = sum(r.noop for r in rows)
        print(f"| {cell.strategy} | {cell.persist} | {first.cell_acknowledged:,} | {first.cell_lost} | {dup} | "
              f"{first.cell_compactions:,} | {noop:,} | {first.cell_entries_at_end:,} | {first.cell_live_consistent} | "
              f"{first.seconds:.0f} | {first.error or ''} |", flush=True)

    with services_started([load_strategy(name) for name in names], args.tmp) as specs:
        rows = run_race(specs, args.size, args.seed, args.tmp, tuple(args.persist.split(",")), progress=show)
    for row in rows:
        if row.kind == "-":
            print(f"| {row.strategy} | {row.persist} | - | - | - | - | - | - | - | - | {row.error} |")
    if args.out:
        import polars as pl

        pl.DataFrame([msgspec.to_builtins(r) for r in rows]).write_csv(args.out)
        print(f"rows: {args.out}")
    return 1 if any(r.lost or r.error and r.kind != "-" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
