"""The stores users would pick instead, side by side with aptmem's log: append latency, growth, load.

    python benchmarks/peers.py                       # 2,000 appends of 100-1,200 characters per store
    python benchmarks/peers.py --repeats 3 --strategies jsonl_none,langchain_file --tmp /var/tmp

Each store runs in a fresh process of its own (one after the other, in a shuffled order per
repeat), on the same seeded entries: a mix of user, assistant, tool-call and tool-result entries
whose text is 100-1,200 characters long. The process times every ``append`` with
``perf_counter_ns``, closes the store, opens a new one on the same root and times reading every
entry back (``iter_entries``), five times, timing the opening and the reading apart. Reported per store: append p50/p90/p99; growth, the
median of the last ``--window`` appends over the median of the ``--window`` appends that follow a
warm-up of ``--warmup`` appends (the two windows never overlap); load time of the whole session
and the opening (medians of five); the bytes on disk the store reports. With ``--repeats`` above 1 each figure is the
median over repeats, with the lowest and highest beside it.

A strategy that declares a service in its YAML (the PostgreSQL strategies: a server) has it
started once, with its data under ``--tmp`` so that its files are on the same file system as the
other stores', and stopped at the end; where it cannot be had (no server binaries) the strategy is
left out, with a note. Results go to ``--out`` as
``peers.json`` and ``peers.md``; the table is printed, and the last line is the JSON file's path.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

DEFAULT = "jsonl_none,jsonl_always,openai_agents_sqlite,langchain_file,postgres_sync_on,postgres_sync_off"
SESSION = "6d1f8a52-3b7e-4c1a-9f2e-8a7b6c5d4e3f"
_WORDS = ("the parser fails on nested arrays when the input ends early so we read the file again and "
          "check every line 帮我看看这个错误 {\"path\": \"src/foo.ts\", \"line\": 42} def main(): return 0").split()


def make_entries(seed: int, count: int, low: int, high: int) -> list:  # type: ignore[type-arg]
    """``count`` entries of a plausible session, each text ``low``-``high`` characters long (seeded)."""
    from aptmem.entries import Assistant, ToolCall, ToolResult, User

    rng = random.Random(seed)
    entries = []
    for n in range(count):
        size = rng.randint(low, high)
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < size:
            words.append(rng.choice(_WORDS))
        text = " ".join(words)[:size]
        ts, kind = 1_717_000_000_000 + n * 1000, n % 4
        if kind == 0:
            entries.append(User(ts=ts, id=f"u{n}", content=text))
        elif kind == 1:
            entries.append(ToolCall(ts=ts, id=f"c{n}", name="read", args={"path": f"src/{n}.py", "note": text}))
        elif kind == 2:
            entries.append(ToolResult(ts=ts, id=f"r{n}", call_id=f"c{n - 1}", content=text))
        else:
            entries.append(Assistant(ts=ts, id=f"a{n}", content=text, model="m-1", usage={"input": n, "output": 50}))
    return entries


def child(argv: list[str]) -> int:
    """In a fresh process: append every entry to one store, timing each; then time opening and reading."""
    spec = json.loads(argv[0])
    import msgspec

    from experiments.core.strategy import StoreSpec, build_store

    config = msgspec.convert(spec["store"], StoreSpec)  # decoded once: opening is timed, not config parsing
    entries = make_entries(spec["seed"], spec["entries"], spec["low"], spec["high"])
    store = build_store(config, spec["root"])
    durability = store.capabilities.durability
    appends = []
    clock = time.perf_counter_ns
    for entry in entries:
        start = clock()
        store.append(SESSION, entry)
        appends.append(clock() - start)
    size = store.stats(SESSION).bytes_on_disk
    store.close()
    opens, loads = [], []
    for _ in range(5):
        start = clock()
        reader = build_store(config, spec["root"])
        opened = clock()
        read = sum(1 for _ in reader.iter_entries(SESSION))
        loads.append(clock() - opened)
        opens.append(opened - start)
        reader.close()
        if read != len(entries):
            print(json.dumps({"error": f"read {read} entries back, appended {len(entries)}"}))
            return 1
    print(json.dumps({"append_ns": appends, "open_ns": opens, "load_ns": loads, "bytes": size, "durability": durability}))
    return 0


def _percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def summarize(result: dict, warmup: int, window: int) -> dict:  # type: ignore[type-arg]
    """The figures of one store's run: percentiles (us), growth (late/early medians), load (ms)."""
    appends = result["append_ns"]
    early = appends[warmup:warmup + window]
    late = appends[-window:]
    return {"p50_us": _percentile(appends, 0.5) / 1e3, "p90_us": _percentile(appends, 0.9) / 1e3,
            "p99_us": _percentile(appends, 0.99) / 1e3, "early_us": statistics.median(early) / 1e3,
            "late_us": statistics.median(late) / 1e3, "growth": statistics.median(late) / statistics.median(early),
            "open_ms": statistics.median(result["open_ns"]) / 1e6,
            "load_ms": statistics.median(result["load_ns"]) / 1e6, "bytes": result["bytes"], "durability": result["durability"]}


def _cell(values: list[float], fmt: str) -> str:
    """A median, with the lowest and highest over repeats beside it when there are several."""
    middle = format(statistics.median(values), fmt)
    return middle if len(values) == 1 else f"{middle} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def table(runs: dict[str, list[dict]], args: argparse.Namespace) -> str:  # type: ignore[type-arg]
    """The markdown table of every store's figures."""
    lines = [f"{args.entries:,} appends of {args.low:,}-{args.high:,} characters, one fresh process per store; "
             f"growth = median of the last {args.window} appends / median of appends {args.warmup + 1}-{args.warmup + args.window} "
             f"(after {args.warmup} warm-up appends); open = making a new store on the root; "
             f"load = then reading all {args.entries:,} entries back (medians of 5)"
             + (f"; median (lowest-highest) of {args.repeats} repeats" if args.repeats > 1 else "") + ".", "",
             "| store | durability | append p50 (us) | p90 (us) | p99 (us) | growth | first -> last (us) | open (ms) | load all (ms) | bytes on disk |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, figures in runs.items():
        col = lambda key: [f[key] for f in figures]  # noqa: E731
        lines.append(f"| {name} | {figures[0]['durability']} | {_cell(col('p50_us'), '.1f')} | {_cell(col('p90_us'), '.1f')} | "
                     f"{_cell(col('p99_us'), '.1f')} | {_cell(col('growth'), '.2f')}x | "
                     f"{statistics.median(col('early_us')):.1f} -> {statistics.median(col('late_us')):.1f} | "
                     f"{_cell(col('open_ms'), '.2f')} | {_cell(col('load_ms'), '.2f')} | {statistics.median(col('bytes')):,.0f} |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--strategies", default=DEFAULT, help=f"comma-separated strategy configs (default {DEFAULT})")
    p.add_argument("--entries", type=int, default=2000, help="appends per store (default 2000)")
    p.add_argument("--low", type=int, default=100, help="shortest text, characters (default 100)")
    p.add_argument("--high", type=int, default=1200, help="longest text, characters (default 1200)")
    p.add_argument("--warmup", type=int, default=100, help="appends before the early window (default 100)")
    p.add_argument("--window", type=int, default=100, help="appends in the early and late windows (default 100)")
    p.add_argument("--repeats", type=int, default=1, help="runs of every store, in a shuffled order each (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the entries and of the order (default 0)")
    p.add_argument("--tmp", default=None, help="folder for the stores and the server's data (default: system temp)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default reports/runs/peers-<time>)")
    args = p.parse_args(argv)
    if args.warmup < 0 or args.window < 1 or args.entries < args.warmup + 2 * args.window:
        p.error("need --entries >= --warmup + 2 x --window, so the early and late windows do not overlap")
    if args.repeats < 1 or not 1 <= args.low <= args.high:
        p.error("--repeats must be >= 1 and 1 <= --low <= --high")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every store in fresh processes, print and save the table."""
    args = parse_args(argv)
    from aptmem.errors import ServiceUnavailable
    import msgspec

    from experiments.core.strategy import load_strategy, services_started, strategy_names

    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in strategy_names()]
    if unknown:
        print(f"unknown strategies: {', '.join(unknown)}; known: {', '.join(strategy_names())}", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="aptmem-peers-", dir=args.tmp))
    notes: list[str] = []
    services = contextlib.ExitStack()
    specs = {}
    for name in names:  # a server a strategy declares (PostgreSQL) is started once, here; one that cannot be had is left out
        try:
            (specs[name],) = services.enter_context(services_started([load_strategy(name)], scratch))
        except ServiceUnavailable as exc:
            notes.append(f"left out {name}: {exc}")
    names = list(specs)
    runs: dict[str, list[dict]] = {name: [] for name in names}  # type: ignore[type-arg]
    order_rng = random.Random(args.seed)
    try:
        for repeat in range(args.repeats):
            order = list(names)
            order_rng.shuffle(order)
            for name in order:
                spec = {"strategy": name, "root": str(scratch / f"{name}-{repeat}"), "seed": args.seed, "entries": args.entries,
                        "low": args.low, "high": args.high, "store": msgspec.to_builtins(specs[name].store)}
                done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"{name}: the measuring process failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}", file=sys.stderr)
                    return 1
                runs[name].append(summarize(json.loads(done.stdout.splitlines()[-1]), args.warmup, args.window))
                print(f"{name} (repeat {repeat + 1}): p50 {runs[name][-1]['p50_us']:.1f} us", file=sys.stderr)
                shutil.rmtree(scratch / f"{name}-{repeat}", ignore_errors=True)
    finally:
        services.close()
        shutil.rmtree(scratch, ignore_errors=True)
    from experiments.core.runinfo import REPO_ROOT

    out = args.out or REPO_ROOT / "reports" / "runs" / time.strftime("peers-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    text = table(runs, args) + "".join(f"\n\nNote: {note}" for note in notes)
    command = "python benchmarks/peers.py " + " ".join(argv if argv is not None else sys.argv[1:])
    (out / "peers.md").write_text(f"{text}\n\nCommand: `{command.strip()}`\n", encoding="utf-8")
    (out / "peers.json").write_text(json.dumps({"settings": vars(args) | {"out": str(out)}, "notes": notes, "runs": runs}, indent=1))
    print(text)
    print(out / "peers.json")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        raise SystemExit(child(sys.argv[2:]))
    raise SystemExit(main())
