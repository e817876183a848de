"""Write-cost benchmark: append latency of every strategy beside raw os.write, in one run.

    python benchmarks/write_cost.py                      # 5,000 entries, every strategy
    python benchmarks/write_cost.py --strategies jsonl_none,sqlite_wal_full --entries 2000

Prints a markdown summary and the design's goals, and writes to ``--out`` (default
``reports/runs/write_cost-<time>/``): ``samples.parquet`` / ``samples.csv`` (every timed
operation), ``summary.*``, ``goals.csv`` and ``report.md``.

Sizes of the default run (about 45 s on a 2-core VM with ext4): 5,000 entries for every
strategy except the ``full_json`` family, replayed for its first 500 entries only
(``--full-json-entries``): each of its appends rewrites the whole history, so its total cost is
quadratic -- 5,000 entries would take several minutes for ``in_place`` and far longer for
``atomic``. The report says when a cap applied, and its growth windows then are 1-100 vs 401-500.
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

DEFAULT_FULL_JSON_ENTRIES = 500


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--entries", type=int, default=5000, help="entries in the session (default 5000)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--strategies", default="all", help="comma-separated strategy configs, or 'all' (default)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/write_cost-<time>)")
    p.add_argument("--full-json-entries", type=int, default=DEFAULT_FULL_JSON_ENTRIES,
                   help=f"replay the full_json family for this many entries only; 0 = no cap (default {DEFAULT_FULL_JSON_ENTRIES})")
    p.add_argument("--sync-baseline", choices=("per_append", "all"), default="per_append",
                   help="time os.write+fdatasync beside strategies that sync per append (default) or beside all")
    p.add_argument("--early", default="1,100", help="early window for growth, 'lo,hi' 1-based entries (default 1,100)")
    p.add_argument("--late-size", type=int, default=100, help="late window: the last N entries replayed (default 100)")
    p.add_argument("--tmp", type=Path, default=None, help="folder for the temporary stores (default: system temp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.entries < 1 or args.full_json_entries < 0 or args.late_size < 1:
        p.error("--entries and --late-size must be >= 1, --full-json-entries >= 0")
    try:
        lo, hi = (int(x) for x in args.early.split(","))
    except ValueError:
        p.error("--early must be two integers 'lo,hi'")
    args.early = (lo, hi)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report; return the exit code (0, or 2 on bad usage)."""
    args = parse_args(argv)

    import polars as pl
    from tqdm import tqdm

    from experiments.runinfo import REPO_ROOT, run_metadata
    from experiments.strategy_configs import load_strategy, strategy_names
    from experiments.workload import WorkloadConfig, generate
    from experiments.write_cost import measure_strategies
    from experiments.write_cost_report import render_report
    from experiments.write_cost_summary import goals, summarize

    known = strategy_names()
    names = known if args.strategies == "all" else [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"unknown strategies: {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("write_cost-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter_ns()
    session = generate(WorkloadConfig(max_entries=args.entries, seed=args.seed))
    limits = {"full_json": args.full_json_entries} if args.full_json_entries else {}
    counts = {n: min(args.entries, limits.get(str(load_strategy(n).family), args.entries)) for n in names}
    with tqdm(total=sum(counts.values()), unit="entry", desc="appends", disable=args.no_progress, file=sys.stderr) as bar:
        samples = measure_strategies(names, session.entries, limits=limits, base_dir=args.tmp,
                                     sync_baseline=args.sync_baseline, progress=bar.update)
    meta = run_metadata()
    samples = samples.with_columns(
        pl.lit(args.seed).alias("seed"), pl.lit(args.entries).alias("session_entries"),
        pl.lit(meta["commit"]).alias("commit"), pl.lit(meta["machine"]).alias("machine"),
    )
    summary = summarize(samples, early=args.early, late_size=args.late_size)
    goal_table = goals(summary)
    elapsed = (time.perf_counter_ns() - started) / 1e9

    capped = [n for n in names if counts[n] < args.entries]
    notes = [
        f"Session: {args.entries} entries of the synthetic workload (seed {args.seed}), "
        f"{len(session.encode()) / 1e6:.1f} MB as JSONL; every append timed with perf_counter_ns, every sample kept.",
        "Beside each append, in the same run and in a random order per entry: a raw os.write of the same line "
        "to an O_APPEND file" + (", and os.write + fdatasync beside strategies that sync per append."
                                 if args.sync_baseline == "per_append" else ", and os.write + fdatasync (beside all)."),
        f"Growth = median over the last {args.late_size} entries replayed / median over entries "
        f"{args.early[0]}-{args.early[1]}; raw write growth is the same for the raw write (the machine's own drift).",
    ]
    if capped:
        notes.append(f"Capped (quadratic rewrite cost): {', '.join(capped)} replayed for their first "
                     f"{min(counts[n] for n in capped)} entries only (--full-json-entries).")
    notes.append(f"Commit {meta['commit']}; machine {meta['machine']}; took {elapsed:.1f} s.")
    report = render_report(summary, goal_table, notes)

    samples.write_parquet(out / "samples.parquet")
    samples.write_csv(out / "samples.csv")
    summary.write_parquet(out / "summary.parquet")
    summary.write_csv(out / "summary.csv")
    goal_table.write_csv(out / "goals.csv")
    (out / "report.md").write_text(report, encoding="utf-8")
    print(report)
    print(f"samples: {out / 'samples.parquet'} ({samples.height} rows)")
    print(out / "report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
