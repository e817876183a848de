"""The compaction section of the report: occupancy, compactions and fact retention per window,
with two figures, rebuilt from the stored raw tables alone (``occupancy``, ``compaction``,
``facts``, ``fact_checks`` and ``compaction_notes.json``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table

__all__ = ["compaction_section", "occupancy_figure", "retention_figure", "retention_markdown", "summary_markdown"]

#: A point of the retention curve needs at least this many facts behind it.
MIN_FACTS = 3


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def summary_markdown(summary: pl.DataFrame) -> str:
    """One row per window and tier: compactions, occupancy before / after, what compaction had to do, facts kept."""
    table = summary.sort("window", "tier", descending=[True, False]).select(
        "window", "tier", "appends", "compactions",
        pl.col("max_occupancy").alias("max after append"), pl.col("peak_occupancy").alias("peak before compaction"),
        pl.format("{} – {}", pl.col("post_min").map_elements(_pct, return_dtype=pl.String),
                  pl.col("post_max").map_elements(_pct, return_dtype=pl.String)).alias("after compaction (range)"),
        pl.col("post_median").alias("after compaction (median)"),
        pl.col("over_target").alias("over target"), pl.col("shortened").alias("entries shortened"),
        pl.col("split_tool_pairs").alias("split tool pairs"),
        pl.col("first_compaction_pct").alias("facts kept by their 1st compaction"),
        pl.col("median_survived").alias("median compactions a fact survives"),
        pl.format("{}/{}", "retained", "facts").alias("facts retained at end"), pl.col("retained_pct").alias("retained %"))
    fmt = {"window": lambda v: f"{v:,}", "max after append": _pct, "peak before compaction": _pct,
           "after compaction (median)": _pct, "retained %": lambda v: f"{v:.0f}%",
           "facts kept by their 1st compaction": lambda v: f"{v:.0f}%", "median compactions a fact survives": lambda v: f"{v:g}"}
    return markdown_table(table, fmt)


def retention_markdown(retention: pl.DataFrame, by: str) -> str:
    """Facts retained at the end, one row per group of ``by`` (kind, lang or carrier), one column per window and tier."""
    part = retention.filter(pl.col("by") == by).with_columns(
        pl.format("{} (n={})", pl.col("retained_pct").round(0).cast(pl.Int64), "facts").alias("cell"),
        pl.format("window {}, {}", "window", "tier").alias("replay"))
    order = part.sort("window", "tier", descending=[True, False])["replay"].unique(maintain_order=True).to_list()
    wide = part.pivot(on="replay", index="group", values="cell").sort("group")
    return markdown_table(wide.select(pl.col("group").alias(by), *order))


def _x_turn(occupancy: pl.DataFrame) -> pl.Expr:
    """Turn number plus the entry's position inside the turn (0 .. <1), so the line advances per append."""
    position = pl.col("seq").rank("ordinal").over("window", "tier", "turn") - 1
    size = pl.len().over("window", "tier", "turn")
    return (pl.col("turn") + position / size).alias("x")


def occupancy_figure(occupancy: pl.DataFrame, trigger: float, target: float, path: Path) -> Path:
    """One panel per window (and tier): occupancy against turn, each compaction marked, trigger and target lines."""
    plt = pyplot()
    data = occupancy.with_columns(_x_turn(occupancy)).sort("window", "tier", "seq")
    replays = data.select("window", "tier").unique(maintain_order=True).sort("window", "tier", descending=[True, False]).rows()
    fig, axes = plt.subplots(len(replays), 1, figsize=(11, 2.8 * len(replays) + 1), sharex=True, squeeze=False)
    for ax, (window, tier) in zip(axes[:, 0], replays, strict=True):
        part = data.filter((pl.col("window") == window) & (pl.col("tier") == tier))
        # A sawtooth: every append's occupancy, and where it compacted, the drop to the after value.
        xs, ys = [], []
        for x, before, after, compacted in part.select("x", "occupancy_before", "occupancy_after", "compacted").iter_rows():
            xs.append(x)
            ys.append(min(before, 1.05) * 100)
            if compacted:
                xs.append(x)
                ys.append(after * 100)
        ax.plot(xs, ys, color="tab:blue", linewidth=0.9, label="context occupancy after each append")
        hits = part.filter(pl.col("compacted"))
        ax.scatter(hits["x"], (hits["occupancy_before"].clip(upper_bound=1.05)) * 100, marker="v", s=18, color="tab:red",
                   zorder=3, label="compaction fires (drawn at 105% when the append overflowed the window)")
        ax.scatter(hits["x"], hits["occupancy_after"] * 100, marker="o", s=10, color="tab:green", zorder=3,
                   label="after compaction")
        ax.axhline(trigger * 100, color="tab:red", linestyle="--", linewidth=1, label=f"trigger {trigger:.0%}")
        ax.axhline(target * 100, color="tab:green", linestyle="--", linewidth=1, label=f"target {target:.0%}")
        ax.set_ylim(0, 110)
        ax.set_ylabel("occupancy (% of window)")
        ax.set_title(f"window {window:,} tokens, {tier} tier: {hits.height} compactions", fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("turn of the replayed session (each append advances within its turn)")
    fig.suptitle("Context occupancy over turns, with compaction events")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)  # one legend below all panels
    return save_figure(fig, path, rect=(0, 0.08 if len(replays) > 1 else 0.12, 1, 1))


def retention_figure(checks: pl.DataFrame, facts: pl.DataFrame, path: Path) -> Path:
    """Share of planted facts still in the live context after the k-th compaction since planting, per window."""
    plt = pyplot()
    from matplotlib.ticker import ScalarFormatter

    # Among the facts that have seen at least k compactions: the group shrinks as k grows (late
    # facts see few), so points backed by fewer than MIN_FACTS facts are left out.
    curve = (checks.group_by("window", "tier", "since_planted")
             .agg(pl.col("present").mean().alias("share"), pl.len().alias("n"))
             .filter(pl.col("n") >= MIN_FACTS).sort("since_planted"))
    fig, ax = plt.subplots(figsize=(9, 5))
    replays = facts.select("window", "tier").unique().sort("window", "tier", descending=[True, False]).rows()
    for window, tier in replays:
        part = curve.filter((pl.col("window") == window) & (pl.col("tier") == tier))
        alive = part.filter(pl.col("share") > 0)["since_planted"]
        if alive.len() and alive.max() < part["since_planted"].max():  # end each curve at its last fact lost
            end = part.filter(pl.col("since_planted") > alive.max())["since_planted"].min()
            part = part.filter(pl.col("since_planted") <= end)
        ax.plot(part["since_planted"], part["share"] * 100, marker="o", markersize=3, linewidth=1.2,
                label=f"window {window:,}, {tier}")
    ax.set_ylim(-3, 103)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())  # 1, 10, 100 rather than 10^0, 10^1, 10^2
    ax.set_xlabel("compactions since the fact was planted (k, log scale; a curve ends where its last fact is lost)")
    ax.set_ylabel(f"facts with the answer in the live context,\n% of those planted >= k compactions ago (n >= {MIN_FACTS})")
    ax.set_title("Fact retention across compactions (summary + kept turns as shown)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def compaction_section(run_dir: Path) -> str | None:
    """The report's compaction section (None when the run did not replay compaction)."""
    from experiments.measurements.compaction.job import read_tables, summaries

    run_dir = Path(run_dir)
    if not (run_dir / "occupancy.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    derived = summaries(tables)
    occ_png = occupancy_figure(tables["occupancy"], float(notes["trigger"]), float(notes["target"]),  # type: ignore[arg-type]
                               run_dir / "figures" / "compaction_occupancy.png")
    transcript = notes.get("workload") == "transcript"
    ret_png = (None if transcript else
               retention_figure(tables["fact_checks"], tables["facts"], run_dir / "figures" / "fact_retention.png"))
    elsewhere = int(tables["facts"]["answer_elsewhere"].gt(0).sum())
    confirm = notes["confirm"] or "none (the cheap tier decides alone)"
    tiers = ", ".join(notes["tiers"])  # type: ignore[arg-type]
    lines = [
        "## Compaction: context occupancy and fact retention",
        "",
        (f"- Session: real transcripts (the transcript workload), {notes['turns']} turns, {notes['entries']} entries "
         f"({notes['session_mb']} MB as JSONL); planted-fact scoring does not apply to a real session (it has no "
         "facts with known answers), so only occupancy and compactions are scored; "
         if transcript else
         f"- Session: the synthetic workload, {notes['turns']} turns, {notes['entries']} entries "
         f"({notes['session_mb']} MB as JSONL), seed {notes['seed']}, {notes['facts']} planted facts with exact answers; ")
        + "replayed through `aptmem.session.Session` on the JSONL store, once per window and tier.",
        f"- Policy: trigger {notes['trigger']:.0%}, target {notes['target']:.0%}, keep {notes['keep_turns']} turns"
        + (f" (at most {notes['keep_tokens']:,} tokens)" if notes["keep_tokens"] else "")
        + (f", or at least the newest {notes['keep_recent_tokens']:,} tokens, cut inside a turn where whole turns "
           "do not fit" if notes.get("keep_recent_tokens") else "")
        + f", persisted by `{notes['persist']}`; the extractive summarizer; cheap tier {tiers}, "
        f"confirmed near the trigger by {confirm}.",
        "- Occupancy = context tokens / window by the deciding tier, right after an append (before the compaction it "
        "causes) and once that compaction is done. A single large tool result can push it past 100% in one append; "
        "the peak column shows it.",
        "- A fact is retained when its exact answer occurs in the live context as the model is shown it: the summary or "
        "a kept entry (a shortened one only with what is left). Checked after every later compaction and at the end.",
    ]
    if elsewhere:
        lines.append(f"- Caution: {elsewhere} fact answers also occur outside their carrier entry, so their retention "
                     "may be a coincidence.")
    lines += [
        "",
        summary_markdown(derived["compaction_summary"]),
        "",
        f"![Context occupancy over turns with compaction events]({occ_png.relative_to(run_dir)})",
        "",
    ]
    if ret_png is None:
        return "\n".join(lines)
    lines += [
        "### Facts retained at the end of the replay (% of the planted facts, n = facts in the group)",
        "",
        "By fact kind:",
        "",
        retention_markdown(derived["fact_retention"], "kind"),
        "",
        "By language and by the entry that carried the fact:",
        "",
        retention_markdown(derived["fact_retention"], "lang"),
        "",
        retention_markdown(derived["fact_retention"], "carrier"),
        "",
        f"![Fact retention across compactions]({ret_png.relative_to(run_dir)})",
        "",
    ]
    return "\n".join(lines)
