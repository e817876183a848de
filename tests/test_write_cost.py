"""The write-cost measurement: table shape and row counts, summary math. No timing assertions:
the machine is shared and noisy, so only structure and arithmetic are checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from aptmem.entries import encode_line
from experiments.core.strategy import load_strategy
from experiments.measurements.write_cost.samples import KINDS, SAMPLE_SCHEMA, measure_strategies, measure_write_cost
from experiments.measurements.write_cost.summary import MIN_WINDOW, goals, growth_windows, p50_interval, summarize
from experiments.workloads.synthetic import generate

ROOT = Path(__file__).resolve().parent.parent
N = 50


@pytest.fixture(scope="module")
def entries():  # type: ignore[no-untyped-def]
    """The first 50 entries of the seed-0 workload."""
    return generate(max_entries=N, seed=0).entries


@pytest.mark.parametrize("name, kinds", [("jsonl_none", 4), ("jsonl_always", 4), ("full_json_in_place", 3), ("sqlite_wal_off", 3)])
def test_samples_table_shape(name: str, kinds: int, entries, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    df = measure_write_cost(load_strategy(name), entries, base_dir=tmp_path, sync_baseline=kinds == 4)
    assert df.schema == pl.Schema(SAMPLE_SCHEMA)
    assert df.height == N * kinds
    assert df["strategy"].unique().to_list() == [name]
    assert sorted(df["kind"].unique().to_list()) == sorted(KINDS[:kinds])
    per_seq = df.group_by("seq").agg(pl.len().alias("n"), pl.col("kind").n_unique().alias("kinds"),
                                     pl.col("slot").sort().alias("slots"))
    assert per_seq.height == N and per_seq["seq"].min() == 1 and per_seq["seq"].max() == N
    assert (per_seq["n"] == kinds).all() and (per_seq["kinds"] == kinds).all()
    assert all(s == list(range(kinds)) for s in per_seq["slots"].to_list())  # each entry: a permutation
    sizes = df.filter(pl.col("kind") == "strategy").sort("seq")["bytes"].to_list()
    assert sizes == [len(encode_line(e)) for e in entries]
    assert (df["latency_ns"] > 0).all()
    assert list(tmp_path.iterdir()) == []  # the temporary store is removed


def test_measure_strategies_caps_and_baselines(entries, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    df = measure_strategies([load_strategy(n) for n in ("jsonl_none", "jsonl_always", "full_json_atomic")], entries,
                            quadratic_entries=20, base_dir=tmp_path)
    counts = dict(df.group_by("strategy").agg(pl.len()).iter_rows())
    # fdatasync baseline only beside the per-append durable ones; quadratic rewrites capped at 20 entries.
    assert counts == {"jsonl_none": N * 3, "jsonl_always": N * 4, "full_json_atomic": 20 * 4}
    info = df.unique("strategy").sort("strategy").select("strategy", "family", "durable", "durability").rows()
    assert info == [("full_json_atomic", "full_json", True, "per_append"),
                    ("jsonl_always", "jsonl", True, "per_append"),
                    ("jsonl_none", "jsonl", False, "process")]
    everywhere = measure_strategies([load_strategy("jsonl_none")], entries[:10], base_dir=tmp_path, sync_baseline="all")
    assert everywhere.height == 40
    with pytest.raises(ValueError):
        measure_strategies([load_strategy("jsonl_none")], entries, sync_baseline="sometimes")


def _hand_made() -> pl.DataFrame:
    """Strategy ``s`` (syncs): append 10*seq ns, raw write 5, encode 3, raw fdatasync 100;
    ``t`` (no sync): append 7, raw 7, encode 7."""
    rows = []
    for seq in range(1, 201):
        rows += [("s", "per_append", seq, "strategy", 10 * seq), ("s", "per_append", seq, "raw_write", 5),
                 ("s", "per_append", seq, "encode", 3), ("s", "per_append", seq, "raw_write_fdatasync", 100)]
    for seq in range(1, 101):
        rows += [("t", "process", seq, "strategy", 7), ("t", "process", seq, "raw_write", 7),
                 ("t", "process", seq, "encode", 7)]
    df = pl.DataFrame(rows, schema=["strategy", "durability", "seq", "kind", "latency_ns"], orient="row")
    return df.with_columns(pl.lit("fam").alias("family"), pl.lit(False).alias("durable"), pl.lit("v").alias("variant"),
                           pl.lit(100).alias("bytes"), pl.lit(0).cast(pl.Int8).alias("slot"))


def test_summary_math_on_a_hand_made_table() -> None:
    summary = summarize(_hand_made(), warmup=0, window=100)
    s = summary.filter(pl.col("strategy") == "s").row(0, named=True)
    assert s["entries"] == 200
    assert s["p50_ns"] == pytest.approx(1005.0)  # median of 10..2000: (1000 + 1010) / 2
    assert s["p90_ns"] == pytest.approx(1801.0)  # linear: position 179.1 between 1800 and 1810
    assert s["p99_ns"] == pytest.approx(1980.1)
    assert s["max_ns"] == 2000 and s["mean_ns"] == pytest.approx(1005.0)
    assert s["raw_write_p50_ns"] == 5 and s["raw_fdatasync_p50_ns"] == 100
    assert s["ratio_raw_write"] == pytest.approx(201.0)
    assert s["paired_ratio_raw_write"] == pytest.approx(201.0)  # median of 2*seq over 1..200
    assert s["ratio_raw_fdatasync"] == pytest.approx(10.05)
    assert s["encode_p50_ns"] == 3 and s["ratio_encode_raw_write"] == pytest.approx(1005.0 / 8)
    assert (s["early_window"], s["late_window"]) == ("1-100", "101-200")
    assert s["early_p50_ns"] == pytest.approx(505.0) and s["late_p50_ns"] == pytest.approx(1505.0)
    assert s["growth"] == pytest.approx(1505 / 505)
    assert s["raw_write_growth"] == pytest.approx(1.0)
    t = summary.filter(pl.col("strategy") == "t").row(0, named=True)
    assert t["ratio_raw_write"] == 1.0 and t["growth"] == 1.0 and t["ratio_encode_raw_write"] == 0.5
    assert t["raw_fdatasync_p50_ns"] is None and t["ratio_raw_fdatasync"] is None
    assert (t["early_window"], t["late_window"]) == ("1-50", "51-100")  # a short replay: halves, never overlapping
    assert s["p50_lo_ns"] <= s["p50_ns"] <= s["p50_hi_ns"] and t["p50_lo_ns"] == t["p50_hi_ns"] == 7


def test_growth_windows_leave_out_the_warm_up_and_never_overlap() -> None:
    assert growth_windows(2000, warmup=100, window=100) == ((101, 200), (1901, 2000))
    assert growth_windows(260, warmup=100, window=100) == ((101, 180), (181, 260))
    for entries in range(0, 400, 7):
        windows = growth_windows(entries, warmup=50, window=100)
        if windows is None:
            assert (entries - 50) // 2 < MIN_WINDOW
            continue
        (e_lo, e_hi), (l_lo, l_hi) = windows
        assert e_lo == 51 and e_hi < l_lo and l_hi == entries and e_hi - e_lo == l_hi - l_lo >= MIN_WINDOW - 1
    assert growth_windows(11, warmup=0, window=100) is None  # 11 entries: no growth figure, not "1.00x"


def test_p50_interval_covers_the_median_and_widens_with_a_slow_stretch() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    steady = rng.normal(100.0, 1.0, 1000)
    lo, hi = p50_interval(steady, seed=7)
    assert lo <= float(np.median(steady)) <= hi
    drifting = steady.copy()
    drifting[600:] += 50.0  # the machine got busy for the last 40%: the interval must say so
    lo2, hi2 = p50_interval(drifting, seed=7)
    assert hi2 - lo2 > 5 * (hi - lo)


def test_goals() -> None:
    summary = summarize(_hand_made(), warmup=0)
    table = goals(summary, reference="t")
    # encode + raw write (t: 7 / 14 = 0.5), then s against raw write + fdatasync (1005 / 100), then t's growth
    assert table["goal"].to_list()[0].startswith("median append / (median encode + median raw os.write)")
    assert "fdatasync" in table["goal"][1] and table["strategy"].to_list() == ["t", "s", "t"]
    assert table["met"].to_list() == [True, False, True]
    assert table["value"].to_list()[:2] == [0.5, pytest.approx(10.05)]
    assert not table["goal"].str.starts_with("median append / median raw os.write").any()  # the raw-write-only goal is gone
    # the default warm-up (100) leaves t's 100 appends no growth windows: no figure, not a "met"
    assert goals(summarize(_hand_made()), reference="t")["met"].to_list()[-1] is None
    assert goals(summary, reference="missing")["met"].to_list() == [None, None]


def test_goals_against_the_peers_use_the_intervals() -> None:
    peer = _hand_made().filter(pl.col("strategy") == "t").with_columns(
        pl.lit("u").alias("strategy"), pl.lit("peer").alias("family"), pl.col("latency_ns") * 2)
    summary = summarize(pl.concat([_hand_made(), peer]), warmup=0, window=20)
    table = goals(summary, reference="t")
    against = table.filter(pl.col("goal").str.contains(" vs "))
    assert against["goal"].to_list() == ["t vs u (not durable): not slower beyond the noise"]
    assert against["met"].to_list() == [True] and against["value"].to_list() == [0.5]
    assert goals(summary, reference="u").filter(pl.col("goal").str.contains(" vs "))["met"].to_list() == [False]


def test_command_line_smoke(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "write_cost.py"), "write_cost.entries=40",
         "strategy=[jsonl_none,full_json_in_place]", "write_cost.quadratic_entries=15", "--out", str(out),
         "progress=false", f"write_cost.tmp={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "| jsonl_none |" in done.stdout and "Capped" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == str(out / "report.md")
    samples = pl.read_parquet(out / "write_cost_samples.parquet")
    assert samples.height == 40 * 3 + 15 * 3
    assert {"seed", "commit", "machine", "workload"} <= set(samples.columns)
    assert pl.read_csv(out / "write_cost_samples.csv").height == samples.height
    assert {p.name for p in out.iterdir()} == {
        f"write_cost_{t}.{ext}" for t in ("samples", "summary", "goals") for ext in ("parquet", "csv")
    } | {"write_cost_notes.json", "report.md", "figures", "strategies.parquet", "strategies.csv", "run_notes.json"}
    assert (out / "figures" / "append_latency.png").stat().st_size > 10_000


def test_strategies_take_turns_in_rounds(entries, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every strategy appends its next slice in each round (a slow minute falls on all alike), all of them kept."""
    import msgspec

    from experiments.core.strategy import StoreSpec
    import recording_store

    base = load_strategy("jsonl_none")
    specs = [msgspec.structs.replace(base, name=label, store=StoreSpec(
        target="recording_store.RecordingStore", settings={**base.store.settings, "label": label})) for label in "abc"]
    recording_store.APPENDS.clear()
    df = measure_strategies(specs, entries, base_dir=tmp_path, rounds=5)
    log = recording_store.APPENDS
    assert sorted(log) == sorted(["a", "b", "c"] * N)
    # fifteen slices of N/5 appends, each of one strategy; each round (three slices) holds every strategy once
    step = N // 5
    slices = [log[i:i + step] for i in range(0, len(log), step)]
    assert len(slices) == 15 and all(len(set(part)) == 1 for part in slices)
    assert all(sorted(part[0] for part in slices[r * 3:(r + 1) * 3]) == ["a", "b", "c"] for r in range(5))
    assert dict(df.group_by("strategy").agg(pl.len()).iter_rows()) == {"a": N * 3, "b": N * 3, "c": N * 3}
    one_by_one = measure_strategies(specs[:1], entries, base_dir=tmp_path, rounds=1)
    assert one_by_one.height == N * 3
    with pytest.raises(ValueError):
        measure_strategies(specs, entries, rounds=0)
