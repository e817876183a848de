"""The crash-recovery section of the report: tables and the outcomes figure, from the stored tables alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.measurements.crash.job import read_tables

__all__ = ["OUTCOMES", "CLASSES", "KINDS", "outcome_column", "recovery_figure", "crash_section"]

#: Outcome of a case, in stacking order, with its colour.
OUTCOMES = {
    "loadable, nothing acknowledged lost": "#4c9a4c",
    "loadable, acknowledged entries lost": "#e6a23c",
    "not loadable": "#c0392b",
}

_MODES = ("strict", "truncate_tail", "point_in_time", "skip")
_DAMAGES = ("torn", "zero", "drop", "middle")

#: Each crash kind as the tables name it, in report order.
KINDS = {"process": "process crash (SIGKILL)", "server": "server crash (SIGKILL of its server)",
         "power_loss": "power loss (torn, zero, drop)"}

#: What each durability class promises (``capabilities.durability``), strongest first.
CLASSES = {
    "per_append": "durable: an acknowledged append survives a power loss",
    "batch": "batch: survives a power loss once its batch is synced",
    "process": "survives a process crash, not a power loss",
    "none": "no promise (a crash mid-rewrite can lose everything)",
}


def outcome_column() -> pl.Expr:
    """The outcome of each case as one of :data:`OUTCOMES`."""
    names = list(OUTCOMES)
    return (pl.when(~pl.col("loadable")).then(pl.lit(names[2]))
            .when(pl.col("lost") > 0).then(pl.lit(names[1])).otherwise(pl.lit(names[0])).alias("outcome"))


def _default_mode(df: pl.DataFrame, notes: dict[str, Any]) -> pl.DataFrame:
    """Only the rows recovered in each strategy's default mode (a store offering several modes has its power-loss images
    recovered in every mode; the others in their only one)."""
    modes = pl.DataFrame({"strategy": list(notes["strategies"]),
                          "default_mode": [s["default_mode"] for s in notes["strategies"].values()]})
    return df.join(modes, on="strategy", how="left").filter(pl.col("mode") == pl.col("default_mode")).drop("default_mode")


def _summary(df: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Cases, loadable share, acknowledged lost (total, max), invented, violations, per group."""
    return (df.group_by(by, maintain_order=True)
            .agg(pl.len().alias("cases"), (pl.col("loadable").mean() * 100).alias("loadable %"),
                 pl.col("lost").sum().alias("lost total"), pl.col("lost").max().alias("lost max"),
                 pl.col("allowed_loss").max().alias("promise allows (max)"),
                 pl.col("invented").sum().alias("invented"),
                 pl.col("bytes_discarded").median().alias("bytes discarded p50"),
                 (pl.col("recovery_ns").median() / 1e6).alias("recovery p50 ms"),
                 pl.col("violation").sum().alias("violations")))


_FMT = {"loadable %": lambda v: f"{v:.0f}%", "recovery p50 ms": lambda v: f"{v:.1f}",
        "bytes discarded p50": lambda v: f"{v:,.0f}", "violations": lambda v: f"**{v}**" if v else "0"}


def _several_modes(df: pl.DataFrame) -> pl.DataFrame:
    """The power-loss cases of the strategies whose images were recovered in several modes (stores that
    offer several recovery modes): the rows that compare the modes."""
    power = df.filter(pl.col("crash_kind") == "power_loss")
    several = power.group_by("strategy").agg(pl.col("mode").n_unique().alias("modes")).filter(pl.col("modes") > 1)
    return power.filter(pl.col("strategy").is_in(several["strategy"].implode()))


def recovery_figure(df: pl.DataFrame, notes: dict[str, Any], path: Path) -> Path:
    """Stacked bars of outcomes (share of cases): per strategy for each crash kind in its default
    recovery mode, and per recovery mode and damage for the power-loss images of the strategies
    that offer several recovery modes."""
    plt = pyplot()
    base = _default_mode(df, notes).with_columns(outcome_column())
    order = list(notes["strategies"])
    # The mode panel shows those of them that sync every append: their only losses are the
    # recovery mode's doing, not the sync policy's (all of them are in the tables).
    modal = _several_modes(df)
    modal_names = [n for n in order if n in modal.filter(pl.col("durability") == "per_append")["strategy"].to_list()] \
        or [n for n in order if n in modal["strategy"].to_list()]
    mode_order = {f"{m} · {d}": (i, j) for i, m in enumerate(_MODES) for j, d in enumerate(_DAMAGES)}
    panels = [
        ("Process crash (SIGKILL), default recovery mode", base.filter(pl.col("crash_kind") == "process"), "strategy"),
        ("Server crash (the store's server SIGKILLed mid-append, then restarted)",
         base.filter(pl.col("crash_kind") == "server"), "strategy"),
        ("Power loss (torn, zero, drop), default recovery mode",
         base.filter((pl.col("crash_kind") == "power_loss") & (pl.col("damage") != "middle")), "strategy"),
        (f"{', '.join(modal_names)}: power-loss images by recovery mode",
         df.filter(pl.col("strategy").is_in(modal_names) & (pl.col("crash_kind") == "power_loss")).with_columns(
             outcome_column(), pl.format("{} · {}", "mode", "damage").alias("mode · damage")), "mode · damage"),
    ]
    panels = [panel for panel in panels if not panel[1].is_empty()]  # no empty panel: a missing kind is said in the text
    heights = [max(2.0, 0.32 * max(1, part[by].n_unique()) + 1.2) for _, part, by in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, sum(heights)), gridspec_kw={"height_ratios": heights},
                             squeeze=False)
    axes = axes[:, 0]
    for ax, (title, part, by) in zip(axes, panels):
        present = set(part[by].to_list())
        labels = [v for v in order if v in present] if by == "strategy" else \
            sorted(present, key=lambda v: mode_order.get(v, (99, 99)))
        counts = part.group_by(by, "outcome").agg(pl.len().alias("n"))
        totals = dict(part.group_by(by).agg(pl.len()).iter_rows())
        violations = dict(part.group_by(by).agg(pl.col("violation").sum()).iter_rows())
        left = [0.0] * len(labels)
        for outcome, colour in OUTCOMES.items():
            share = []
            for label in labels:
                hit = counts.filter((pl.col(by) == label) & (pl.col("outcome") == outcome))["n"]
                share.append(100 * (hit[0] if len(hit) else 0) / totals[label])
            ax.barh(labels, share, left=left, color=colour, label=outcome, edgecolor="white", linewidth=0.5)
            left = [a + b for a, b in zip(left, share)]
        for y, label in enumerate(labels):
            text = f"n={totals[label]}" + (f", {violations[label]} violation(s)" if violations[label] else "")
            ax.text(101, y, text, va="center", fontsize=7, color="#c0392b" if violations[label] else "black")
        if by == "strategy":
            classes = dict(part.select("strategy", "durability").unique().iter_rows())
            ax.set_yticks(range(len(labels)), [f"{name} ({classes[name]})" for name in labels])
        ax.invert_yaxis()
        ax.set_xlim(0, 125)
        ax.set_xticks(range(0, 101, 20))
        ax.set_xlabel("share of cases (%)")
        missing = [name for name in order if name not in present] if "Power loss" in title else []
        ax.set_title(title + (f"\n(not simulated: {', '.join(missing)}; see the notes on modelled power losses)" if missing else ""),
                     fontsize=10 if missing else None)
        ax.tick_params(axis="y", labelsize=8)
    axes[0].legend(loc="lower right", fontsize=8, bbox_to_anchor=(1.0, 1.0 + 0.9 / heights[0]), ncol=3)
    fig.suptitle("Recovery outcomes per crash kind and recovery mode", y=0.995)
    return save_figure(fig, path)


def _without_promise(df: pl.DataFrame) -> list[str]:
    """Plain sentences for losses no promise covered (findings, not violations)."""
    lines = []
    df = df.filter(pl.col("damage").fill_null("") != "middle")
    lossy = df.filter(pl.col("allowed_loss").is_null() & (pl.col("lost") > 0))
    for (strategy, kind), part in lossy.group_by("strategy", "crash_kind", maintain_order=True):
        total = df.filter((pl.col("strategy") == strategy) & (pl.col("crash_kind") == kind)).height
        unloadable = part.filter(~pl.col("loadable")).height
        lines.append(f"- `{strategy}` ({part['durability'][0]}), {kind.replace('_', ' ')}: {part.height} of {total} cases lost "
                     f"acknowledged entries (up to {part['lost'].max()}), {unloadable} of them not loadable at all.")
    return lines


def _by_mode(df: pl.DataFrame) -> pl.DataFrame:
    """Power-loss cases per recovery mode and damage: loadable share, bytes discarded, and the
    acknowledged entries each strategy lost (its sync policy decides what a power loss takes; the
    mode decides what recovery gives back)."""
    if df.is_empty():
        return pl.DataFrame({"mode": [], "damage": []})
    keys = ["mode", "damage"]
    pooled = df.group_by(*keys).agg(pl.len().alias("cases"), (pl.col("loadable").mean() * 100).alias("loadable %"),
                                   pl.col("bytes_discarded").median().alias("bytes discarded p50"),
                                   pl.col("violation").sum().alias("violations"))
    names = df["strategy"].unique(maintain_order=True).to_list()
    lost = df.group_by(*keys, "strategy").agg(pl.col("lost").sum()).pivot(on="strategy", index=keys, values="lost")
    lost = lost.rename({n: f"lost: {n}" for n in names})
    rank = {"mode": {m: i for i, m in enumerate(_MODES)}, "damage": {d: i for i, d in enumerate(_DAMAGES)}}
    return (pooled.join(lost, on=keys)
            .sort(*(pl.col(k).replace_strict(rank[k], default=9) for k in keys))
            .select(*keys, "cases", "loadable %", *(f"lost: {n}" for n in names), "bytes discarded p50", "violations"))


def crash_section(run_dir: Path) -> str | None:
    """The report's crash-recovery section (None when the run did not inject crashes)."""
    if not (run_dir / "recovery.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    df = tables["recovery"]
    figure = recovery_figure(df, notes, run_dir / "figures" / "recovery_outcomes.png")
    settings = notes["settings"]
    base = _default_mode(df, notes)
    rank = {name: i for i, name in enumerate(CLASSES)}
    kind_rank = {kind: i for i, kind in enumerate(KINDS)}
    by_class = _summary(base.filter(pl.col("damage").fill_null("") != "middle")
                        .sort(pl.col("crash_kind").replace_strict(kind_rank, default=9),
                              pl.col("durability").replace_strict(rank, default=99)),
                        ["crash_kind", "durability"])
    by_class = by_class.with_columns(
        pl.col("crash_kind").replace_strict(KINDS, default=pl.col("crash_kind")).alias("crash kind"),
        pl.col("durability").replace_strict(CLASSES, default=pl.col("durability")).alias("class (promise)"),
        pl.format("{} / {}", "lost total", "lost max").alias("acknowledged lost (total / max)"),
    ).select("crash kind", "class (promise)", "cases", "loadable %", "acknowledged lost (total / max)", "invented",
             "violations")
    per_strategy = _summary(base.with_columns(pl.col("damage").fill_null("kill")), ["strategy", "durability", "crash_kind", "damage"])
    modal = _several_modes(df)
    by_mode = _by_mode(modal)
    modal_families = ", ".join(modal["family"].unique(maintain_order=True).to_list()) or "No strategy's"
    lines = [
        "## Crash recovery",
        "",
        f"- **Process crashes**: per strategy, {settings['kills']} SIGKILLs aimed at seeded random moments of appends and "
        f"{settings['compaction_kills']} of compactions of a real writer process appending the first {settings['entries']} "
        f"entries of the workload (seed {notes['workload_seed']}) through a compacting Session (window {settings['window']} "
        "tokens); the writer acknowledges each entry on a pipe as its append returns, so the parent knows exactly what was "
        "acknowledged. Recovery in a fresh process: `recover()` in the strategy's default mode, then `iter_entries` and `read_live`.",
        f"- **Power loss**, simulated on the bytes at {settings['images']} seeded moments per strategy (one image per damage kind "
        "each): for strategies declaring the `trace` model, from the writer's own file-system calls, traced in its process (data durable up to each "
        "file's last fsync/fdatasync, a new or renamed name only after its folder's fsync, as POSIX promises); the unsynced "
        "tail torn at a random byte (`torn`), NUL-filled from a random byte (`zero`) or lost (`drop`); and a partial line "
        "spliced into the middle (`middle`, two interleaved writers: foreign damage no strategy promises to survive).",
        (f"- **Server crashes**, for each strategy whose store needs a server: {settings.get('server_kills', 0)} SIGKILLs of "
         "the whole server at seeded moments of a fresh writer's appends, the server then started again on its files "
         "(its WAL replayed) and the session recovered in another fresh process; judged like a power loss "
         "(a `per_append` promise loses nothing acknowledged)." if not df.filter(pl.col("crash_kind") == "server").is_empty()
         else "- **Server crashes**: no strategy of this run needs a server."),
        "- Entries are compared exactly (digest of each JSONL line): `invented` counts entries read back out of the order "
        "written. Each strategy is judged against its own promise: a *violation* is a loss its durability class does not "
        "allow, or any invented entry. Unloadable sessions count every acknowledged entry as lost (a `strict` recovery refuses "
        "damage by contract and changes nothing: no violation).",
        "",
        "### By crash kind and durability class (default recovery mode)",
        "",
        markdown_table(by_class, _FMT),
        "",
        f"![Recovery outcomes per crash kind and recovery mode]({figure.relative_to(run_dir)})",
        "",
        "### Per strategy (default recovery mode; damage `kill` = process crash)",
        "",
        markdown_table(per_strategy, _FMT),
        "",
        f"### {modal_families} power-loss images by recovery mode",
        "",
        "Every image recovered once in each mode (lost: acknowledged entries not read back, summed over the images; "
        "an unloadable image counts all of them).",
        "",
        markdown_table(by_mode, _FMT),
        "",
        "### What was modelled, not traced",
        "",
        "Where a store's file I/O is C code Python cannot see, its power losses are modelled from its documented rules, "
        "not traced (or, where no model fits, not simulated):",
        "",
    ]
    traced = {name for name, info in notes["strategies"].items() if info.get("power_model") == "trace"}
    for name, info in notes["strategies"].items():
        if name not in traced:
            caveat = f" *{info['power_caveat']}*" if info.get("power_caveat") else ""
            lines.append(f"- `{name}`: {info['power_how']}.{caveat}")
    skipped = [f"- `{item['strategy']}` ({item.get('damage', 'all damage kinds')}): {item['reason']}"
               for item in notes["not_simulated"] if item["strategy"] in traced or "damage" in item]
    if skipped:
        lines += ["", "Also not simulated:", "", *skipped]
    lines += ["", "### Violations", ""]
    broken = df.filter(pl.col("violation"))
    if broken.is_empty():
        lines.append("None: every outcome kept the strategy's own promise.")
    else:
        lines.append(markdown_table(broken.select("strategy", "crash_kind", "phase", "damage", "mode", "case", "acknowledged",
                                                  "recovered", "lost", "allowed_loss", "invented", "note").head(30)))
    findings = _without_promise(base)
    if findings:
        lines += ["", "Losses outside any promise (findings, not violations):", "", *findings]
    return "\n".join(lines) + "\n"
