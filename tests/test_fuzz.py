"""The fuzzer in CI: a short seeded run that must find nothing, the bugs it found, and the memory bound.

The short run is the fuzz job itself (:mod:`experiments.measurements.fuzz.job`) at a small size: every target,
every input kind and mutation, the seed in every failure message. The regression tests pin the
findings of the full runs, each with the input that showed it. The memory tests read a sparse
file of one line far longer than the cap, in a fresh process measuring its own peak RSS.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import polars as pl
import pytest

from aptmem.entries import User, encode_line
from aptmem.recovery import LogScan
from aptmem.store import select_live
from aptmem.tailscan import read_live_tail
from experiments.measurements.fuzz.job import read_tables, run_fuzz
from experiments.measurements.fuzz.settings import FuzzSettings
from experiments.measurements.fuzz.big_line import READERS, effective_cap, make_big_line, measure_reader, memory_bound
from experiments.measurements.fuzz.report import fuzz_section
from experiments.gate.metrics import collect_metrics

SEED = 20240611
MiB = 1024 * 1024


def _no_findings(run_dir: Path, seed: int) -> pl.DataFrame:
    """Assert the run in ``run_dir`` found nothing (naming the seed and the findings if it did)."""
    tables, _ = read_tables(run_dir)
    table, findings = tables["fuzz"], tables["fuzz_findings"]
    detail = findings.select("target", "kind", "detail", "index", "mutations").rows()
    for column in ("unexpected_exceptions", "lost_good_lines", "invented_entries", "violations"):
        assert table[column].sum() == 0, f"seed={seed}: {column}: {detail}"
    assert findings.height == 0, f"seed={seed}: {detail}"
    return table


def test_a_short_seeded_fuzz_run_finds_nothing(tmp_path: Path) -> None:
    """A few thousand inputs through every target: no foreign exception, no good line lost."""
    common = dict(seed=SEED, big_line_bytes=0, max_input_bytes=8 * 1024,
                  estimators=["rough:bytes", "rough:chars", "medium", "precise:cl100k_base"])
    heavy = FuzzSettings(inputs=300, targets=["reader", "fsck", "tokens"], **common)  # type: ignore[arg-type]
    light = FuzzSettings(inputs=3000, targets=["import", "decode_line"], **common)  # type: ignore[arg-type]
    run_fuzz(heavy, tmp_path / "heavy")
    run_fuzz(light, tmp_path / "light")
    tried = 0
    for run_dir in (tmp_path / "heavy", tmp_path / "light"):
        table = _no_findings(run_dir, SEED)
        tried += int(table["inputs"].sum())
        assert set(table["input_kind"]) == {"random_bytes", "real_transcript", "aptmem_session"}
        assert {"seed", "commit", "machine"} <= set(table.columns) and set(table["seed"]) == {SEED}
        metrics = {m.name: m.value for m in collect_metrics(run_dir).values() if m.name.startswith("fuzz.")}
        assert metrics and set(metrics.values()) == {0.0}, metrics
    assert tried == 3 * 300 + 2 * 3000
    section = fuzz_section(tmp_path / "heavy")
    assert section is not None and "## Fuzzed input" in section and "No findings" in section
    assert "| reader | 300 |" in section


def test_a_finding_is_saved_with_its_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception the library does not own is a finding: counted, and its input saved to reproduce it."""
    import experiments.measurements.fuzz.targets as targets

    def broken(data: bytes, work: Path, ctx: object) -> targets.Outcome:
        out = targets.Outcome()
        out.guard("broken", lambda: data.index(b"\x00"))  # ValueError on most inputs: not an AptmemError
        return out

    monkeypatch.setitem(targets.TARGETS, "decode_line", broken)
    run_fuzz(FuzzSettings(inputs=30, seed=SEED, targets=["decode_line"], big_line_bytes=0, keep_findings=2), tmp_path)
    tables, notes = read_tables(tmp_path)
    assert tables["fuzz"]["unexpected_exceptions"].sum() > 0
    findings = tables["fuzz_findings"]
    assert findings.height == 2 and set(findings["kind"]) == {"exception:ValueError"}
    for row in findings.iter_rows(named=True):
        saved = (tmp_path / row["file"]).read_bytes()
        assert row["input_hex"] is None or bytes.fromhex(row["input_hex"]) == saved
        assert b"\x00" not in saved
    assert notes["findings"] == tables["fuzz"]["unexpected_exceptions"].sum()
    assert "findings" in (fuzz_section(tmp_path) or "")
    metric = collect_metrics(tmp_path)["fuzz.decode_line.unexpected_exceptions"]
    assert metric.value > 0 and metric.better == "lower" and metric.tolerance == 0


REAL = Path(__file__).parent / "fixtures" / "real"


def test_the_import_target_passes_a_damaged_real_transcript(tmp_path: Path) -> None:
    """A real transcript with a garbage line and a converter-refused line: damage reported, nothing lost."""
    from experiments.measurements.fuzz.targets import TARGETS, TargetContext

    lines = (REAL / "claude-code-short.jsonl").read_bytes().splitlines(keepends=True)
    data = b"".join([*lines[:3], b"not json\n", b'{"type":"user","uuid":"x"}\n', *lines[3:], b'{"type":"assis'])
    work = tmp_path / "work"
    work.mkdir()
    outcome = TARGETS["import"](data, work, TargetContext([], 4096))
    assert not outcome.unexpected and not outcome.violations, outcome
    assert outcome.lost_good_lines == 0 and outcome.invented_entries == 0


def test_an_import_keeps_a_line_glued_onto_a_lost_writes_nul_bytes(tmp_path: Path) -> None:
    """NUL bytes with no line end, then an intact line: the NULs are damage, the line is imported."""
    from aptmem.importers.base import LOST_WRITE
    from aptmem.importers.scan import TranscriptScan
    from experiments.measurements.fuzz.targets import TARGETS, TargetContext

    lines = (REAL / "claude-code-tool_heavy.jsonl").read_bytes().splitlines(keepends=True)
    clean, damaged = tmp_path / "clean.jsonl", tmp_path / "damaged.jsonl"
    clean.write_bytes(b"".join(lines))
    damaged.write_bytes(b"".join([*lines[:5], b"\x00" * 700, *lines[5:]]))
    scan = TranscriptScan("claude-code", damaged)
    assert list(scan) == list(TranscriptScan("claude-code", clean))
    report = scan.report
    assert report.damaged_lines == [6] and report.damage_reasons == [f"line 6: {LOST_WRITE}"]
    assert report.good_lines == len(lines) and report.lines == len(lines) + 1
    work = tmp_path / "work"
    work.mkdir()
    outcome = TARGETS["import"](damaged.read_bytes(), work, TargetContext([], 4096))
    assert not outcome.unexpected and not outcome.violations and outcome.lost_good_lines == 0, outcome


def test_the_import_target_catches_an_importer_that_drops_good_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle can fail: a reader that calls every 'assistant' line damaged loses good lines."""
    import aptmem.importers.base as base
    from experiments.measurements.fuzz.targets import TARGETS, TargetContext

    decode = base._decode

    def lossy(body: bytes) -> tuple[object, str | None]:
        obj, reason = decode(body)
        return (None, "not valid JSON (planted)") if reason is None and obj["type"] == "assistant" else (obj, reason)

    monkeypatch.setattr(base, "_decode", lossy)
    data = (REAL / "claude-code-short.jsonl").read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    outcome = TARGETS["import"](data, work, TargetContext([], 4096))
    assistants = sum(1 for line in data.splitlines() if msgspec.json.decode(line)["type"] == "assistant")
    assert assistants > 0 and outcome.lost_good_lines == assistants


def test_retype_value_keeps_the_line_json_and_changes_it() -> None:
    """The structure-aware mutation yields valid JSON lines whose fields changed type or went missing."""
    import random

    from experiments.measurements.fuzz.inputs import mutate

    line = (REAL / "pi-large-session.jsonl").read_bytes().splitlines(keepends=True)[1]
    changed = 0
    for n in range(50):
        out = mutate(random.Random(n), line, "retype_value")
        assert out.endswith(b"\n") and isinstance(msgspec.json.decode(out), dict)
        changed += out != line
    assert changed >= 40


# -- regressions: what the fuzzer found ---------------------------------------------------------------


def _tokens_entries(path: Path, *flags: str) -> dict[str, int]:
    """``aptmem tokens --entries --json PATH`` run in-process: its one JSON row."""
    import contextlib
    import io

    from aptmem.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["tokens", "--entries", "--json", *flags, str(path)]) == 0
    return msgspec.json.decode(out.getvalue().splitlines()[0])


#: Inputs on which ``aptmem tokens --entries`` counted other entries than the log reader reads
#: (it split lines with ``bytes.splitlines``): seed 0, inputs 0, 14, 30, 31, 57 of the first run.
TOKENS_CASES = {
    # A BOM before the first entry: the reader tolerates it; tokens counted the line as damaged.
    "bom": b"\xef\xbb\xbf" + encode_line(User(ts=1, content="a")) + encode_line(User(ts=2, content="b")),
    # Old Mac line ends: for the reader one damaged line; tokens split it into entries no store reads.
    "cr_only": (encode_line(User(ts=1, content="a")) + encode_line(User(ts=2, content="b"))).replace(b"\n", b"\r"),
    # A CR between JSON tokens is whitespace inside one line, not a line end.
    "cr_inside": b'{"type":"user",\r"content":"a","ts":1}\n',
    # CRLF line ends and blank lines: the same entries either way (a guard for the new reader).
    "crlf_and_blank": b"\r\n" + encode_line(User(ts=1, content="a")).replace(b"\n", b"\r\n") + b"\n\n",
}


@pytest.mark.parametrize("case", list(TOKENS_CASES))
def test_tokens_entries_counts_exactly_what_the_reader_reads(case: str, tmp_path: Path) -> None:
    """``tokens --entries`` reads a session as the log reader does (was: ``bytes.splitlines``)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(TOKENS_CASES[case])
    good = list(LogScan(path, "skip"))
    row = _tokens_entries(path)
    assert row["entries"] == len(good), (case, row)
    assert row["bytes"] == len(TOKENS_CASES[case])
    assert _tokens_entries(path, "--live")["entries"] == len(select_live(good))


def _rchar() -> int:
    with open("/proc/self/io", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/self/io (Linux) to count bytes read")
def test_read_live_tail_reads_each_byte_once(tmp_path: Path) -> None:
    """Reading backwards reads a file about once (was: the 1 MiB buffer refilled per 64 KiB block, 16x)."""
    path = tmp_path / "s.jsonl"
    size = make_big_line(path, 24 * MiB)
    before = _rchar()
    assert read_live_tail(path, "skip", cap=32 * MiB) != []
    read = _rchar() - before
    assert read < 1.5 * os.path.getsize(path), f"read {read:,} bytes of a {size:,}-byte line"


# -- the memory bound -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", READERS)
def test_a_line_far_over_the_cap_keeps_memory_bounded(reader: str, tmp_path: Path) -> None:
    """A 256 MiB line with no newline (sparse), read with a 4 MiB cap: peak RSS stays near the cap.

    ``tokens_entries`` has no cap option: it reads with the default 64 MiB cap, still below the
    line (it read the whole file into memory before the fix, which this bound refuses).
    """
    path = tmp_path / "big.jsonl"
    line = make_big_line(path, 256 * MiB)
    cap = effective_cap(reader, 4 * MiB)
    bound = memory_bound(cap, 32 * MiB)
    assert bound < line
    measured = measure_reader(reader, path, cap, timeout=300)
    growth = measured["peak_rss_bytes"] - measured["rss_before_bytes"]
    assert growth <= bound, f"{reader}: peak RSS grew {growth:,} bytes reading a {line:,}-byte line (bound {bound:,})"
    assert measured["traced_peak_bytes"] <= bound
