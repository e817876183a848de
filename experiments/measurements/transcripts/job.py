"""The ``transcripts`` measurement: real agent sessions scored against the token counts their provider reported.

Every transcript of ``path`` (Claude Code or pi, see :mod:`aptmem.importers`) is imported; for
each request whose reply reported usage, every tier's estimate of the context before it is set
beside the provider's input-side count (:mod:`aptmem.importers.usage`); then each session is
replayed under aptmem's policy per window and compared with where the original agent compacted
(:mod:`experiments.measurements.transcripts.compare`). Tables (parquet and CSV) and ``transcripts_notes.json``:

* ``usage``: one row per (request, tier): reported tokens, estimate, ratio, error, and the error
  once the session's fixed part (its first request's gap) is added;
* ``usage_summary``: one row per (format, tier): MAPE and median ratio raw and with the fixed
  part, and the calibration ``reported ~ intercept + slope * estimate`` with its out-of-sample MAPE;
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

from aptmem.errors import TokenizerUnavailable
from aptmem.importers import detect_format, iter_entries
from aptmem.importers.usage import (
    Request,
    calibrate,
    session_requests,
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
from experiments.measurements.transcripts.settings import TranscriptsSettings
from experiments.workloads.transcripts import transcript_files

__all__ = ["TABLES", "USAGE_SCHEMA", "SUMMARY_SCHEMA", "planned_steps", "read_tables",
           "run_transcripts"]

TABLES = ("usage", "usage_summary", "transcript_compaction", "transcript_compaction_events")

#: One row per (request, tier). ``ratio`` = estimate / reported; ``ape_pct`` its absolute % error;
#: ``overhead``: the session's gap at its first request (reported - estimate); ``corrected``:
#: estimate + overhead (null for the first request, which measured it).
USAGE_SCHEMA = {"format": pl.String, "session": pl.String, "request": pl.Int64, "entry": pl.Int64, "model": pl.String,
                "reported": pl.Int64, "output": pl.Int64, "context_entries": pl.Int64, "tier": pl.String,
                "estimator": pl.String, "estimate": pl.Int64, "ratio": pl.Float64, "ape_pct": pl.Float64,
                "overhead": pl.Int64, "corrected": pl.Int64, "corrected_ape_pct": pl.Float64}

#: One row per (format, tier); percentages in %.
SUMMARY_SCHEMA = {"format": pl.String, "tier": pl.String, "sessions": pl.Int64, "requests": pl.Int64,
                  "mape_pct": pl.Float64, "median_ratio": pl.Float64, "overhead_requests": pl.Int64,
                  "mape_overhead_pct": pl.Float64, "median_ratio_overhead": pl.Float64, "median_overhead": pl.Float64,
                  "split": pl.String, "folds": pl.Int64, "intercept": pl.Float64, "slope": pl.Float64,
                  "train_mape_pct": pl.Float64, "test_mape_pct": pl.Float64, "test_requests": pl.Int64}


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


def _estimators(specs: list[str], notes: list[str]) -> dict[str, Any]:
    out = {}
    for spec in specs:
        try:
            out[spec] = build_estimator(spec)
        except TokenizerUnavailable as exc:
            notes.append(f"tier {spec} left out: {exc}")
    return out


def _usage_rows(requests: list[Request], estimators: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    first: dict[tuple[str, str], int] = {}
    for r in requests:
        for tier, est in estimators.items():
            estimate = r.estimates[tier]
            overhead = first.setdefault((r.session, tier), r.reported - estimate)
            corrected = estimate + overhead if r.index > 0 else None
            rows.append({"format": r.format, "session": r.session, "request": r.index, "entry": r.seq, "model": r.model,
                         "reported": r.reported, "output": r.output, "context_entries": r.context_entries,
                         "tier": tier, "estimator": est.name, "estimate": estimate, "ratio": estimate / r.reported,
                         "ape_pct": abs(estimate - r.reported) / r.reported * 100, "overhead": overhead,
                         "corrected": corrected,
                         "corrected_ape_pct": None if corrected is None else abs(corrected - r.reported) / r.reported * 100})
    return rows


def _summary_rows(requests: list[Request], tiers: list[str]) -> list[dict[str, Any]]:
    rows = []
    for fmt in sorted({r.format for r in requests}):
        part = [r for r in requests if r.format == fmt]
        for tier in tiers:
            s, c = tier_stats(part, tier), calibrate(part, tier)
            rows.append({"format": fmt, "tier": tier, "sessions": len({r.session for r in part}), "requests": s.requests,
                         "mape_pct": s.mape, "median_ratio": s.median_ratio, "overhead_requests": s.overhead_requests,
                         "mape_overhead_pct": s.mape_overhead, "median_ratio_overhead": s.median_ratio_overhead,
                         "median_overhead": s.median_overhead, "split": c.split, "folds": c.folds,
                         "intercept": c.intercept, "slope": c.slope, "train_mape_pct": c.train_mape,
                         "test_mape_pct": c.test_mape, "test_requests": c.test_requests})
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
    estimators = _estimators(settings.tiers, notes) if files else {}
    confirm = get_estimator("precise", settings.confirm) if settings.confirm and files else None
    requests: list[Request] = []
    events: list[dict[str, Any]] = []
    replays: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    for path in files:
        fmt = detect_format(path) if settings.format == "auto" else settings.format
        scan = iter_entries(fmt, path)
        entries = list(scan)
        found, without = session_requests(entries, estimators, session=path.stem, fmt=fmt)
        requests += found
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
                                  target=settings.target, keep_turns=settings.keep_turns)
                found_events, summary = compare_session(fmt, path.stem, entries, found, spec, tmp=tmp)
                events += found_events
                replays.append(summary)
                tick(1)
    stamp = folder.meta.columns()
    tables = {
        "usage": pl.DataFrame(_usage_rows(requests, estimators), schema=USAGE_SCHEMA),
        "usage_summary": pl.DataFrame(_summary_rows(requests, list(estimators)), schema=SUMMARY_SCHEMA),
        "transcript_compaction": pl.DataFrame(replays, schema=REPLAY_SCHEMA),
        "transcript_compaction_events": pl.DataFrame(events, schema=EVENT_SCHEMA),
    }
    tables = {name: table.with_columns(stamp) for name, table in tables.items()}
    doc = {"path": settings.path, "format": settings.format, "tiers": list(estimators),
           "estimators": {t: e.name for t, e in estimators.items()}, "windows": list(settings.windows),
           "replay_tiers": list(settings.replay_tiers), "confirm": settings.confirm, "trigger": settings.trigger,
           "target": settings.target, "keep_turns": settings.keep_turns, "sources": sources, "notes": notes,
           "skipped": missing, "seconds": round((time.perf_counter_ns() - started) / 1e9, 2)}
    return folder.write("transcripts", tables, doc)


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Read a run folder's transcripts tables and notes back."""
    return read_measurement(run_dir, TABLES, "transcripts")
