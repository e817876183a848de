"""The compaction job: replay a seeded session with planted facts under the policy, per window and tier.

Each replay runs through a real :class:`aptmem.session.Session` on the JSONL store in a scratch
folder (see :mod:`experiments.measurements.compaction.replay`). The job writes tidy tables only, as parquet
and CSV, plus ``compaction_notes.json``; :mod:`experiments.measurements.compaction.report` builds the report
section from those files alone. Raw tables (schemas in :mod:`experiments.measurements.compaction.replay`,
each prefixed with ``window``, ``tier``, ``estimator``, ``confirm`` and suffixed with
``persist``, ``turns``, ``seed``, ``commit``, ``machine``):

* ``occupancy``: one row per append; ``compaction``: one row per compaction;
* ``facts``: one row per planted fact; ``fact_checks``: one row per (fact, later compaction).

Derived (stored for ``experiments check``; the report recomputes them): ``compaction_summary``
(one row per window and tier) and ``fact_retention`` (retained share per fact kind, language
and carrier).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import polars as pl

from aptmem.entries import User, encode_line
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.tokens import get_estimator
from aptmem.tokens.tiers import build_estimator
from experiments.core.runfolder import RunFolder, read_measurement
from experiments.core.observed_session import ObservedSession
from experiments.measurements.compaction.replay import replay_with_facts
from experiments.measurements.compaction.settings import CompactionSettings
from experiments.workloads import Workload, workload_entries, workload_name
from experiments.workloads.synthetic import WorkloadConfig, generate, plan_turns
from experiments.workloads.transcripts import TranscriptWorkload

__all__ = ["RAW_TABLES", "TABLES", "planned_appends", "read_tables", "run_compaction",
           "summaries", "workload_for"]

RAW_TABLES = ("occupancy", "compaction", "facts", "fact_checks")
TABLES = (*RAW_TABLES, "compaction_summary", "fact_retention")


def workload_for(settings: CompactionSettings, workload: Workload) -> Workload:
    """The workload config of the replayed session: ``workload`` with the settings' turns, facts and seed.

    A transcript workload is replayed as it is (``turns``, ``facts`` and ``seed`` are the synthetic
    generator's knobs: a real session has no planted facts).
    """
    if isinstance(workload, TranscriptWorkload):
        return workload
    seed = workload.seed if settings.seed is None else settings.seed
    return WorkloadConfig(**{**vars(workload), "turns": settings.turns, "max_entries": None,
                             "facts": settings.facts, "seed": seed})


def planned_appends(settings: CompactionSettings, workload: Workload) -> int:
    """How many appends the job makes in all (for a progress bar); cheap: no text is generated."""
    config = workload_for(settings, workload)
    if isinstance(config, TranscriptWorkload):
        entries = len(workload_entries(config))
    else:
        entries = sum(plan.entries for plan in plan_turns(config))
    return entries * len(settings.windows) * len(settings.tiers)


def run_compaction(
    settings: CompactionSettings,
    workload: Workload,
    out: Path | RunFolder,
    *,
    tmp: str | None = None,
    progress: Callable[[int], object] | None = None,
) -> dict[str, pl.DataFrame]:
    """Replay the session per window and tier; write the tables to ``out``; return them.

    ``tmp`` is where the scratch session folders go (default: the system's temporary folder).
    """
    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    config = workload_for(settings, workload)
    if isinstance(config, TranscriptWorkload):
        entries, facts = workload_entries(config), []  # no planted facts: occupancy is scored, retention is not
    else:
        session = generate(config)
        entries, facts = session.entries, session.facts
    turns = sum(isinstance(e, User) for e in entries) if isinstance(config, TranscriptWorkload) else settings.turns
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in RAW_TABLES}
    replays: list[dict[str, object]] = []
    for window in settings.windows:
        for tier in settings.tiers:
            estimator = build_estimator(tier)
            confirm = (None if settings.confirm is None or estimator.tier == "precise"
                       else get_estimator("precise", settings.confirm))
            with tempfile.TemporaryDirectory(prefix="aptmem-compaction-", dir=tmp) as root, JsonlStore(root) as store:
                observed = ObservedSession(store, new_session_id(), policy=settings.policy(window),
                                           estimator=estimator, confirm=confirm)
                result = replay_with_facts(entries, facts, observed, progress=progress)
            confirm_name = confirm.tokenizer if confirm is not None else "none"
            labels = [pl.lit(window).cast(pl.Int64).alias("window"), pl.lit(tier).alias("tier"),
                      pl.lit(estimator.name).alias("estimator"), pl.lit(confirm_name).alias("confirm")]
            for name in RAW_TABLES:
                table: pl.DataFrame = getattr(result, name)
                parts[name].append(table.select(*labels, pl.all()))
            report = msgspec.to_builtins(result.report)
            replays.append({"window": window, "tier": tier, "estimator": estimator.name, "confirm": confirm_name,
                            **{k: report[k] for k in ("entries", "turns", "compactions", "max_occupancy",
                                                      "peak_occupancy", "over_target", "over_target_explained",
                                                      "below_trigger", "split_tool_pairs", "oversized_entries",
                                                      "over_window", "seconds")}})
    stamp = [pl.lit(settings.persist).alias("persist"), pl.lit(turns).cast(pl.Int64).alias("turns"),
             pl.lit(config.seed).cast(pl.Int64).alias("seed"), *folder.meta.columns()]
    tables = {name: pl.concat(frames).with_columns(stamp) for name, frames in parts.items()}
    tables.update(summaries(tables))
    notes = {
        "windows": list(settings.windows), "tiers": list(settings.tiers), "confirm": settings.confirm,
        "trigger": settings.trigger, "target": settings.target, "keep_turns": settings.keep_turns,
        "keep_tokens": settings.keep_tokens, "keep_recent_tokens": settings.keep_recent_tokens, "persist": settings.persist, "turns": turns,
        "entries": len(entries), "facts": len(facts), "seed": config.seed, "workload": workload_name(config),
        "session_mb": round(sum(len(encode_line(e)) for e in entries) / 1e6, 2), "replays": replays,
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 2),
    }
    return folder.write("compaction", tables, notes)


def summaries(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The derived tables, from the raw ones alone.

    ``compaction_summary``, one row per (window, tier): appends, compactions, max occupancy after
    any append, peak (just before a compaction), post-compaction occupancy min / median / max,
    compactions over the target, shortened entries, split tool pairs, facts planted and retained
    at the end (count and %), ``median_survived`` (compactions a fact lived through, over facts that
    saw any) and ``first_compaction_pct`` (% of facts still live right after the first compaction
    that followed their planting). ``fact_retention``, one row per (window, tier, by, group) with
    ``by`` in kind / lang / carrier: facts, retained at the end, retained %.
    """
    keys = ["window", "tier"]
    occ = tables["occupancy"].group_by(keys, maintain_order=True).agg(
        pl.len().alias("appends"), pl.col("occupancy_after").max().alias("max_occupancy"),
        pl.col("occupancy_before").max().alias("peak_occupancy"))
    comp = tables["compaction"].group_by(keys).agg(
        pl.len().alias("compactions"), pl.col("occupancy_after").min().alias("post_min"),
        pl.col("occupancy_after").median().alias("post_median"), pl.col("occupancy_after").max().alias("post_max"),
        pl.col("over_target").sum().cast(pl.Int64).alias("over_target"), pl.col("shortened").sum().alias("shortened"),
        pl.col("split_tool_pairs").sum().alias("split_tool_pairs"))
    facts = tables["facts"].group_by(keys).agg(
        pl.len().alias("facts"), pl.col("retained_at_end").sum().cast(pl.Int64).alias("retained"),
        pl.col("compactions_survived").filter(pl.col("compactions_after") > 0).median().alias("median_survived"))
    first = tables["fact_checks"].filter(pl.col("since_planted") == 1).group_by(keys).agg(
        (pl.col("present").mean() * 100).alias("first_compaction_pct"))
    summary = (occ.join(comp, on=keys, how="left").join(facts, on=keys, how="left").join(first, on=keys, how="left")
               .with_columns(pl.col("compactions").fill_null(0),
                             (pl.col("retained") / pl.col("facts") * 100).alias("retained_pct")))
    by = []
    for column in ("kind", "lang", "carrier"):
        by.append(tables["facts"].group_by(*keys, column).agg(
            pl.len().alias("facts"), pl.col("retained_at_end").sum().cast(pl.Int64).alias("retained"))
            .select(*keys, pl.lit(column).alias("by"), pl.col(column).alias("group"), "facts", "retained"))
    retention = (pl.concat(by).with_columns((pl.col("retained") / pl.col("facts") * 100).alias("retained_pct"))
                 .sort(*keys, "by", "group", descending=[True, False, False, False]))
    return {"compaction_summary": summary, "fact_retention": retention}


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, object]]:
    """Read a run folder's raw compaction tables and notes back (the summaries are recomputed, not read)."""
    return read_measurement(run_dir, RAW_TABLES, "compaction")
