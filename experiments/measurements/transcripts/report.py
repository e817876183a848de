"""The report's "Real transcripts" section: token estimates against the provider's usage, and
compaction against the original agent's, rebuilt from the stored tables alone (``usage``,
``usage_summary``, ``transcript_compaction``, ``transcript_compaction_events`` and
``transcripts_notes.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table
from experiments.measurements.transcripts.report_triggers import trigger_lines

__all__ = ["compaction_figure", "transcripts_section", "usage_figure"]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"


def usage_figure(usage: pl.DataFrame, path: Path) -> Path:
    """Reported input tokens against each tier's estimate, one panel per format, with y = x."""
    plt = pyplot()
    formats = usage["format"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(1, len(formats), figsize=(6.5 * len(formats), 5.5), squeeze=False)
    for ax, fmt in zip(axes[0], formats, strict=True):
        part = usage.filter(pl.col("format") == fmt)
        for tier in part["tier"].unique(maintain_order=True).to_list():
            rows = part.filter(pl.col("tier") == tier)
            ax.scatter(rows["estimate"] / 1000, rows["reported"] / 1000, s=9, alpha=0.6, label=tier)
        top = max(part["reported"].max(), part["estimate"].max()) / 1000 * 1.05
        ax.plot([0, top], [0, top], color="black", linestyle="--", linewidth=1, label="estimate = reported")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("estimate of the transcript's context before the request (k tokens)")
        ax.set_ylabel("input tokens the provider reported (k tokens)")
        ax.set_title(f"{fmt}: {part.select('session', 'request').n_unique()} requests, "
                     f"{part['session'].n_unique()} session(s)", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Provider-reported input tokens against each tier's estimate (the gap at 0 is the system prompt and tools)")
    return save_figure(fig, path)


def compaction_figure(usage: pl.DataFrame, events: pl.DataFrame, replays: pl.DataFrame, path: Path) -> Path:
    """Per session: reported tokens per request, the best tier's estimate, both triggers, and compactions."""
    plt = pyplot()
    sessions = replays.select("format", "session").unique(maintain_order=True).rows()
    fig, axes = plt.subplots(len(sessions), 1, figsize=(11, 3.2 * len(sessions) + 1), squeeze=False)
    tier = "precise:cl100k_base" if "precise:cl100k_base" in usage["tier"].to_list() else usage["tier"][0]
    colors = plt.get_cmap("tab10").colors
    for ax, (fmt, session) in zip(axes[:, 0], sessions, strict=True):
        part = usage.filter((pl.col("session") == session) & (pl.col("tier") == tier)).sort("request")
        ax.plot(part["request"], part["reported"] / 1000, color="black", linewidth=1.2, marker="o", markersize=2,
                label="reported by the provider")
        ax.plot(part["request"], part["estimate"] / 1000, color="tab:blue", linewidth=1, marker="o", markersize=2,
                label=f"estimate ({tier})")
        rows = replays.filter(pl.col("session") == session)
        for i, row in enumerate(rows.iter_rows(named=True)):
            color = colors[(i + 2) % len(colors)]
            ax.axhline(row["agent_trigger"] / 1000, color=color, linestyle=":", linewidth=1,
                       label=f"agent's trigger, window {row['window']:,}")
            ax.axhline(row["aptmem_trigger"] / 1000, color=color, linestyle="--", linewidth=1,
                       label=f"aptmem's trigger, window {row['window']:,} ({row['tier']})")
            hits = events.filter((pl.col("session") == session) & (pl.col("window") == row["window"])
                                 & (pl.col("source") == "aptmem") & (pl.col("tier") == row["tier"])
                                 & pl.col("request").is_not_null())
            if hits.height:
                ax.scatter(hits["request"], hits["tokens"] / 1000, marker="v", s=22, color=color, zorder=3,
                           label=f"aptmem compacts (its estimate), window {row['window']:,}")
        agent = events.filter((pl.col("session") == session) & (pl.col("source") == "agent"))
        if agent.height:
            ax.scatter(agent["request"], agent["tokens"] / 1000, marker="*", s=60, color="tab:red", zorder=4,
                       label="the agent compacted (preTokens / tokensBefore)")
        top = max(part["reported"].max() or 0, *(rows["aptmem_trigger"].to_list() or [0])) / 1000
        ax.set_ylim(0, top * 1.1 + 1)
        ax.set_ylabel("context (k tokens)")
        ax.set_title(f"{session} ({fmt}): {part.height} requests with usage", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
    axes[-1, 0].set_xlabel("request (replies with usage, in order)")
    fig.suptitle("Where the context stood, where the triggers are, where aptmem and the agent compact")
    return save_figure(fig, path)


def _sources_markdown(sources: list[dict[str, Any]]) -> str:
    rows = [{"file": s["file"], "format": s["format"], "lines": s["lines"], "entries": s["entries"],
             "replies": s["replies"], "requests with usage": s["requests"], "without usage": s["requests_without_usage"],
             "compactions in the file": s["compactions"],
             "skipped (by reason)": ", ".join(f"{k} {v}" for k, v in sorted(s["skipped"].items())) or "—",
             "damaged": s["damaged"]} for s in sources]
    return markdown_table(pl.DataFrame(rows))


def _summary_markdown(summary: pl.DataFrame) -> str:
    table = summary.select(
        "format", "tier", "requests", pl.col("mape_pct").alias("MAPE"), pl.col("median_ratio").alias("median ratio"),
        pl.col("mape_overhead_pct").alias("MAPE + fixed part"),
        pl.col("median_ratio_overhead").alias("median ratio + fixed part"),
        pl.col("median_overhead").alias("fixed part (tokens)"), pl.col("slope").alias("calibration slope"),
        pl.col("intercept").alias("intercept (tokens)"), pl.col("train_mape_pct").alias("train MAPE"),
        pl.col("test_mape_pct").alias("test MAPE"), pl.col("split"))
    fmt = {c: _pct for c in ("MAPE", "MAPE + fixed part", "train MAPE", "test MAPE")}
    fmt.update({"median ratio": lambda v: f"{v:.3f}", "median ratio + fixed part": lambda v: f"{v:.3f}",
                "calibration slope": lambda v: f"{v:.3f}", "fixed part (tokens)": lambda v: f"{v:,.0f}",
                "intercept (tokens)": lambda v: f"{v:,.0f}"})
    return markdown_table(table, fmt)


def _replays_markdown(replays: pl.DataFrame) -> str:
    table = replays.sort("format", "session", "window", descending=[False, False, True]).select(
        "session", "window", "tier", pl.col("max_reported").alias("max reported"),
        pl.col("agent_compactions").alias("agent compactions (file)"),
        pl.col("agent_trigger").alias("agent trigger"), pl.col("agent_rule_first_request").alias("agent rule fires at request"),
        pl.col("aptmem_trigger").alias("aptmem trigger"),
        pl.col("reported_at_aptmem_trigger_request").alias("reported count reaches aptmem's trigger at request"),
        pl.col("aptmem_compactions").alias("aptmem compactions"),
        pl.col("aptmem_first_request").alias("aptmem's 1st compaction before request"),
        pl.col("aptmem_first_estimate").alias("aptmem's estimate then"),
        pl.col("reported_at_aptmem_first").alias("reported at that request"),
        pl.col("aptmem_max_occupancy").alias("aptmem max occupancy"),
        pl.col("compactions_over_target").alias("compactions over the target"),
        pl.col("appends_over_window").alias("appends over the window"))
    fmt = {c: (lambda v: f"{v:,}") for c in ("window", "max reported", "agent trigger", "aptmem trigger",
                                             "aptmem's estimate then", "reported at that request")}
    fmt["aptmem max occupancy"] = lambda v: f"{v * 100:.0f}%"
    return markdown_table(table, fmt)


def transcripts_section(run_dir: Path) -> str | None:
    """The report's real-transcripts section (None when the run did not make the measurement)."""
    from experiments.measurements.transcripts.job import read_tables

    run_dir = Path(run_dir)
    if not (run_dir / "transcripts_notes.json").exists():
        return None
    tables, notes = read_tables(run_dir)
    head = ["## Real transcripts: token estimates against the provider's usage, compaction against the agent's", ""]
    if notes.get("skipped"):
        return "\n".join([*head, f"Not measured: {notes['skipped']}. Point `transcripts.path` (or the "
                          "`APTMEM_TRANSCRIPTS` environment variable) at a folder of Claude Code or pi transcripts.", ""])
    usage, summary = tables["usage"], tables["usage_summary"]
    replays, events = tables["transcript_compaction"], tables["transcript_compaction_events"]
    sources = notes["sources"]
    per_format = {f: [s for s in sources if s["format"] == f] for f in sorted({s["format"] for s in sources})}
    counts = "; ".join(f"{f}: {len(s)} session(s), {sum(x['requests'] for x in s)} requests with usage"
                       for f, s in per_format.items())
    lines = [*head,
             f"Sources ({notes['path']}): real sessions written by Claude Code and pi in real use. {counts}.",
             "",
             _sources_markdown(sources),
             "",
             "- Ground truth: for each reply that reported usage, the input side of its request (Claude Code: "
             "input + cache creation + cache read tokens; pi: input + cacheRead + cacheWrite). Each tier estimates the "
             "context just before the reply (the imported entries, rendered and counted as a session counts them).",
             "- The provider also counted what the transcript does not hold: the system prompt, the tool definitions, "
             "injected project files and reminders. *MAPE* and *median ratio* (estimate / reported) score the transcript "
             "alone; *+ fixed part* adds each session's gap at its first request to its later requests; the "
             "*calibration* fits reported ≈ intercept + slope × estimate on some sessions and scores it on others "
             "(*split*).",
             f"- Caveats, plainly: this is {len(sources)} sessions"
             + ("; a format with one session has its calibration tested on the second half of that same session, not on "
                "another session" if any(len(s) == 1 for s in per_format.values()) else "")
             + ". The precise tiers' tokenizers (cl100k_base is OpenAI's; Tekken, where scored, Mistral's) are not the "
             "provider's (Anthropic publishes none), so a slope mixes the vocabulary difference with what the "
             "transcript lacks. The plain tiers count no thinking; `model` and `anchored` count it.",
             *[f"- Note: {n}" for n in notes.get("notes", [])],
             "",
             "### Per-tier error against provider-reported input tokens",
             "",
             _summary_markdown(summary),
             ""]
    if usage.height:
        png = usage_figure(usage, run_dir / "figures" / "transcript_usage.png")
        lines += [f"![Reported input tokens against each tier's estimate]({png.relative_to(run_dir)})", ""]
    lines += trigger_lines(run_dir, tables, notes)
    # Each session's own compactions once (the replays table repeats them per window and tier).
    agent_total = int(replays.unique("session")["agent_compactions"].sum()) if replays.height else 0
    lines += [
        "### Compaction on real sessions: aptmem's policy against the original agent's",
        "",
        f"Each session replayed through `aptmem.session.Session` (trigger {notes['trigger']:.0%}, target "
        f"{notes['target']:.0%}, keep {notes['keep_turns']} turns"
        + (f" or at least the newest {notes['keep_recent_tokens']:,} tokens, cut inside a turn where whole turns do "
           "not fit" if notes.get("keep_recent_tokens") else "") + f"; cheap tier {', '.join(notes['replay_tiers'])}, "
        f"confirmed by {notes['confirm'] or 'nothing'}) at each window, beside the agent: the compactions it wrote into "
        "the file, and the request at which its own trigger rule (Claude Code window − 33k, pi window − 16,384, at "
        "least half the window) fires on the reported count. aptmem's replay counts the transcript only.",
        "",
        (f"The agents compacted {agent_total} times in these files." if agent_total else
         "None of these sessions was compacted by its agent (no `compact_boundary` or `compaction` line: none reached "
         "the agent's trigger), so the comparison is with the agent's rule on the provider's count."),
        "",
        _replays_markdown(replays) if replays.height else "(no replays)",
        "",
    ]
    if replays.height and usage.height:
        png = compaction_figure(usage, events, replays, run_dir / "figures" / "transcript_compaction.png")
        lines += [f"![Context per request with both triggers and the compactions]({png.relative_to(run_dir)})", ""]
    return "\n".join(lines)
