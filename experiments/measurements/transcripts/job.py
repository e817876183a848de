"""The ``transcripts`` measurement: real agent sessions scored against the token counts their provider reported.

Every transcript of ``path`` (Claude Code or pi, see :mod:`aptmem.importers`) is imported; for
each request whose reply reported usage, every tier's estimate (``model`` and ``anchored`` with the
format's provider profile) of the context before it is set
beside the provider's input-side count (:mod:`aptmem.importers.usage`); then each session is
replayed under aptmem's policy per window and compared with where the original agent compacted
(:mod:`experiments.measurements.transcripts.compare`). Tables (parquet and CSV) and ``transcripts_notes.json``:

* ``usage``: one row per (request, tier): reported tokens, estimate, ratio, error, the agent
  compactions before it (``segment``), and the error once the session's fixed part (its first
  request's gap) is added;
* ``usage_summary``: one row per (format, tier): MAPE, p95 and largest absolute error, median ratio
  raw and with the fixed part, and the calibration ``reported ~ intercept + slope * estimate`` with
  its out-of-sample MAPE;
* ``usage_session``: one row per (session, tier): MAPE, p95, largest and mean signed error;
* ``agent_compaction_error``: one row per (agent compaction, tier): the tier's count of the context
  the agent compacted against ``preTokens`` / ``tokensBefore``
  (:mod:`experiments.measurements.transcripts.triggers`);
* ``transcript_triggers``: one row per (session, tier, segment between the agent's compactions):
  where aptmem counting by that tier, under the agent's own rule and window, would compact against
  where the agent's rule fired on the provider's count, and the requests that would have exceeded
  the window;
* ``transcript_compaction``: one row per (session, window, replay tier): the comparison;
* ``transcript_compaction_events``: one row per compaction event (agent, agent_rule, aptmem).

When ``path`` does not exist (a clone without the fixtures), the tables are written empty and
the notes say why; the report section then says the measurement was skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from aptmem.entries import Compaction
from aptmem.errors import TokenizerUnavailable
from aptmem.importers import detect_format, iter_entries
from aptmem.importers.usage import (
    CounterSpec,
    Request,
    calibrate,
    counted_requests,
    counter_spec,
    session_stats,
    tier_stats,
)
from aptmem.tokens import get_estimator
from aptmem.tokens.tiers import build_estimator
from experiments.core.runfolder import RunFolder, read_measurement
from experiments.measurements.transcripts.compare import (
    EVENT_SCHEMA,
    REPLAY_SCHEMA,
    ReplaySpec,
    compare_session,
)
from experiments.measurements.transcripts.triggers import (
    AGENT_COMPACTION_SCHEMA,
    TRIGGER_SCHEMA,
    agent_compaction_rows,
    counts_after_each_entry,
    trigger_rows,
)
from experiments.measurements.transcripts.settings import TranscriptsSettings
from experiments.workloads.transcripts import transcript_files

__all__ = ["SESSION_SCHEMA", "SUMMARY_SCHEMA", "TABLES", "USAGE_SCHEMA", "planned_steps", "read_tables",
           "run_transcripts"]

TABLES = ("usage", "usage_summary", "usage_session", "agent_compaction_error", "transcript_triggers",
          "transcript_compaction", "transcript_compaction_events")

#: One row per (request, tier). ``ratio`` = estimate / reported; ``ape_pct`` its absolute % error;
#: ``overhead``: the session's gap at its first request (reported - estimate); ``corrected``:
#: estimate + overhead (null for the first request, which measured it).
USAGE_SCHEMA = {"format": pl.String, "session": pl.String, "request": pl.Int64, "entry": pl.Int64, "model": pl.String,
                "reported": pl.Int64, "output": pl.Int64, "context_entries": pl.Int64, "segment": pl.Int64,
                "tier": pl.String, "estimator": pl.String, "estimate": pl.Int64, "error": pl.Int64,
                "ratio": pl.Float64, "ape_pct": pl.Float64,
                "overhead": pl.Int64, "corrected": pl.Int64, "corrected_ape_pct": pl.Float64}

#: One row per (format, tier); percentages in %.
SUMMARY_SCHEMA = {"format": pl.String, "tier": pl.String, "sessions": pl.Int64, "requests": pl.Int64,
                  "mape_pct": pl.Float64, "median_ratio": pl.Float64, "overhead_requests": pl.Int64,
                  "mape_overhead_pct": pl.Float64, "median_ratio_overhead": pl.Float64, "median_overhead": pl.Float64,
                  "split": pl.String, "folds": pl.Int64, "intercept": pl.Float64, "slope": pl.Float64,
                  "train_mape_pct": pl.Float64, "test_mape_pct": pl.Float64, "test_requests": pl.Int64,
                  "p95_abs_error": pl.Float64, "max_abs_error": pl.Float64}

#: One row per (session, tier): the error at every request of the session (tokens; percentages in %).
SESSION_SCHEMA = {"format": pl.String, "session": pl.String, "tier": pl.String, "requests": pl.Int64,
                  "mape_pct": pl.Float64, "p95_abs_error": pl.Float64, "max_abs_error": pl.Float64,
                  "mean_signed_error": pl.Float64}


def _files(settings: TranscriptsSettings) -> tuple[list[Path], str | None]:
    """The transcripts to read, or none and why."""
    try:
        return transcript_files(settings.path), None
    except FileNotFoundError as exc:
        return [], str(exc)


def planned_steps(settings: TranscriptsSettings) -> int:
    """Progress steps: per transcript, one for the usage and one per replay."""
    files, _ = _files(settings)
    return len(files) * (1 + len(settings.windows) * len(settings.replay_tiers))


def _counter_specs(specs: list[str], fmt: str, profile: str | None, notes: list[str]) -> dict[str, CounterSpec]:
    """The counters the tier specs name for one format (model and anchored with its provider profile)."""
    out = {}
    for spec in specs:
        try:
            out[spec] = counter_spec(spec, profile or fmt)
        except TokenizerUnavailable as exc:
            note = f"tier {spec} left out: {exc}"
            if note not in notes:
                notes.append(note)
    return out


def _segments(entries: list[Any]) -> list[int]:
    """Per entry: how many of the agent's compactions stand before it."""
    out, seen = [], 0
    for entry in entries:
        out.append(seen)
        seen += isinstance(entry, Compaction)
    return out


def _usage_rows(requests: list[Request], names: dict[tuple[str, str], str],
                segments: dict[str, list[int]]) -> list[dict[str, Any]]:
    rows = []
    first: dict[tuple[str, str], int] = {}
    for r in requests:
        for tier, estimate in r.estimates.items():
            overhead = first.setdefault((r.session, tier), r.reported - estimate)
            corrected = estimate + overhead if r.index > 0 else None
            rows.append({"format": r.format, "session": r.session, "request": r.index, "entry": r.seq, "model": r.model,
                         "reported": r.reported, "output": r.output, "context_entries": r.context_entries,
                         "segment": segments[r.session][r.seq], "tier": tier, "estimator": names[(r.session, tier)],
                         "estimate": estimate, "error": estimate - r.reported, "ratio": estimate / r.reported,
                         "ape_pct": abs(estimate - r.reported) / r.reported * 100, "overhead": overhead,
                         "corrected": corrected,
                         "corrected_ape_pct": None if corrected is None else abs(corrected - r.reported) / r.reported * 100})
    return rows


def _session_rows(requests: list[Request]) -> list[dict[str, Any]]:
    rows = []
    for session in dict.fromkeys(r.session for r in requests):
        part = [r for r in requests if r.session == session]
        for tier, figures in session_stats(part, list(part[0].estimates))[session].items():
            rows.append({"format": part[0].format, "session": session, "tier": tier, "requests": figures.requests,
                         "mape_pct": figures.mape, "p95_abs_error": figures.p95_abs_error,
                         "max_abs_error": figures.max_abs_error, "mean_signed_error": figures.mean_signed_error})
    return rows


def _summary_rows(requests: list[Request]) -> list[dict[str, Any]]:
    rows = []
    for fmt in sorted({r.format for r in requests}):
        part = [r for r in requests if r.format == fmt]
        for tier in part[0].estimates:
            s, c = tier_stats(part, tier), calibrate(part, tier)
            rows.append({"format": fmt, "tier": tier, "sessions": len({r.session for r in part}), "requests": s.requests,
                         "mape_pct": s.mape, "median_ratio": s.median_ratio, "overhead_requests": s.overhead_requests,
                         "mape_overhead_pct": s.mape_overhead, "median_ratio_overhead": s.median_ratio_overhead,
                         "median_overhead": s.median_overhead, "split": c.split, "folds": c.folds,
                         "intercept": c.intercept, "slope": c.slope, "train_mape_pct": c.train_mape,
                         "test_mape_pct": c.test_mape, "test_requests": c.test_requests,
                         "p95_abs_error": s.p95_abs_error, "max_abs_error": s.max_abs_error})
    return rows


def run_transcripts(settings: TranscriptsSettings, out: Path | RunFolder, *, tmp: str | None = None,
                    progress: Callable[[int], object] | None = None) -> dict[str, pl.DataFrame]:
    """Score and replay every transcript of ``settings.path``; write the tables and notes to ``out``."""
    folder = RunFolder.of(out)
    tick = progress or (lambda n: None)
    started = time.perf_counter_ns()
    notes: list[str] = []
    files, missing = _files(settings)
    if missing:
        notes.append(f"skipped: {missing} (set APTMEM_TRANSCRIPTS or transcripts.path)")
    confirm = get_estimator("precise", settings.confirm) if settings.confirm and files else None
    requests: list[Request] = []
    names: dict[tuple[str, str], str] = {}
    segments: dict[str, list[int]] = {}
    rows: dict[str, list[dict[str, Any]]] = {"agent_compaction_error": [], "transcript_triggers": [],
                                             "transcript_compaction": [], "transcript_compaction_events": []}
    sources: list[dict[str, Any]] = []
    scored: list[str] = []
    for path in files:
        fmt = detect_format(path) if settings.format == "auto" else settings.format
        scan = iter_entries(fmt, path)
        entries = list(scan)
        specs = _counter_specs(settings.tiers, fmt, settings.profile, notes)
        scored += [t for t in specs if t not in scored]
        names.update({(path.stem, t): spec.name for t, spec in specs.items()})
        found, without = counted_requests(entries, {t: spec.make() for t, spec in specs.items()}, session=path.stem,
                                          fmt=fmt)
        requests += found
        segments[path.stem] = _segments(entries)
        counts = counts_after_each_entry(entries, specs)
        rows["agent_compaction_error"] += agent_compaction_rows(fmt, path.stem, entries, found, counts)
        if fmt in settings.agent_windows:
            rows["transcript_triggers"] += trigger_rows(fmt, path.stem, entries, found, counts,
                                                        window=settings.agent_windows[fmt],
                                                        tolerance=settings.on_time_requests)
        report = scan.report
        sources.append({"file": path.name, "format": fmt, "lines": report.lines, "entries": report.entries,
                        "replies": report.replies, "requests": len(found), "requests_without_usage": without,
                        "compactions": report.compactions, "skipped": report.skipped, "damaged": report.damaged,
                        "damage": report.damage_reasons[:10], "source_session_id": report.source_session_id})
        tick(1)
        for window in settings.windows:
            for tier in settings.replay_tiers:
                cheap = build_estimator(tier)
                spec = ReplaySpec(window=window, tier=tier, estimator=cheap,
                                  confirm=None if cheap.tier == "precise" else confirm, trigger=settings.trigger,
                                  target=settings.target, keep_turns=settings.keep_turns,
                                  keep_recent_tokens=settings.keep_recent_tokens)
                found_events, summary = compare_session(fmt, path.stem, entries, found, spec, tmp=tmp)
                rows["transcript_compaction_events"] += found_events
                rows["transcript_compaction"].append(summary)
                tick(1)
    stamp = folder.meta.columns()
    tables = {
        "usage": pl.DataFrame(_usage_rows(requests, names, segments), schema=USAGE_SCHEMA),
        "usage_summary": pl.DataFrame(_summary_rows(requests), schema=SUMMARY_SCHEMA),
        "usage_session": pl.DataFrame(_session_rows(requests), schema=SESSION_SCHEMA),
        "agent_compaction_error": pl.DataFrame(rows["agent_compaction_error"], schema=AGENT_COMPACTION_SCHEMA),
        "transcript_triggers": pl.DataFrame(rows["transcript_triggers"], schema=TRIGGER_SCHEMA),
        "transcript_compaction": pl.DataFrame(rows["transcript_compaction"], schema=REPLAY_SCHEMA),
        "transcript_compaction_events": pl.DataFrame(rows["transcript_compaction_events"], schema=EVENT_SCHEMA),
    }
    tables = {name: table.with_columns(stamp) for name, table in tables.items()}
    doc = {"path": settings.path, "format": settings.format, "tiers": scored,
           "estimators": {t: n for (_, t), n in names.items()}, "profile": settings.profile,
           "agent_windows": dict(settings.agent_windows), "on_time_requests": settings.on_time_requests,
           "windows": list(settings.windows),
           "replay_tiers": list(settings.replay_tiers), "confirm": settings.confirm, "trigger": settings.trigger,
           "target": settings.target, "keep_turns": settings.keep_turns,
           "keep_recent_tokens": settings.keep_recent_tokens, "sources": sources, "notes": notes,
           "skipped": missing, "seconds": round((time.perf_counter_ns() - started) / 1e9, 2)}
    return folder.write("transcripts", tables, doc)


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's transcripts tables and notes back."""
    return read_measurement(run_dir, TABLES, "transcripts")
