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
from experiments.measurements.write_cost.summary import goals, summarize
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
    summary = summarize(_hand_made(), early=(1, 100), late_size=100)
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
    assert (t["early_window"], t["late_window"]) == ("1-100", "1-100")


def test_goals() -> None:
    summary = summarize(_hand_made())
    table = goals(summary, reference="t")
    assert table.height == 3
    assert table["met"].to_list() == [True, True, None]  # the encode-relative ratio is reported only
    assert table["value"].to_list()[2] == 0.5
    assert goals(summary, reference="s")["met"].to_list() == [False, False, None]
    assert goals(summary, reference="missing")["met"].to_list() == [None, None]


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
    } | {"write_cost_notes.json", "report.md", "figures"}
    assert (out / "figures" / "append_latency.png").stat().st_size > 10_000
