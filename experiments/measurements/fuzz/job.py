"""The fuzz job: hostile inputs through the reader, ``fsck``, ``tokens`` and ``decode_line``.

Input ``i`` of a run is drawn from ``random.Random(f"{seed}-{i}")`` alone, so any input can be
made again from the seed and its index without replaying the others, and every target sees the
same inputs. The job writes tidy tables only (``fuzz``, ``fuzz_findings``, as parquet and CSV,
plus ``fuzz_notes.json``) and the reproducing bytes of every finding under ``fuzz_findings/``;
the report section is rebuilt from those files (:mod:`experiments.measurements.fuzz.report`).

Run it with ``python -m experiments run measure=[fuzz]`` (``fuzz.inputs=...`` to size it);
``experiment=full`` runs 25,000 inputs per target and a 4 GiB line. A target is one entry of
:data:`experiments.measurements.fuzz.targets.TARGETS`: adding one there adds it to the run.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import polars as pl

from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.tokens.tiers import build_estimator
from experiments.measurements.fuzz.inputs import (
    FuzzInput,
    builtin_sessions,
    builtin_transcripts,
    load_corpus,
    make_input,
)
from experiments.measurements.fuzz.big_line import (
    effective_cap,
    make_big_line,
    measure_reader,
    memory_bound,
)
from experiments.measurements.fuzz.targets import TARGETS, Outcome, TargetContext, clean_folder
from experiments.core.runfolder import RunFolder, read_measurement
from experiments.measurements.fuzz.settings import FuzzSettings

__all__ = ["run_fuzz", "planned_inputs", "read_tables", "draw_input", "TABLES"]

TABLES = ("fuzz", "fuzz_findings")


def planned_inputs(settings: FuzzSettings) -> int:
    """Progress units of a run: inputs times targets, plus one per big-line reader."""
    readers = len(settings.big_line_readers) if settings.big_line_bytes else 0
    return settings.inputs * len(settings.targets) + readers


def _seeds(settings: FuzzSettings) -> tuple[dict[str, list], dict[str, object]]:
    from experiments.core.runinfo import REPO_ROOT

    real, missing = load_corpus([str(REPO_ROOT / path) for path in settings.corpus])
    real = real or builtin_transcripts()
    seeds = {"real_transcript": real, "aptmem_session": builtin_sessions(settings.seed)}
    notes = {"corpus_files": sorted(s.name for s in real), "corpus_missing": missing,
             "corpus_bytes": sum(len(s.data) for s in real)}
    return seeds, notes


def draw_input(settings: FuzzSettings, seeds: dict[str, list], index: int) -> tuple[FuzzInput, int]:
    """Input ``index`` of a run and the line cap it is read with (both from the seed and index alone)."""
    rng = random.Random(f"{settings.seed}-{index}")
    kind = rng.choice(settings.kinds)
    item = make_input(rng, kind, seeds, list(settings.mutations), settings.max_input_bytes, settings.small_cap)
    cap = settings.small_cap if rng.random() < 0.5 else DEFAULT_LINE_CAP
    return item, cap


@dataclass
class _Tally:
    """Running totals of one (target, input kind)."""

    inputs: int = 0
    unexpected: Counter = field(default_factory=Counter)
    expected: Counter = field(default_factory=Counter)
    violations: Counter = field(default_factory=Counter)
    lost: int = 0
    invented: int = 0
    seconds: float = 0.0


def _fast_tmp() -> str | None:
    """/dev/shm when it is a writable folder (a tmpfs: syncs cost nothing), else the system default."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _findings(outcome: Outcome) -> list[tuple[str, str]]:
    """(kind, detail) of every finding in an outcome: exceptions, lost lines, violations."""
    found = [(f"exception:{name}", detail) for name, detail in outcome.unexpected]
    if outcome.lost_good_lines:
        found.append(("lost_good_lines", f"{outcome.lost_good_lines} good lines not read"))
    if outcome.invented_entries:
        found.append(("invented_entries", f"{outcome.invented_entries} entries read that no line holds"))
    found += [(f"violation:{kind}", f"{n}x") for kind, n in outcome.violations.items()]
    return found


def run_fuzz(settings: FuzzSettings, out: Path | RunFolder, *,
             progress: Callable[[int], object] | None = None) -> dict[str, pl.DataFrame]:
    """Fuzz every target with ``settings.inputs`` inputs, check the big-line memory bound; write the tables."""
    folder = RunFolder.of(out)
    started = time.perf_counter_ns()
    seeds, notes = _seeds(settings)
    estimators = [build_estimator(spec) for spec in settings.estimators]
    folder.path.mkdir(parents=True, exist_ok=True)
    saved = folder.path / "fuzz_findings"
    tallies: dict[tuple[str, str], _Tally] = {}
    findings: list[dict[str, object]] = []
    kept: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="aptmem-fuzz-", dir=settings.tmp) as tmp, \
            tempfile.TemporaryDirectory(prefix="aptmem-fuzz-work-", dir=settings.tmp or _fast_tmp()) as work_dir:
        work = Path(work_dir)
        for index in range(settings.inputs):
            item, cap = draw_input(settings, seeds, index)
            for target in settings.targets:
                context = TargetContext(estimators, cap)
                t0 = time.perf_counter()
                outcome = TARGETS[target](item.data, work, context)
                tally = tallies.setdefault((target, item.kind), _Tally())
                tally.seconds += time.perf_counter() - t0
                clean_folder(work)
                tally.inputs += 1
                tally.unexpected.update(name for name, _ in outcome.unexpected)
                tally.expected.update(outcome.expected)
                tally.violations.update(outcome.violations)
                tally.lost += outcome.lost_good_lines
                tally.invented += outcome.invented_entries
                for kind, detail in _findings(outcome):
                    kept[(target, kind)] += 1
                    if kept[(target, kind)] <= settings.keep_findings:
                        findings.append(_save(saved, target, kind, detail, item, index, cap, settings.seed))
                if progress:
                    progress(1)
        memory_rows = _big_line(settings, Path(tmp), findings, progress)
    rows = [_row(target, kind, tally) for (target, kind), tally in sorted(tallies.items())] + memory_rows
    table = pl.DataFrame(rows, schema=_SCHEMA).with_columns(
        pl.lit(settings.seed).alias("seed"), *folder.meta.columns())
    finding_table = pl.DataFrame(findings, schema=_FINDING_SCHEMA)
    notes.update({
        "inputs_per_target": settings.inputs, "targets": list(settings.targets), "kinds": list(settings.kinds),
        "mutations": list(settings.mutations), "max_input_bytes": settings.max_input_bytes, "small_cap": settings.small_cap,
        "estimators": [e.name for e in estimators], "big_line_bytes": settings.big_line_bytes,
        "big_line_cap": settings.big_line_cap, "seed": settings.seed,
        "findings": int(sum(kept.values())) + sum(1 for f in findings if f["index"] == -1),
        "seconds": round((time.perf_counter_ns() - started) / 1e9, 1),
    })
    return folder.write("fuzz", {"fuzz": table, "fuzz_findings": finding_table}, notes)


_SCHEMA = {
    "target": pl.String, "input_kind": pl.String, "inputs": pl.Int64, "unexpected_exceptions": pl.Int64,
    "exceptions_by_type": pl.String, "expected_errors_by_type": pl.String, "lost_good_lines": pl.Int64,
    "invented_entries": pl.Int64, "violations": pl.Int64, "violations_by_kind": pl.String, "seconds": pl.Float64,
    "line_bytes": pl.Int64, "line_cap": pl.Int64, "peak_rss_bytes": pl.Int64, "rss_growth_bytes": pl.Int64,
    "traced_peak_bytes": pl.Int64, "memory_bound_bytes": pl.Int64,
}
_FINDING_SCHEMA = {"target": pl.String, "kind": pl.String, "detail": pl.String, "input_kind": pl.String,
                   "seed_file": pl.String, "mutations": pl.String, "seed": pl.Int64, "index": pl.Int64,
                   "line_cap": pl.Int64, "input_bytes": pl.Int64, "input_hex": pl.String, "file": pl.String}


def _json(counter: Counter) -> str:
    return msgspec.json.encode(dict(sorted(counter.items()))).decode()


def _row(target: str, kind: str, tally: _Tally) -> dict[str, object]:
    return {"target": target, "input_kind": kind, "inputs": tally.inputs, "unexpected_exceptions": sum(tally.unexpected.values()),
            "exceptions_by_type": _json(tally.unexpected), "expected_errors_by_type": _json(tally.expected),
            "lost_good_lines": tally.lost, "invented_entries": tally.invented, "violations": sum(tally.violations.values()),
            "violations_by_kind": _json(tally.violations), "seconds": round(tally.seconds, 3)}


def _save(folder: Path, target: str, kind: str, detail: str, item: FuzzInput, index: int, cap: int, seed: int) -> dict[str, object]:
    """Save one finding's input as a file (and as hex in the table when short)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{target}-{kind.replace(':', '-')}-{item.digest}.bin"
    (folder / name).write_bytes(item.data)
    return {"target": target, "kind": kind, "detail": detail[:500], "input_kind": item.kind, "seed_file": item.seed_name,
            "mutations": ",".join(item.mutations), "seed": seed, "index": index, "line_cap": cap,
            "input_bytes": len(item.data), "input_hex": item.data.hex() if len(item.data) <= 2048 else None,
            "file": f"fuzz_findings/{name}"}


def _big_line(settings: FuzzSettings, tmp: Path, findings: list[dict[str, object]],
              progress: Callable[[int], object] | None) -> list[dict[str, object]]:
    """Read a file of one huge unterminated line with each reader in a fresh process; one row each.

    A reader that fails or passes the bound is also added to ``findings`` (its input is the
    sparse file's recipe, not bytes: :func:`~experiments.measurements.fuzz.big_line.make_big_line` of the size).
    """
    if not settings.big_line_bytes:
        return []
    rows = []
    for reader in settings.big_line_readers:
        cap = effective_cap(reader, settings.big_line_cap)
        bound = memory_bound(cap, settings.big_line_slack_mb * 1024 * 1024)
        path = tmp / "big-line.jsonl"
        line = make_big_line(path, settings.big_line_bytes)  # afresh per reader: a repair cuts it
        row: dict[str, object] = {"target": f"big_line:{reader}", "input_kind": "big_line", "inputs": 1,
                                  "line_bytes": line, "line_cap": cap, "memory_bound_bytes": bound,
                                  "lost_good_lines": 0, "invented_entries": 0}
        t0 = time.perf_counter()
        try:
            measured = measure_reader(reader, path, cap, settings.timeout_s)
        except Exception as exc:  # noqa: BLE001 - a reader that dies on a big line is the finding
            row.update(unexpected_exceptions=1, exceptions_by_type=_json(Counter([type(exc).__name__])),
                       violations=0, violations_by_kind="{}")
            findings.append(_big_line_finding(reader, f"exception:{type(exc).__name__}", str(exc)[-500:], settings))
        else:
            growth = measured["peak_rss_bytes"] - measured["rss_before_bytes"]
            over = growth > bound
            row.update(unexpected_exceptions=0, exceptions_by_type="{}", peak_rss_bytes=measured["peak_rss_bytes"],
                       rss_growth_bytes=growth, traced_peak_bytes=measured["traced_peak_bytes"],
                       violations=int(over), violations_by_kind=_json(Counter(["memory_over_bound"] if over else [])))
            if over:
                findings.append(_big_line_finding(reader, "violation:memory_over_bound",
                                                  f"peak RSS grew {growth:,} bytes, bound {bound:,}", settings))
        row.update(expected_errors_by_type="{}", seconds=round(time.perf_counter() - t0, 3))
        path.unlink(missing_ok=True)
        rows.append(row)
        if progress:
            progress(1)
    return rows


def _big_line_finding(reader: str, kind: str, detail: str, settings: FuzzSettings) -> dict[str, object]:
    return {"target": f"big_line:{reader}", "kind": kind, "detail": detail, "input_kind": "big_line", "seed_file": "",
            "mutations": "", "seed": settings.seed, "index": -1, "line_cap": settings.big_line_cap,
            "input_bytes": settings.big_line_bytes, "input_hex": None,
            "file": f"sparse file: experiments.measurements.fuzz.big_line.make_big_line(path, {settings.big_line_bytes})"}


def read_tables(run_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, object]]:
    """Read a run folder's fuzz tables and notes back."""
    return read_measurement(run_dir, TABLES, "fuzz")
