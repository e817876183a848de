"""The crash-state explorer's section of the report, rebuilt from its stored tables alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.core.strategy import load_strategy, strategy_names
from experiments.measurements.crash_explore.check import VIOLATIONS
from experiments.measurements.crash_explore.child import OPERATIONS as _OPERATIONS
from experiments.measurements.crash_explore.job import read_tables

__all__ = ["crash_explore_figure", "crash_explore_section", "per_operation"]

_KINDS = ("prefix", "torn", "torn_zero", "zero", "dropped", "reordered", "undone")

def _explanations(notes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What each strategy's YAML explains about its results (``explain``), by strategy.

    A run records them in its notes; for a run made before strategies declared them, they are
    read from the strategy's config as it is now (left out when it no longer exists).
    """
    out = {}
    for name, fact in notes["strategies"].items():
        if "explain" in fact:
            out[name] = fact["explain"]
        elif name in strategy_names():
            explain = load_strategy(name).explain
            out[name] = {"within_promise": explain.within_promise, "violations": explain.violations}
    return out


def _default(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(pl.col("default_mode"))


def _sums(df: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    counts = ["enumerated", "states", "violations", *VIOLATIONS, "states_unloadable", "states_refused", "states_lossy",
              "states_lossy_allowed", "acked_lost", "good_lines_discarded"]
    return df.group_by(by, maintain_order=True).agg(*(pl.col(c).sum() for c in counts),
                                                     pl.col("acked_lost_max").max(), pl.col("ops").max())


def per_operation(df: pl.DataFrame) -> pl.DataFrame:
    """States and violations per strategy and operation, in the strategy's default recovery mode."""
    return _sums(_default(df), ["strategy", "durability", "operation", "mode"])


_BOLD = {"violations": lambda v: f"**{v:,}**" if v else "0", "states": lambda v: f"{v:,}"}
#: Thousands separators for every count column, violations in bold.
_COUNT = {**{c: (lambda v: f"{v:,}") for c in ("enumerated", "states", "states_unloadable", "states_refused",
                                                "states_lossy", "states_lossy_allowed", "acked_lost", "acked_lost_max",
                                                "good_lines_discarded", "recoveries (all modes)")}, **_BOLD}


def _main_table(df: pl.DataFrame) -> str:
    table = per_operation(df).with_columns(
        pl.format("{} / {}", pl.col("states_unloadable").map_elements(_COUNT["states"], return_dtype=pl.String),
                  pl.col("states_lossy").map_elements(_COUNT["states"], return_dtype=pl.String)).alias("unloadable / lossy"),
    ).select("strategy", "durability", "operation", "mode", "ops", "states", "violations", *VIOLATIONS,
             "unloadable / lossy")
    headers = {"mode": "recovery mode", "ops": "file ops", "lost_durable": "lost durable",
               "not_loadable": "not loadable", "mixed_compaction": "mixed compaction", "live_mismatch": "live mismatch"}
    return markdown_table(table, _COUNT, headers)


def _totals(df: pl.DataFrame) -> pl.DataFrame:
    base = _sums(_default(df), ["strategy", "durability"]).select("strategy", "durability", "enumerated", "states",
                                                                    "violations", "states_unloadable", "states_lossy")
    every = _sums(df, ["strategy"]).select("strategy", pl.col("states").alias("recoveries (all modes)"),
                                           pl.col("violations").alias("violations (all modes)"))
    return base.join(every, on="strategy", how="left", maintain_order="left")


def _kinds(df: pl.DataFrame) -> pl.DataFrame:
    """Per strategy, each kind's states and (violations) in the default mode."""
    sums = _sums(_default(df), ["strategy", "kind"]).with_columns(
        pl.when(pl.col("violations") > 0).then(pl.format("{} (**{}**)", "states", "violations"))
        .otherwise(pl.col("states").cast(pl.String)).alias("cell"))
    wide = sums.pivot(on="kind", index="strategy", values="cell")
    return wide.select("strategy", *(k for k in _KINDS if k in wide.columns))


def _several_modes(df: pl.DataFrame) -> pl.DataFrame:
    """The rows of the strategies whose states were recovered in several modes (stores offering several)."""
    several = df.group_by("strategy").agg(pl.col("mode").n_unique().alias("modes")).filter(pl.col("modes") > 1)
    return df.filter(pl.col("strategy").is_in(several["strategy"].implode()))


def _modes(df: pl.DataFrame) -> pl.DataFrame:
    modal = _several_modes(df)
    if modal.is_empty():
        return modal
    rank = {m: i for i, m in enumerate(("skip", "point_in_time", "truncate_tail", "strict"))}
    names = {n: i for i, n in enumerate(modal["strategy"].unique(maintain_order=True).to_list())}
    modal = modal.sort(pl.col("strategy").replace_strict(names), pl.col("mode").replace_strict(rank, default=9),
                       maintain_order=True)
    return _sums(modal, ["strategy", "durability", "mode"]).select(
        "strategy", "durability", "mode", "states", "violations", "states_unloadable", "states_refused", "states_lossy",
        "acked_lost", "acked_lost_max", "good_lines_discarded")


def crash_explore_figure(df: pl.DataFrame, path: Path) -> Path:
    """Two panels per strategy and operation (default recovery mode): states explored (log scale)
    and violations, beside the states that lost data within the strategy's promise."""
    plt = pyplot()
    table = per_operation(df)
    names = table["strategy"].unique(maintain_order=True).to_list()
    operations = [o for o in _OPERATIONS if o in set(table["operation"])]
    colours = {"append": "#4c72b0", "compaction_append": "#55a868", "compaction_rewrite": "#c44e52", "compaction_amid_appends": "#8172b2"}
    height = 0.8 / max(1, len(operations))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.55 * len(names) + 2.2), sharey=True)
    for j, operation in enumerate(operations):
        part = dict((r["strategy"], r) for r in table.filter(pl.col("operation") == operation).iter_rows(named=True))
        ys = [i + (j - (len(operations) - 1) / 2) * height for i in range(len(names))]
        states = [part[n]["states"] if n in part else 0 for n in names]
        violations = [part[n]["violations"] if n in part else 0 for n in names]
        outside = [part[n]["states_lossy_allowed"] if n in part else 0 for n in names]
        left.barh(ys, states, height=height, color=colours[operation], label=operation)
        right.barh(ys, violations, height=height, color=colours[operation], label=f"{operation}: violations")
        right.barh(ys, outside, left=violations, height=height, color=colours[operation], alpha=0.25, hatch="//",
                   label=f"{operation}: losses within the promise")
        for y, v in zip(ys, violations):
            if v:
                right.text(v, y, f" {v}", va="center", fontsize=7, color="#c0392b")
    left.set_xscale("log")
    left.set_xlabel("crash states explored (log scale)")
    right.set_xlabel("states: with a violation (solid), losing what the promise allows (hatched)")
    left.set_xlim(left=1)
    left.set_yticks(range(len(names)), [f"{n} ({table.filter(pl.col('strategy') == n)['durability'][0]})" for n in names])
    left.invert_yaxis()
    left.legend(fontsize=8, loc="lower right")
    right.legend(fontsize=7, loc="lower right")
    for ax in (left, right):
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle("Crash states explored and violations per strategy and operation (default recovery mode)")
    return save_figure(fig, path)


def _expected(df: pl.DataFrame, explain: dict[str, dict[str, Any]]) -> list[str]:
    """One sentence per strategy that loses data within its promise (a finding, not a violation)."""
    lines = []
    rows = _sums(_default(df), ["strategy", "family", "durability", "variant"])
    for row in rows.iter_rows(named=True):
        if not row["states_lossy_allowed"]:
            continue
        why = explain.get(row["strategy"], {}).get("within_promise") or f"its promise is `{row['durability']}`"
        verdict = "expected, not violations" if not row["violations"] else f"and **{row['violations']} violations** besides"
        lines.append(f"- `{row['strategy']}`: of {row['states']:,} states, {row['states_unloadable']:,} not loadable and "
                     f"{row['states_lossy_allowed']:,} losing acknowledged entries as its promise allows "
                     f"({row['acked_lost']:,} entries in all, up to {row['acked_lost_max']} in one state): it {why} — "
                     f"{verdict}.")
    modes = df.filter(pl.col("mode").is_in(["skip", "point_in_time"]))
    if not modes.is_empty():
        families = ", ".join(modes["family"].unique(maintain_order=True).to_list())
        lost = {m: int(modes.filter(pl.col("mode") == m)["acked_lost"].sum()) for m in ("skip", "point_in_time")}
        cut = int(modes.filter(pl.col("mode") == "point_in_time")["good_lines_discarded"].sum())
        lines.append(f"- {families}: `point_in_time` stops at the first damage and cuts every line after it: it cut {cut:,} "
                     f"good lines after damage in the middle here, and lost {lost['point_in_time']:,} acknowledged "
                     f"entries in all against {lost['skip']:,} in `skip`, which keeps the good lines after damage, also an "
                     "intact line glued onto a lost write's NUL bytes with no line end between them (the reader splits "
                     "a line after its last NUL: JSON never holds a raw one).")
    return lines


def _violations(df: pl.DataFrame, examples: pl.DataFrame, explain: dict[str, dict[str, Any]]) -> str:
    """The violations: where they are (counts), why (where the cause is known), and examples."""
    broken = examples.filter(pl.col("violation"))
    if broken.is_empty():
        return "None: every state kept the strategy's own promise, in every recovery mode."
    parts = []
    counts = df.filter(pl.col("violations") > 0)
    for (strategy,), part in counts.group_by("strategy", maintain_order=True):
        kinds = ", ".join(f"{k.replace('_', ' ')} {int(part[k].sum()):,}" for k in VIOLATIONS if part[k].sum())
        where = ", ".join(sorted(set(part["kind"])))
        known = explain.get(strategy, {}).get("violations", {})
        causes = {known[f"{k}/{state}"] for k in VIOLATIONS for state in set(part.filter(pl.col(k) > 0)["kind"])
                  if f"{k}/{state}" in known}
        parts.append(f"- `{strategy}`: {int(part['violations'].sum()):,} states ({kinds}; state kinds: {where})."
                     + "".join(f" {cause}." for cause in sorted(causes)))
    table = broken.select("strategy", "operation", "mode", "kind", "violations", "matched", "detail").head(30)
    return "\n".join(parts) + ("\n\nExamples (a few per strategy, operation, mode and kind of violation; all of them "
                               "in `crash_state_examples`):\n\n") + markdown_table(table)


def crash_explore_section(run_dir: Path) -> str | None:
    """The report's crash-state section (None when the run did not explore crash states)."""
    if not (run_dir / "crash_states.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    df, examples = tables["crash_states"], tables["crash_state_examples"]
    if df.is_empty():
        return "## Crash states explored\n\nNo strategy was explored: " + "; ".join(
            f"`{s['strategy']}`: {s['reason']}" for s in notes["skipped"]) + "\n"
    figure = crash_explore_figure(df, run_dir / "figures" / "crash_states.png")
    s = notes["settings"]
    lines = [
        "## Crash states explored",
        "",
        f"- **What**: for each strategy, the file operations of an append ({s['appends']} entries appended to a "
        f"session of {s['entries']}, then the store closed) and of a compaction persisted both ways (`append`: a "
        "marker appended; `rewrite`: the file replaced) and of a rewrite compaction amid a concurrent writer's appends "
        "(`compaction_amid_appends`: a writer's store, opened first, appends half its entries, a second store "
        "rewrites the session, the writer appends the rest; strategies safe for several processes), recorded as the "
        "strategy issued them: "
        f"{notes['tracers']['fs_model']}; for strategies declaring the strace tracer, {notes['tracers']['strace']}. Replaying every recorded "
        "operation gives back the files the operation left, byte for byte (checked for each).",
        f"- **The model**: {notes['model']}",
        "- **States** (per crash point): every operation issued on disk (`prefix`); the last write torn at each byte, "
        "the rest absent (`torn`) or NUL (`torn_zero`); one unsynced write NUL-filled (`zero`); subsets of the unsynced "
        "operations on disk (`dropped`: the earliest ones, `reordered`: a later one without an earlier one, `undone`: "
        f"an unsynced create, rename or unlink undone), every subset up to {s['max_subsets']} per crash point, else "
        f"{s['max_subsets']} seeded ones. Torn bytes: {notes['torn_sampling']}. "
        + (f"At most {s['max_states']:,} states per strategy and operation are recovered: torn writes get at least "
           "half of that when there are that many, the other states the rest, each side drawn with the seed when it "
           "has more (the tables keep how many were enumerated). " if s["max_states"] else "")
        + f"Seed {notes['seed']}.",
        "- **Judged**: each state recovered as an agent would (`recover()` in the strategy's default mode, then "
        "`iter_entries` and `read_live`; a store offering several modes also in every other one) and held to the strategy's own promise: "
        "`per_append` keeps every acknowledged entry, `batch` what a sync covered, `process`/`none` promise nothing "
        "after a power loss (their losses are findings, not violations). Invented or altered entries, a mix of the "
        "old and the compacted session, and `read_live` disagreeing with the history are violations whatever the "
        "promise.",
        "",
        "### Per strategy (default recovery mode)",
        "",
        markdown_table(_totals(df), {**_COUNT, "violations (all modes)": _BOLD["violations"]},
                       {"enumerated": "states enumerated", "states": "states explored", "states_unloadable": "not loadable",
                        "states_lossy": "losing acknowledged entries"}),
        "",
        f"![Crash states explored and violations]({figure.relative_to(run_dir)})",
        "",
        "### Per strategy and operation (default recovery mode)",
        "",
        "Violation columns count states; `unloadable / lossy` counts states not loadable / losing acknowledged "
        "entries, whether or not the promise allows it.",
        "",
        _main_table(df),
        "",
        "### By kind of crash state: states (violations), default recovery mode",
        "",
        markdown_table(_kinds(df)),
        "",
    ]
    modes = _modes(df)
    if not modes.is_empty():
        families = ", ".join(_several_modes(df)["family"].unique(maintain_order=True).to_list())
        lines += [f"### {families} recovery modes", "",
                  "`strict` and `truncate_tail` refuse damage by contract and change nothing (*refused*: the data stays "
                  "on disk for a repairing mode), so a refusal is no violation.", "",
                  markdown_table(modes, _COUNT, {"states_unloadable": "not loadable", "states_refused": "refused",
                                                 "states_lossy": "states losing acknowledged entries",
                                                 "acked_lost": "acknowledged entries lost", "acked_lost_max": "most in one state",
                                                 "good_lines_discarded": "good lines cut"}), ""]
    explain = _explanations(notes)
    expected = _expected(df, explain)
    if expected:
        lines += ["### Expected failures of the baselines, and why", "", *expected, ""]
    lines += ["### Violations", "", _violations(df, examples, explain), ""]
    if notes["skipped"]:
        lines += ["### Not explored", "", *(f"- `{i['strategy']}`" + (f" ({i['operation']})" if i.get("operation") else "")
                                            + f": {i['reason']}" for i in notes["skipped"]), ""]
    return "\n".join(lines)

