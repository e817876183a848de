"""The memory section of the report, rebuilt from the stored tables alone: what the agent still knows.

:func:`memory_section` reads ``memory_items``, ``memory_checks``, ``memory_answers``,
``memory_runs``, ``memory_summary`` and ``memory_quality_notes.json`` from a run folder and
returns markdown: the headline table (every strategy and window: mean and range over seeds),
the targets, survival by age, retention by kind / format / carrier / language, answerability by
wording, and the frontier figure (context tokens against answerability, drawn by
:func:`frontier_figure`). :func:`headline_row` gives the one line the report's headline table
takes.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.core.runfolder import read_measurement
from experiments.measurements.memory_quality.recall_section import recall_lines
from experiments.measurements.memory_quality.tables import FINDABLE, METRICS

__all__ = ["frontier_figure", "headline_row", "memory_section", "targets"]

_PERCENT = {m for m in METRICS if m not in ("mean_context_tokens", "summarize_seconds")}
#: How the section names a workload written apart from the strategies' tuning (``workload.generator``).
_GENERATOR_NOTE = {"independent": "the independent generator, written apart from the strategies' tuning",
                   "fieldnotes": "the field-notes generator, a third style (held out in phase 3, tuned on in phase 4)",
                   "tracker": "the tracker generator (issue comments, chat-ops), a fourth style held out in phase 4, "
                              "no longer clean after phase 5 (the shapes its plants lack were named before the fact finder was widened)",
                   "pairing": "the pairing generator (a coding pair's diffs, build files, CI logs, bilingual chat), "
                              "a fifth style written blind (held out in phase 5, tuned on in phase 6)",
                   "oncall": "the on-call generator (incident channel, kubectl, PromQL, alert JSON, runbooks, postmortem "
                             "emails and sheets; English, German, Spanish, Chinese), a sixth style written blind in phase 6 and held out from all tuning",
                   "dataplatform": "the data-platform generator (dbt and Airflow logs, SQL, Terraform plans, Jira CSV, Slack "
                                   "pastes, runbooks, warehouse YAML, Kafka groups, email; English, Japanese, French), a seventh "
                                   "style written blind in phase 9 (held out in phase 9, a development set from phase 10)",
                   "mobilerelease": "the mobile-release generator (fastlane and Gradle output, diffs, Info.plist, release "
                                    "workflow and checklist, Remote Config JSON, Sentry crashes, logcat, App Store review "
                                    "notes, email; English, Korean, Brazilian Portuguese), an eighth style written blind in "
                                    "phase 10 (held out in phase 10, a development set from phase 11)",
                   "gamestudio": "the game-studio generator (Unreal and Unity logs, Perforce, crash triage, shader "
                                 "compiles, level notes, Jenkins, a minified JSON manifest, INI CVars, a TSV bug sheet, "
                                 "cert email, Discord; English, French, Simplified Chinese), a ninth style written blind "
                                 "in phase 11 (held out for phase 11's first figures, a development set after)",
                   "firmware": "the firmware generator (UART boot logs, west and bitbake output, devicetree, Kconfig, "
                               "candump, OpenOCD, a BOM CSV, a bring-up checklist, RMA email, a minified JSON OTA "
                               "manifest, datasheets, Mattermost; English, German, Japanese), a tenth style written "
                               "blind in phase 11 and held out from all tuning",
                   "genomics": "the genomics generator (Nextflow and Snakemake logs, a samplesheet, sacct, a conda YAML, "
                               "a minified MultiQC JSON, sessionInfo, Jupyter output, an ELN page, a LIMS TSV, RunInfo.xml, "
                               "a PI's email, Zulip; English, Russian, Italian), an eleventh style written blind in "
                               "phase 12 and held out from all tuning"}
_AGES = [(1, 1, "1"), (2, 2, "2"), (3, 5, "3–5"), (6, 10, "6–10"), (11, 10_000, "11+")]


def _cell(metric: str, mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None:
        return "—"
    if metric in _PERCENT:
        text = f"{mean * 100:.0f}%"
        return text if low is None or high - low < 0.005 else f"{text} ({low * 100:.0f}–{high * 100:.0f})"  # type: ignore[operator]
    if metric == "mean_context_tokens":
        return f"{mean:,.0f}"
    return f"{mean:.2f}"


def _order(strategies: list[str]) -> list[str]:
    known = ["none", "extractive", "salient", "obs_mask", "hier_summary", "kv_dict", "llm", "full_history"]
    return [s for s in known if s in strategies] + sorted(s for s in strategies if s not in known)


def _by_strategy(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows in the report's strategy order, the larger window first."""
    rank = {s: i for i, s in enumerate(_order(frame["strategy"].unique().to_list()))}
    return frame.sort(pl.col("strategy").replace_strict(rank, return_dtype=pl.Int64), pl.col("window"),
                      descending=[False, True])


def headline_markdown(summary: pl.DataFrame) -> str:
    """Strategy x window rows, one column per metric: mean (min–max over seeds)."""
    rows = []
    for strategy in _order(summary["strategy"].unique().to_list()):
        for window in sorted(summary["window"].unique().to_list(), reverse=True):
            part = summary.filter((pl.col("strategy") == strategy) & (pl.col("window") == window))
            if not part.height:
                continue
            row: dict[str, str] = {"strategy": strategy, "window": f"{window:,}"}
            for metric in METRICS:
                hit = part.filter(pl.col("metric") == metric)
                row[metric] = _cell(metric, *(hit.row(0)[3:6] if hit.height else (None, None, None)))
            rows.append(row)
    return markdown_table(pl.DataFrame(rows))


def headline_row(summary: pl.DataFrame, window: int) -> dict[str, str]:
    """The memory row of the report's headline table: each strategy's answerable share within 1,024 tokens."""
    part = summary.filter((pl.col("window") == window) & (pl.col("metric") == "answerable_1024"))
    return {row["strategy"]: f"{row['mean'] * 100:.0f}%" for row in part.iter_rows(named=True)}


def _mean(summary: pl.DataFrame, strategy: str, window: int, metric: str) -> float | None:
    hit = summary.filter((pl.col("strategy") == strategy) & (pl.col("window") == window) & (pl.col("metric") == metric))
    return float(hit["mean"][0]) if hit.height else None


def targets(summary: pl.DataFrame) -> pl.DataFrame:
    """The issue's targets, each with the measured figure (mean over seeds) and whether it is met."""
    rows: list[dict[str, object]] = []

    def add(goal: str, strategy: str, window: int, metric: str, at_least: float) -> None:
        value = _mean(summary, strategy, window, metric)
        rows.append({"target": goal, "strategy": strategy, "window": window, "measured": value,
                     "met": None if value is None else value >= at_least})

    for strategy in ("salient", "kv_dict", "hier_summary"):
        for window in (32_000, 8_000):
            add("present right after the first compaction following the plant >= 95%", strategy, window, "present_first", 0.95)
    add("improved summarizer at the end of the run >= 50% (32k)", "salient", 32_000, "present_end", 0.5)
    add("kv_dict at the end >= 90% (32k)", "kv_dict", 32_000, "present_end", 0.9)
    add("kv_dict at the end >= 70% (8k)", "kv_dict", 8_000, "present_end", 0.7)
    for window in (32_000, 8_000):
        add("kv_dict knowledge updates right >= 95%", "kv_dict", window, "updates_right", 0.95)
    # The bracket holds on what is in context (present at the end, answerable and updates right from the whole
    # rendering). Within a small packet it is a retrieval result: a fixed keyword reader finds a line of a file or
    # a diff (which names neither its file nor its subject) among 85k tokens of the full history less often than
    # among a few thousand of a smaller memory (the lines' ranks are in the closing note of issue 14, phase 6).
    for metric in ("present_end", "answerable_all", "updates_right_all"):
        for window in sorted(summary["window"].unique().to_list(), reverse=True):
            part = summary.filter((pl.col("window") == window) & (pl.col("metric") == metric))
            values = dict(zip(part["strategy"], part["mean"]))
            if "none" in values and "full_history" in values:
                others = [v for s, v in values.items() if s not in ("none", "full_history")]
                ok = all(values["none"] <= v <= values["full_history"] for v in others)
                rows.append({"target": f"none and full_history bracket the rest ({metric})", "strategy": "all",
                             "window": window, "measured": None, "met": ok})
    return pl.DataFrame(rows, schema={"target": pl.String, "strategy": pl.String, "window": pl.Int64,
                                      "measured": pl.Float64, "met": pl.Boolean})


def survival_markdown(checks: pl.DataFrame) -> str:
    """Share present by age (checkpoints since the plant), one row per strategy and window."""
    bucket = pl.lit(None, dtype=pl.String)
    for low, high, label in reversed(_AGES):
        bucket = pl.when(pl.col("age_checkpoints").is_between(low, high)).then(pl.lit(label)).otherwise(bucket)
    data = checks.filter(pl.col("age_checkpoints") >= 1).with_columns(bucket.alias("age"))
    table = data.group_by("strategy", "window", "age").agg((pl.col("present").mean() * 100).round(0).alias("share"))
    wide = table.pivot(on="age", index=["strategy", "window"], values="share")
    columns = [label for _, _, label in _AGES if label in wide.columns]
    wide = _by_strategy(wide)
    return markdown_table(wide.select("strategy", "window", *columns),
                          {c: (lambda v: f"{v:.0f}%") for c in columns} | {"window": lambda v: f"{v:,}"})


def breakdown_markdown(items: pl.DataFrame, checks: pl.DataFrame, by: str, strategies: list[str]) -> str:
    """Share present at the end, by an item field (kind, format, carrier, lang), one column per strategy and window."""
    end = checks.filter(pl.col("at") == "end").join(items.select("seed", "item", by), on=["seed", "item"])
    end = end.filter(pl.col("strategy").is_in(strategies))
    table = end.group_by(by, "strategy", "window").agg((pl.col("present").mean() * 100).round(0).alias("share"),
                                                      pl.len().alias("n"))
    table = table.with_columns(pl.format("{} {}k", "strategy", (pl.col("window") // 1000)).alias("run"))
    order = [f"{s} {w // 1000}k" for s in strategies for w in sorted(table["window"].unique().to_list(), reverse=True)]
    wide = table.pivot(on="run", index=by, values="share").sort(by)
    return markdown_table(wide.select(by, *[c for c in order if c in wide.columns]),
                          {c: (lambda v: f"{v:.0f}%") for c in order})


def wording_markdown(items: pl.DataFrame, answers: pl.DataFrame) -> str:
    """Answerable within 1,024 tokens, by wording of the question, one row per strategy and window."""
    data = answers.filter(pl.col("budget") == 1024).join(items.select("seed", "item", "type"), on=["seed", "item"])
    data = data.filter(pl.col("type").is_in(FINDABLE))
    table = data.group_by("strategy", "window", "wording").agg((pl.col("answerable").mean() * 100).round(0).alias("share"))
    wide = table.pivot(on="wording", index=["strategy", "window"], values="share")
    wide = _by_strategy(wide)
    cols = [c for c in ("template", "paraphrase", "other_language") if c in wide.columns]
    return markdown_table(wide.select("strategy", "window", *cols),
                          {c: (lambda v: f"{v:.0f}%") for c in cols} | {"window": lambda v: f"{v:,}"})


#: The budget table's columns: (column of ``memory_runs``, heading, share or tokens).
_BUDGET_COLUMNS = (("post_fixed_tokens", "memory rendered", False), ("post_summary_tokens", "summary", False),
                   ("post_kept_tokens", "kept entries", False), ("post_kept_turns", "kept turns", None),
                   ("shortened_share", "kept entries shortened", True), ("floored_share", "summary raised to the floor", True),
                   ("memory_empty_share", "no memory at all", True))


def budget_markdown(runs: pl.DataFrame, target: float) -> str:
    """Where the context goes right after a compaction, per strategy and window (means over seeds of each
    run's mean over its compactions); "" for runs measured before these columns were recorded."""
    names = [name for name, _, _ in _BUDGET_COLUMNS]
    if any(name not in runs.columns for name in names):
        return ""
    frame = _by_strategy(runs.filter(pl.col("compactions") > 0).group_by("strategy", "window").agg(
        pl.col("compactions").mean(), *(pl.col(name).mean() for name in names)))
    rows = []
    for row in frame.iter_rows(named=True):
        target_tokens = row["window"] * target
        cells = {"strategy": row["strategy"], "window": f"{row['window']:,}", "compactions": f"{row['compactions']:.0f}"}
        for name, heading, share in _BUDGET_COLUMNS:
            value = row[name]
            cells[heading] = (f"{value * 100:.0f}%" if share else f"{value:.1f}" if share is None
                              else f"{value:,.0f} ({value / target_tokens:.0%})")
        rows.append(cells)
    return markdown_table(pl.DataFrame(rows), {})


def frontier_figure(summary: pl.DataFrame, path: Path) -> Path:
    """Mean context tokens (log) against answerable within 1,024 tokens: one point per strategy and window."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    windows = sorted(summary["window"].unique().to_list(), reverse=True)
    markers = {w: m for w, m in zip(windows, "os^Dv")}
    colors = plt.get_cmap("tab10")
    for number, strategy in enumerate(_order(summary["strategy"].unique().to_list())):
        for window in windows:
            x = _mean(summary, strategy, window, "mean_context_tokens")
            y = _mean(summary, strategy, window, "answerable_1024")
            if x is None or y is None:
                continue
            ax.scatter([x], [y * 100], marker=markers[window], s=40, color=colors(number % 10))
            ax.annotate(f"{strategy} {window // 1000}k", (x, y * 100), textcoords="offset points", xytext=(5, 3), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("mean context tokens per request (log scale)")
    ax.set_ylabel("answerable within a 1,024-token packet (%)")
    ax.set_title("What the agent still knows against what its context costs (one colour a strategy, "
                 + ", ".join(f"{m} {w // 1000}k" for w, m in markers.items()) + ")", fontsize=9)
    ax.grid(True, alpha=0.3)
    return save_figure(fig, path)


def _budget_part(runs: pl.DataFrame, target: float) -> list[str]:
    table = budget_markdown(runs, target)
    if not table:
        return []
    return ["### Where the context goes right after a compaction", "",
            "Tokens by the deciding tier, and their share of the target: what the memory strategy renders beside the "
            "history, the summary, the entries kept verbatim; then how often kept entries were shown shortened, the "
            "summary's budget was raised so that memory keeps its floor of the target (the last turns did not fit "
            "whole), and nothing of memory was left.", "", table, ""]


def memory_section(run_dir: str | Path) -> str:
    """The report's memory section (markdown), with its figure written to ``run_dir/figures/memory_frontier.png``."""
    read = ("memory_items", "memory_checks", "memory_answers", "memory_runs", "memory_summary")  # what the section shows
    tables, notes = read_measurement(run_dir, read, "memory_quality")
    items, checks, answers, runs, summary = (tables[name] for name in read)
    settings = notes["settings"]
    shape = settings["workload"]
    figure = frontier_figure(summary, Path(run_dir) / "figures" / "memory_frontier.png")
    strategies = _order(summary["strategy"].unique().to_list())
    focus = [s for s in ("extractive", "salient", "kv_dict", "hier_summary") if s in strategies]
    lines = [
        "## Memory: what the agent still knows",
        "",
        f"{shape['sessions']} sessions of {shape['turns']} turns, linked by `continue`, per seed "
        f"({', '.join(map(str, settings['seeds']))}; "
        + (_GENERATOR_NOTE[shape["generator"]] if shape.get("generator") in _GENERATOR_NOTE
           else f"{shape['split']} phrasings") + "), with "
        f"{items.height // max(len(settings['seeds']), 1)} planted items each (facts of {items['kind'].n_unique()} kinds "
        "in prose, code comments, log lines and minified JSON, in the generator's languages (English and Chinese unless named); knowledge updates; sets across "
        "sessions; time order; absent facts beside near misses), asked in three wordings. Every strategy runs the same "
        f"sessions at windows {', '.join(f'{w:,}' for w in settings['windows'])} (trigger {settings['trigger']:.0%}, "
        f"target {settings['target']:.0%}). Scores are exact: an answer counts when its string is in what the strategy "
        "puts in context (`Session.context()`), and a packet is the best-ranked lines of that rendering for the "
        "question (BM25, one reader for all). Figures are means over seeds, the range in brackets.",
        "",
        headline_markdown(summary),
        "",
        *(f"- **{name}**: {text}" for name, text in METRICS.items()),
        "",
        "### Targets",
        "",
        markdown_table(targets(summary), {"measured": lambda v: f"{v * 100:.0f}%", "window": lambda v: f"{v:,}"}),
        "",
        f"![context tokens against answerability](figures/{figure.name})",
        "",
        *_budget_part(runs, settings["target"]),
        "### Survival by age (share present, by checkpoints since the plant)",
        "",
        survival_markdown(checks),
        "",
        "### Present at the end, by kind, carrier format, carrier and language",
        "",
        *(part for by in ("kind", "format", "carrier", "lang") for part in (breakdown_markdown(items, checks, by, focus), "")),
        "### Answerable by wording (within 1,024 tokens)",
        "",
        wording_markdown(items, answers),
        "",
        f"Runs: {runs.height}; dropped as ambiguous: {int(runs['dropped'].max() or 0)} items at most per seed; "
        f"measured in {notes['seconds']:.0f} s at commit {notes['commit'][:12]} on {notes['machine']}.",
    ]
    lines += [f"Note: {note}" for note in notes["notes"]]
    lines += recall_lines(run_dir)
    return "\n".join(lines) + "\n"
