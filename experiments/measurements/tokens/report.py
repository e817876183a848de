"""The token-estimate section of the report: error and speed per tier and content kind, the goals,
and two figures, rebuilt from the stored raw tables alone (``tokens``, ``token_speed``,
``token_growth`` and ``tokens_notes.json``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table

__all__ = ["error_figure", "error_markdown", "speed_figure", "speed_markdown", "tokens_section"]

#: The MAPE goal of the medium tier, in percent (drawn on the error figure).
MAPE_GOAL = 10.0


def _order(acc: pl.DataFrame) -> list[str]:
    """Estimators cheapest tier first, in the order they were measured within a tier."""
    tiers = {"rough": 0, "medium": 1, "precise": 2}
    names = acc.select("estimator", "tier").unique(maintain_order=True).rows()
    return [n for n, _ in sorted(names, key=lambda nt: tiers.get(nt[1], 3))]


def _kinds(acc: pl.DataFrame) -> list[str]:
    return acc["kind"].unique(maintain_order=True).to_list()


def error_markdown(acc: pl.DataFrame) -> str:
    """One row per estimator, one column per kind (and all texts): ``MAPE (mean signed)`` in percent."""
    whole = acc.with_columns(pl.lit("all texts").alias("kind"))
    per = (pl.concat([acc, whole]).group_by("estimator", "kind")
           .agg(pl.col("abs_pct").mean().alias("mape"), pl.col("signed_pct").mean().alias("signed")))
    cells = per.with_columns(pl.format("{} ({})", pl.col("mape").round(1), pl.col("signed").round(1)).alias("cell"))
    wide = cells.pivot(on="kind", index="estimator", values="cell")
    order = _order(acc)
    wide = wide.with_columns(pl.col("estimator").replace_strict(order, list(range(len(order)))).alias("_o")).sort("_o")
    tiers = dict(acc.select("estimator", "tier").unique().rows())
    wide = wide.with_columns(pl.col("estimator").replace_strict(tiers).alias("tier"))
    return markdown_table(wide.select("tier", "estimator", *_kinds(acc), "all texts"))


def speed_markdown(speed_summary: pl.DataFrame, baseline: str, kinds: list[str]) -> str:
    """One row per estimator: speed-up over ``baseline`` per kind, and µs per 1,000 characters over all kinds."""
    ups = speed_summary.pivot(on="kind", index="estimator", values="speedup_vs_baseline")
    cost = speed_summary.filter(pl.col("kind") == "all").select("estimator", pl.col("us_per_1k_chars").alias("µs / 1k chars"))
    table = ups.join(cost, on="estimator", how="left").sort("µs / 1k chars")
    kinds = [k for k in kinds if k in ups.columns]
    table = table.select("estimator", "µs / 1k chars", pl.col("all").alias("all kinds"), *kinds)
    fmt = {c: (lambda v: f"{v:.1f}x") for c in ("all kinds", *kinds)} | {"µs / 1k chars": lambda v: f"{v:.2f}"}
    return markdown_table(table, fmt, {"estimator": f"estimator (speed-up over {baseline})"})


def _grouped_bars(ax, summary: pl.DataFrame, value: str, order: list[str], kinds: list[str],  # noqa: ANN001
                  colors: dict[str, object]) -> None:
    width = 0.8 / max(1, len(order))
    for i, name in enumerate(order):
        part = dict(summary.filter(pl.col("estimator") == name).select("kind", value).rows())
        xs = [k + (i - (len(order) - 1) / 2) * width for k in range(len(kinds))]
        ax.bar(xs, [part.get(kind, float("nan")) for kind in kinds], width, label=name, color=colors[name])
    ax.set_xticks(range(len(kinds)), kinds)
    ax.grid(True, axis="y", alpha=0.3)


def _palette(plt, acc: pl.DataFrame) -> dict[str, object]:  # noqa: ANN001
    """One colour per estimator, the same in both figures."""
    colors = plt.get_cmap("tab10").colors
    return {name: colors[i % len(colors)] for i, name in enumerate(_order(acc))}


def error_figure(acc: pl.DataFrame, path: Path, reference: str) -> Path:
    """Grouped bars per content kind, one bar per estimator: MAPE (top) and mean signed error (bottom), %.

    The reference tokenizer itself is left out: its error is 0 by definition.
    """
    plt = pyplot()
    colors = _palette(plt, acc)
    acc = acc.filter(~((pl.col("tier") == "precise") & (pl.col("tokenizer") == pl.col("reference"))))
    summary = acc.group_by("estimator", "kind").agg(pl.col("abs_pct").mean().alias("mape"),
                                                     pl.col("signed_pct").mean().alias("signed"),
                                                     pl.col("abs_pct").quantile(0.9, "linear").alias("p90"))
    order, kinds = _order(acc), _kinds(acc)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    _grouped_bars(top, summary, "mape", order, kinds, colors)
    top.axhline(MAPE_GOAL, color="black", linestyle="--", linewidth=1, label=f"medium goal: MAPE <= {MAPE_GOAL:g}%")
    top.set_ylabel("mean absolute error per text (%)")
    top.set_title(f"Token-estimate error per tier and content kind (against {reference})")
    top.legend(fontsize=8, ncol=2)
    _grouped_bars(bottom, summary, "signed", order, kinds, colors)
    bottom.axhline(0, color="black", linewidth=0.8)
    bottom.set_ylabel("mean signed error per text (%)\n(< 0: undercounts, the context may overflow)")
    bottom.set_xlabel("content kind")
    bottom.set_title("Direction of the error: over (+) or under (−) the exact count")
    bottom.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)


def speed_figure(speed_summary: pl.DataFrame, acc: pl.DataFrame, path: Path) -> Path:
    """Grouped bars per content kind: median µs per 1,000 characters of each estimator (log scale)."""
    plt = pyplot()
    per_kind = speed_summary.filter(pl.col("kind") != "all")
    order = [n for n in _order(acc) if n in set(per_kind["estimator"].to_list())]
    kinds = [k for k in _kinds(acc) if k in set(per_kind["kind"].to_list())]
    fig, ax = plt.subplots(figsize=(10, 5))
    _grouped_bars(ax, per_kind, "us_per_1k_chars", order, kinds, _palette(plt, acc))
    ax.set_yscale("log")
    ax.set_ylabel("time to count, median per 1,000 characters (µs, log scale)")
    ax.set_xlabel("content kind")
    ax.set_title("Token-estimate speed per estimator and content kind")
    ax.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)


def tokens_section(run_dir: Path) -> str | None:
    """The report's token-estimate section (None when the run did not measure token estimates)."""
    from experiments.measurements.tokens.job import read_tables, summaries

    run_dir = Path(run_dir)
    if not (run_dir / "tokens.parquet").exists():
        return None
    tables, notes = read_tables(run_dir)
    derived = summaries(tables, baseline=str(notes["baseline"]), kinds=list(notes["kinds"]))  # type: ignore[arg-type]
    acc = tables["tokens"]
    error_png = error_figure(acc, run_dir / "figures" / "token_error.png", str(notes["reference"]))
    speed_png = speed_figure(derived["token_speed_summary"], acc, run_dir / "figures" / "token_speed.png")
    texts = acc.filter(pl.col("estimator") == acc["estimator"][0]).height
    lines = [
        f"## Token estimates against {notes['reference']}",
        "",
        f"- Corpus: `experiments/measurements/tokens/corpus.py`, seed {notes['seed']} (the shipped medium constants were fitted on "
        f"seed 0), {notes['per_kind']} texts per kind, {texts} texts in all, median {notes['median_bytes']} bytes"
        + (", plus real text of this Python installation (real_*, not in the goals)" if notes["real_text"] else "") + ".",
        "- Error per text = (estimate − exact) / exact; a cell reads `MAPE (mean signed error)`, both in %. "
        "A negative signed error undercounts: the context can overflow before compaction fires.",
        f"- Speed: {notes['repeats']} passes of every estimator over every kind's texts, in a fresh random order per "
        f"pass; speed-up = median over passes of the paired ratio {notes['baseline']} time / estimator time.",
        *[f"- {n}" for n in notes["left_out"]],  # type: ignore[union-attr]
        "",
        "### Goals",
        "",
        markdown_table(derived["token_goals"], {"value": lambda v: f"{v:.2f}",
                                                "met": lambda m: "**met**" if m else "**NOT met**"}),
        "",
        "### Error per tier and content kind (%: MAPE (mean signed))",
        "",
        error_markdown(acc),
        "",
        f"![Token-estimate error per tier and content kind]({error_png.relative_to(run_dir)})",
        "",
        "### Speed",
        "",
        speed_markdown(derived["token_speed_summary"], str(notes["baseline"]), list(notes["kinds"])),  # type: ignore[arg-type]
        "",
        f"![Token-estimate speed per estimator and content kind]({speed_png.relative_to(run_dir)})",
        "",
    ]
    growth = derived["token_growth_summary"]
    if "ratio_early" in growth.columns:
        lines += [
            f"### Running context tally ({notes['growth_entries']}-entry session)",
            "",
            "`ContextTally.add` timed beside counting the same entry alone; first / last = the first and last "
            f"{growth['window'][0]} appends. A flat ratio (last / first near 1) means the running total costs the "
            "same however long the session is.",
            "",
            markdown_table(growth.select("estimator", "appends", "ns_early", "ns_late", "ratio_early", "ratio_late", "growth"),
                           {c: (lambda v: f"{v:.2f}") for c in ("ratio_early", "ratio_late", "growth")},
                           {"ns_early": "median ns, first", "ns_late": "median ns, last",
                            "ratio_early": "add / bare count, first", "ratio_late": "add / bare count, last",
                            "growth": "last / first"}),
            "",
        ]
    return "\n".join(lines)
