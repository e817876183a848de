"""The fuzzing section of the report (part of the reliability figures), from the stored tables alone."""

from __future__ import annotations

from pathlib import Path

import msgspec
import polars as pl

from experiments.core.markdown import markdown_table

__all__ = ["fuzz_section", "per_target", "memory_rows"]


def _merge_json(values: list[str]) -> str:
    """Sum JSON objects of counts ({"type": n}) into one short text."""
    total: dict[str, int] = {}
    for text in values:
        for key, n in msgspec.json.decode(text or "{}").items():
            total[key] = total.get(key, 0) + n
    return ", ".join(f"{key} {n:,}" for key, n in sorted(total.items())) or "none"


def per_target(table: pl.DataFrame) -> pl.DataFrame:
    """Inputs, findings and the library's own errors per target (the big-line rows left out)."""
    fuzzed = table.filter(pl.col("input_kind") != "big_line")
    rows = []
    for (target,), part in fuzzed.group_by("target", maintain_order=True):
        kinds = ", ".join(f"{r['input_kind']} {r['inputs']:,}" for r in part.sort("input_kind").iter_rows(named=True))
        rows.append({
            "target": target, "inputs": int(part["inputs"].sum()), "by input kind": kinds,
            "unexpected exceptions": int(part["unexpected_exceptions"].sum()),
            "lost good lines": int(part["lost_good_lines"].sum()), "invented entries": int(part["invented_entries"].sum()),
            "other violations": int(part["violations"].sum()),
            "library errors (expected)": _merge_json(part["expected_errors_by_type"].to_list()),
            "seconds": float(part["seconds"].sum()),
        })
    return pl.DataFrame(rows)


def memory_rows(table: pl.DataFrame) -> pl.DataFrame:
    """The big-line rows: reader, line size, cap, peak RSS growth, traced peak, bound, verdict."""
    big = table.filter(pl.col("input_kind") == "big_line")
    return big.select(
        pl.col("target").str.replace("big_line:", "").alias("reader"),
        (pl.col("line_bytes") / 2**20).alias("line MiB"), (pl.col("line_cap") / 2**20).alias("cap MiB"),
        (pl.col("rss_growth_bytes") / 2**20).alias("peak RSS growth MiB"),
        (pl.col("traced_peak_bytes") / 2**20).alias("traced peak MiB"),
        (pl.col("memory_bound_bytes") / 2**20).alias("bound MiB"),
        pl.when(pl.col("unexpected_exceptions") > 0).then(pl.lit("**failed**"))
        .when(pl.col("violations") > 0).then(pl.lit("**over the bound**")).otherwise(pl.lit("bounded")).alias("verdict"),
        pl.col("seconds"),
    )


def _mib(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def fuzz_section(run_dir: Path) -> str | None:
    """The report's fuzzing section (None when the run did not fuzz)."""
    from experiments.measurements.fuzz.job import read_tables

    if not (run_dir / "fuzz.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    table, findings = tables["fuzz"], tables["fuzz_findings"]
    targets = per_target(table)
    total = int(targets["inputs"].sum()) if targets.height else 0
    corpus = ", ".join(notes["corpus_files"]) or "none"
    lines = [
        "## Fuzzed input",
        "",
        f"- {total:,} inputs in all: {notes['inputs_per_target']:,} per target, the same inputs for every target "
        f"(input *i* is made from `random.Random(\"{notes['seed']}-i\")` alone, so any one can be made again).",
        f"- Inputs: random bytes, and windows (up to {notes['max_input_bytes']:,} bytes of whole lines) of real "
        f"transcripts ({corpus}) and of aptmem sessions, each with one to three mutations "
        f"({', '.join(notes['mutations'])}). Half the reader and fsck inputs are read with a line cap of "
        f"{notes['small_cap']:,} bytes, so lines over the cap are fuzzed too.",
        "- Oracles: no exception but the library's own (`AptmemError`); in `skip` mode every line that decodes "
        "alone is read, in order, and nothing else; `read_live` equals `select_live` of the history; a repair "
        "leaves a clean log, is idempotent, and quarantine + repaired file give back the original bytes; a "
        "refused file is not touched; `fsck --repair` then `fsck` is clean; token counts are ints, 0 only "
        "for empty text; `tokens --entries` counts exactly the reader's entries; `import` reads every source line that "
        "is a JSON object with a `type` (or its converter refuses it as damage, with a reason), reports every other "
        "line as damage, and writes a session that reads back clean with exactly the entries of the source, and "
        "`usage-check` finds the same requests with usage and the same damage; a decoded "
        "entry re-encodes to itself.",
    ]
    if notes.get("corpus_missing"):
        lines.append(f"- Corpus folders not found (left out): {', '.join(notes['corpus_missing'])}.")
    lines += ["", markdown_table(targets, {"seconds": lambda v: f"{v:,.1f}", "inputs": lambda v: f"{v:,}"}), ""]
    memory = memory_rows(table)
    if memory.height:
        lines += [
            f"One line of {notes['big_line_bytes'] / 2**20:,.0f} MiB with no newline (a sparse file), read by each "
            f"reader in a fresh process with a line cap of {notes['big_line_cap'] / 2**20:,.0f} MiB (`aptmem tokens` "
            "and the importers' reader, which have no cap option, with the default). Bound: two caps (the line, and the transient copy "
            "`readline` makes while joining its pieces) plus a slack for the interpreter.",
            "",
            markdown_table(memory, {c: _mib for c in ("line MiB", "cap MiB", "peak RSS growth MiB", "traced peak MiB", "bound MiB")}
                           | {"seconds": lambda v: f"{v:,.1f}"}),
            "",
        ]
    if findings.height:
        shown = findings.select("target", "kind", "detail", "input_kind", "mutations", "index", "file")
        lines += [f"**{notes['findings']} findings** (first of each kind; inputs saved beside this report):", "",
                  markdown_table(shown), ""]
    else:
        lines += ["No findings: no unexpected exception, no good line lost, no oracle violated.", ""]
    return "\n".join(lines)
