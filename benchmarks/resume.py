"""Resume benchmark: a ~100 MB session with a compaction near its end, full load vs fast resume.

    python benchmarks/resume.py                      # 100 MB, 5 repeats per mode
    python benchmarks/resume.py --size-mb 20 --repeats 3 --check

Builds the session (``experiments.workloads.resume``: history, then an appended compaction naming
the first of the last 10 turns, then 20 more entries), checks that ``read_live_tail`` returns
exactly ``select_live`` of all entries, then times each mode in fresh subprocesses
(``experiments.measurements.memory.resume_bench``): ``full_stream`` (iterate LogScan over everything),
``full_load`` (list(LogScan) + select_live) and ``tail`` (read_live_tail). Prints a markdown
table and the goal (fast resume >= 50x faster than a full streaming load), and writes
``samples.parquet`` / ``samples.csv``, ``summary.csv`` and ``report.md`` to ``--out``.

Exit status: 0; 1 if the live context read from the tail differs from the full load's, or if
``--check`` is given and the goal is not met; 2 on bad usage.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

GOAL_SPEEDUP = 50.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=float, default=100.0, help="session size in MB (10^6 bytes; default 100)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per mode, each a fresh process (default 5)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--keep-turns", type=int, default=10, help="turns kept verbatim after the compaction (default 10)")
    p.add_argument("--tail-entries", type=int, default=20, help="entries appended after the compaction (default 20)")
    p.add_argument("--path", type=Path, default=None, help="build the session here and keep it (default: a temp file, removed)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/resume-<time>)")
    p.add_argument("--check", action="store_true", help=f"exit 1 unless fast resume is >= {GOAL_SPEEDUP:g}x faster")
    p.add_argument("--no-trace", action="store_true", help="skip the tracemalloc runs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.size_mb <= 0 or args.repeats < 1 or args.keep_turns < 1 or args.tail_entries < 0:
        p.error("--size-mb must be > 0, --repeats and --keep-turns >= 1, --tail-entries >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Build, verify, measure, report; return the exit status."""
    args = parse_args(argv)

    import polars as pl
    from tqdm import tqdm

    from experiments.core.markdown import markdown_table
    from experiments.measurements.memory.resume_bench import TIMED_MODES, measure_resume, run_child, speedup, summarize_resume
    from experiments.workloads.resume import build_resume_file
    from experiments.core.runfolder import RunMeta
    from experiments.core.runinfo import REPO_ROOT

    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("resume-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    scratch = None if args.path else Path(tempfile.mkdtemp(prefix="aptmem-resume-"))
    path = args.path or scratch / "session.jsonl"  # type: ignore[operator]
    try:
        t0 = time.perf_counter_ns()
        info = build_resume_file(path, int(args.size_mb * 1e6), seed=args.seed, keep_turns=args.keep_turns,
                                 tail_entries=args.tail_entries)
        build_s = (time.perf_counter_ns() - t0) / 1e9
        check = run_child("verify", path)
        if not check.verified or check.live_entries != info.live_entries:
            print(f"FAIL: read_live_tail returned {check.live_entries} entries, select_live(all) expects "
                  f"{info.live_entries} (equal: {check.verified})", file=sys.stderr)
            return 1
        runs = args.repeats * len(TIMED_MODES) + (0 if args.no_trace else len(TIMED_MODES))
        with tqdm(total=runs, unit="run", desc="resume", disable=args.no_progress, file=sys.stderr) as bar:
            samples = measure_resume(path, repeats=args.repeats, trace=not args.no_trace, progress=bar.update)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    meta = RunMeta.current()
    samples = samples.with_columns(
        pl.lit(info.bytes).alias("file_bytes"), pl.lit(info.entries).alias("file_entries"),
        pl.lit(args.seed).alias("seed"), *meta.columns(),
    )
    summary = summarize_resume(samples)
    ratio = speedup(summary, "full_stream")
    met = ratio is not None and ratio >= GOAL_SPEEDUP
    table = markdown_table(
        summary,
        {"median_ms": _ms, "min_ms": _ms, "max_ms": _ms, "peak_rss_mb": _mb, "rss_growth_mb": _mb,
         "traced_peak_mb": _mb, "speedup_of_tail": lambda x: f"{x:,.1f}x"},
        {"median_ms": "median ms", "min_ms": "min ms", "max_ms": "max ms", "entries_read": "entries parsed",
         "live_entries": "live entries", "peak_rss_mb": "peak RSS MB", "rss_growth_mb": "RSS growth MB",
         "traced_peak_mb": "traced heap peak MB", "speedup_of_tail": "time / tail time"},
    )
    report = "\n".join([
        "# Resume: full load vs fast resume", "",
        f"- Session: {info.bytes / 1e6:.1f} MB, {info.entries} entries (seed {args.seed}); compaction at line "
        f"{info.marker_line} keeping the last {args.keep_turns} turns, then {args.tail_entries} entries: "
        f"live context {info.live_entries} entries, {info.live_bytes / 1e3:.0f} KB. Built in {build_s:.1f} s.",
        f"- Verified: read_live_tail == select_live(all {check.entries_read} entries).",
        f"- Each run in a fresh subprocess; {args.repeats} timed runs per mode, round-robin; warm page cache. "
        "Peak RSS is the child's VmHWM (RSS growth: minus its VmHWM before the work); traced heap from one "
        "extra tracemalloc run per mode.",
        f"- Commit {meta.commit}; machine {meta.machine}.", "",
        table, "",
        f"**Goal: fast resume >= {GOAL_SPEEDUP:g}x faster than a full streaming load: "
        f"{'met' if met else 'NOT met'} ({ratio:,.1f}x; vs the naive full load "
        f"{speedup(summary, 'full_load') or float('nan'):,.1f}x).**", "",
    ])
    samples.write_parquet(out / "samples.parquet")
    samples.write_csv(out / "samples.csv")
    summary.with_columns(pl.lit(info.bytes).alias("file_bytes"), pl.lit(ratio).alias("speedup_vs_full_stream"),
                         pl.lit(GOAL_SPEEDUP).alias("goal_speedup")).write_csv(out / "summary.csv")
    (out / "report.md").write_text(report, encoding="utf-8")
    print(report)
    print(out / "report.md")
    return 1 if args.check and not met else 0


def _ms(x: float) -> str:
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def _mb(x: float) -> str:
    return f"{x:,.1f}"


if __name__ == "__main__":
    sys.exit(main())
