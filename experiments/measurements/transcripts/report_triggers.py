"""The transcripts section's parts on each session's requests: the error per session and tier, the error at the
agent's compactions, where aptmem under the agent's rule compacts, and the figure of estimate against reported per
request (drawn from the ``usage`` and ``transcript_triggers`` tables only)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.figures import pyplot, save_figure
from experiments.core.markdown import markdown_table

__all__ = ["estimates_figure", "trigger_lines"]


def _tokens(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}%"


def estimates_figure(usage: pl.DataFrame, triggers: pl.DataFrame, path: Path) -> Path:
    """Per session: reported input and each tier's estimate per request (left), the signed error (right)."""
    plt = pyplot()
    sessions = usage.select("format", "session").unique(maintain_order=True).rows()
    fig, axes = plt.subplots(len(sessions), 2, figsize=(15, 3.3 * len(sessions) + 1), squeeze=False)
    tiers = usage["tier"].unique(maintain_order=True).to_list()
    colors = dict(zip(tiers, plt.get_cmap("tab10").colors, strict=False))
    for (left, right), (fmt, session) in zip(axes, sessions, strict=True):
        part = usage.filter(pl.col("session") == session).sort("request")
        first = part.filter(pl.col("tier") == tiers[0])
        for tier in tiers:
            rows = part.filter(pl.col("tier") == tier)
            style = {"color": colors[tier], "linewidth": 0.9, "marker": "o", "markersize": 1.5, "label": tier}
            left.plot(rows["request"], rows["estimate"] / 1000, **style)
            right.plot(rows["request"], rows["error"] / 1000, **style)
        # Drawn last and dashed, so a tier that follows it closely (anchored) still shows beneath.
        left.plot(first["request"], first["reported"] / 1000, color="black", linewidth=1.2, linestyle="--",
                  marker="o", markersize=1.5, label="reported", zorder=5)
        seg = triggers.filter(pl.col("session") == session)
        if seg.height:
            left.axhline(seg["trigger_tokens"][0] / 1000, color="grey", linestyle=":", linewidth=1,
                         label=f"agent's trigger ({seg['window'][0]:,} window)")
        agent = seg.filter(pl.col("agent_request").is_not_null()).unique("segment", maintain_order=True)
        for i, row in enumerate(agent.iter_rows(named=True)):
            for ax in (left, right):
                ax.axvline(row["agent_request"] - 0.5, color="tab:red", linestyle="--", linewidth=1,
                           label=f"agent compacted ({row['agent_kind']})" if i == 0 and ax is left else None)
        right.axhline(0, color="black", linewidth=0.8)
        right.set_yscale("symlog", linthresh=1)
        left.set_ylabel("input tokens (k)")
        right.set_ylabel("estimate − reported (k tokens, symlog)")
        left.set_title(f"{session} ({fmt}): {first.height} requests", fontsize=10)
        right.set_title(f"{session}: error per request", fontsize=10)
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
        left.legend(fontsize=7, loc="best", ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("request (replies with usage, in order)")
    fig.suptitle("Each tier's estimate of every request against the input tokens the provider reported")
    return save_figure(fig, path, rect=(0, 0, 1, 0.98))


def _sessions_markdown(sessions: pl.DataFrame) -> str:
    table = sessions.select("session", "tier", "requests", pl.col("mape_pct").alias("MAPE"),
                            pl.col("p95_abs_error").alias("p95 |error|"), pl.col("max_abs_error").alias("max |error|"),
                            pl.col("mean_signed_error").alias("mean signed error"))
    return markdown_table(table, {"MAPE": _pct, "p95 |error|": _tokens, "max |error|": _tokens,
                                  "mean signed error": _tokens})


def _compactions_markdown(errors: pl.DataFrame) -> str:
    table = errors.select("session", "compaction", "kind", pl.col("pre_tokens").alias("agent's count (preTokens)"),
                          pl.col("last_input").alias("last reported input"), "tier", "estimate", "error",
                          pl.col("ape_pct").alias("error %"))
    return markdown_table(table, {"agent's count (preTokens)": _tokens, "last reported input": _tokens,
                                  "estimate": _tokens, "error": _tokens, "error %": _pct})


def _triggers_markdown(triggers: pl.DataFrame) -> str:
    table = triggers.select(
        "session", "tier", "segment", "requests", pl.col("agent_kind").alias("agent compacted"),
        pl.col("agent_request").alias("agent: before request"), pl.col("rule_request").alias("rule on reported"),
        "reference", pl.col("aptmem_request").alias("aptmem: before request"),
        pl.col("aptmem_tokens").alias("aptmem's count then"), pl.col("gap_requests").alias("gap (requests)"),
        pl.col("on_time").alias("on time"), pl.col("over_window_requests").alias("requests over the window"),
        pl.col("max_reported_before").alias("largest reported before aptmem compacts"))
    return markdown_table(table, {"aptmem's count then": _tokens, "largest reported before aptmem compacts": _tokens})


def trigger_lines(run_dir: Path, tables: dict[str, pl.DataFrame], notes: dict) -> list[str]:  # type: ignore[type-arg]
    """Markdown lines (and the figure) of the per-session parts of the transcripts section."""
    usage, triggers = tables["usage"], tables["transcript_triggers"]
    lines = ["### Per session: the error at every request", "",
             "Each tier against the provider's input count of every request of each session. `model` and `anchored` "
             "count what the provider counts (the format's provider profile: fixed part, tokenizer ratio, framing, "
             "thinking); `anchored` adds the estimate of what was appended to the latest reported usage.", "",
             _sessions_markdown(tables["usage_session"]), ""]
    if usage.height:
        png = estimates_figure(usage, triggers, run_dir / "figures" / "transcript_estimates.png")
        lines += [f"![Estimate against reported per request]({png.relative_to(run_dir)})", ""]
    errors = tables["agent_compaction_error"]
    if errors.height:
        lines += ["### The count at the agent's compactions", "",
                  "Each tier's count just before the compaction entry, against the count the agent wrote with it "
                  "(`preTokens` / `tokensBefore`: the last request's input and output plus what the agent appended "
                  "after).", "", _compactions_markdown(errors), ""]
    if triggers.height:
        windows = ", ".join(f"{f} {w:,}" for f, w in notes.get("agent_windows", {}).items())
        late = triggers.filter(~pl.col("on_time")).select("tier").unique(maintain_order=True).to_series().to_list()  # in table order: a report rebuilds byte for byte
        lines += ["### aptmem under the agent's own rule and window", "",
                  f"Each session at its agent's window ({windows}) and trigger (Claude Code window − 33k, pi window − "
                  "16,384), cut into segments at the agent's compactions. *reference*: where the agent compacted by "
                  "its rule (`agent`), else where its rule fires on the reported input + output (`rule`), else "
                  f"`none`. *On time*: aptmem, counting by the tier, fires within {notes.get('on_time_requests')} "
                  "requests of the reference, or neither fires. *Requests over the window*: requests aptmem would "
                  "still have sent uncompacted whose reported count exceeds the window. A later segment starts from "
                  "the agent's compaction, not aptmem's (the file's usage is of that context).", "",
                  f"Tiers late or early in some segment: {', '.join(late) or 'none'}.", "",
                  _triggers_markdown(triggers), ""]
    return lines
