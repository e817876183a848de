"""The fuzz targets: each takes one input's bytes and reports what went wrong, never raising.

Targets and the oracles they are held to (besides the first, which holds for all: no exception
other than the library's own :class:`~aptmem.errors.AptmemError`):

* ``reader``: :class:`~aptmem.recovery.LogScan` in every recovery mode (raising and
  reporting), :func:`~aptmem.tailscan.read_live_tail` in every mode, and
  :func:`~aptmem.recovery.repair_log` on a copy in every mode. In ``skip`` mode the entries
  read are exactly the lines that decode alone (:func:`~experiments.measurements.fuzz.oracles.lines_that_decode`),
  and ``read_live_tail`` equals ``select_live`` of them. A repair leaves a clean log holding
  what the mode kept, is idempotent, and the quarantine plus the repaired file give back the
  original bytes. A refused file is left byte for byte as it was.
* ``fsck``: the ``aptmem fsck`` command (its handler, called in-process so that an exception
  the command line would turn into a message is seen), checking and then repairing a copy;
  after a repair the same check finds the file clean.
* ``tokens``: each tier's ``count`` on the input decoded three ways (replacement characters,
  lone surrogates, Latin-1): an int, 0 exactly for empty text; and the ``aptmem tokens``
  command on the file, plain and ``--entries`` (which must count every good line the reader
  finds) and ``--entries --live``.
* ``import``: the ``aptmem import --from auto`` command (in-process) on the input as a source
  transcript: not a transcript is the library's own error and writes nothing; otherwise every
  source line that is a JSON object with a string ``type``
  (:func:`~experiments.measurements.fuzz.oracles.source_lines_that_decode`) is a good line of the report or
  refused by the format's converter with a reason naming the format, every other non-blank
  line is reported as damage, and the session written
  reads back clean in ``strict`` mode with exactly the entries a second, in-memory scan of the
  source yields; ``aptmem usage-check`` on the same source finds the requests with usage the
  import counted, and the same damage.
* ``decode_line``: every line alone: an entry or :class:`~aptmem.errors.InvalidEntry`; a known
  entry encodes and decodes back to itself, an unknown one keeps its exact bytes.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from aptmem.entries import UnknownEntry, decode_line, encode_entry, entry_type
from aptmem.errors import AptmemError, InvalidEntry
from aptmem.importers.base import LOST_WRITE
from aptmem.importers.scan import TranscriptScan
from aptmem.recovery import LogScan, quarantine_path, repair_log
from aptmem.store import RECOVERY_MODES, select_live
from aptmem.tailscan import read_live_tail
from experiments.measurements.fuzz.oracles import (
    lines_that_decode,
    match_in_order,
    quarantine_pieces,
    reconstruct,
    source_lines_that_decode,
)

__all__ = ["TARGETS", "Outcome", "TargetContext"]


@dataclass
class Outcome:
    """What one input did to one target."""

    #: exceptions that are not the library's own: (type name, where and message)
    unexpected: list[tuple[str, str]] = field(default_factory=list)
    #: the library's own errors, by type name (expected: damage refused, not a session...)
    expected: Counter = field(default_factory=Counter)
    lost_good_lines: int = 0
    invented_entries: int = 0
    #: oracle violations other than lost lines, by kind
    violations: Counter = field(default_factory=Counter)

    def guard(self, where: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn``; record an exception (library or not) and return None for it."""
        try:
            return fn()
        except AptmemError as exc:
            self.expected[type(exc).__name__] += 1
        except RecursionError as exc:  # before Exception: say where the recursion was
            self.unexpected.append((type(exc).__name__, f"{where}: {_short(exc)}"))
        except Exception as exc:  # noqa: BLE001 - any other exception is the finding
            self.unexpected.append((type(exc).__name__, f"{where}: {_short(exc)}"))
        return None

    def violation(self, kind: str) -> None:
        """Record one oracle violation of ``kind``."""
        self.violations[kind] += 1


def _short(exc: BaseException) -> str:
    """The exception's message and the innermost frame that raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" [{Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}]" if frames else ""
    return f"{str(exc)[:300]}{where}"


@dataclass
class TargetContext:
    """What the targets share: the estimators (built once) and the line cap of the input."""

    estimators: list[Any]
    cap: int
    #: precise tokenizers are slow on adversarial input (a BPE merge loop over long runs without
    #: spaces): count at most this many characters of each text with them
    precise_chars: int = 4_000


# -- reader ----------------------------------------------------------------------------------------


def _reader(data: bytes, work: Path, ctx: TargetContext) -> Outcome:
    out = Outcome()
    path = work / "input.jsonl"
    path.write_bytes(data)
    expected = lines_that_decode(data, ctx.cap)
    for mode in RECOVERY_MODES:
        out.guard(f"LogScan({mode}, raise)", lambda: list(LogScan(path, mode, ctx.cap)))
        scan = LogScan(path, mode, ctx.cap, raise_errors=False)
        kept = out.guard(f"LogScan({mode})", lambda: list(scan))
        if kept is None:
            continue
        if scan.report.loadable and scan.report.entries != len(kept):
            out.violation("report_entries_miscounted")
        if mode == "skip":
            matched = match_in_order(expected, kept)
            out.lost_good_lines += len(expected) - matched
            out.invented_entries += len(kept) - matched
            if scan.report.good_lines != len(expected):
                out.violation("report_good_lines_miscounted")
        live = out.guard(f"read_live_tail({mode})", lambda: read_live_tail(path, mode, ctx.cap))
        if mode == "skip" and live is not None and live != select_live(kept):
            out.violation("read_live_differs_from_select_live")
        _check_repair(out, data, work, mode, ctx.cap, kept if scan.report.loadable else None)
    return out


def _check_repair(out: Outcome, data: bytes, work: Path, mode: str, cap: int, kept: list | None) -> None:
    """Repair a copy in ``mode``; hold the result to the repair oracles."""
    copy = work / f"repair-{mode}.jsonl"
    copy.write_bytes(data)
    qpath = quarantine_path(copy)
    report = out.guard(f"repair_log({mode})", lambda: repair_log(copy, mode, cap))
    try:
        if report is None:
            return
        repaired = copy.read_bytes()
        if not report.loadable:
            if repaired != data or qpath.exists():
                out.violation("refused_file_changed")
            return
        after = out.guard(f"LogScan(strict) after repair({mode})", lambda: list(LogScan(copy, "strict", cap)))
        if after is None:
            out.violation("repaired_log_not_clean")
        elif kept is not None and after != kept:
            out.violation("repair_kept_other_entries")
        live = out.guard(f"read_live_tail({mode}) after repair", lambda: read_live_tail(copy, mode, cap))
        if after is not None and live is not None and live != select_live(after):
            out.violation("read_live_differs_after_repair")
        pieces = out.guard("quarantine parse", lambda: quarantine_pieces(qpath))
        added = any(action.startswith("added the missing line end") for action in report.actions)
        if pieces is not None and reconstruct(repaired, pieces, added) != data:
            out.violation("quarantine_does_not_reconstruct")
        quarantined = qpath.read_bytes() if qpath.exists() else b""
        again = out.guard(f"repair_log({mode}) again", lambda: repair_log(copy, mode, cap))
        if again is not None and (again.actions or copy.read_bytes() != repaired
                                  or (qpath.read_bytes() if qpath.exists() else b"") != quarantined):
            out.violation("repair_not_idempotent")
    finally:
        copy.unlink(missing_ok=True)
        qpath.unlink(missing_ok=True)


# -- command lines ------------------------------------------------------------------------------------


_parser: list[Any] = []  # the command line's parser, built once: building it costs more than a check


def _command(out: Outcome, argv: list[str]) -> tuple[int | None, str]:
    """Run one ``aptmem`` command's handler in-process; return (exit code or None, stdout)."""
    if not _parser:
        from aptmem.cli import build_parser

        _parser.append(build_parser())
    args = _parser[0].parse_args(argv)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = out.guard(" ".join(argv[:1] + [a for a in argv[1:] if a.startswith("-")]), lambda: int(args.handler(args)))
    return code, stdout.getvalue()


def _fsck(data: bytes, work: Path, ctx: TargetContext) -> Outcome:
    out = Outcome()
    for mode in RECOVERY_MODES:
        path = work / f"fsck-{mode}.jsonl"
        path.write_bytes(data)
        cap = ["--line-cap", str(ctx.cap)]
        code, _ = _command(out, ["fsck", str(path), "--json", "--mode", mode, *cap])
        if code is not None and code not in (0, 1, 2):
            out.violation("fsck_exit_code")
        if path.read_bytes() != data:
            out.violation("fsck_without_repair_changed_the_file")
        code, text = _command(out, ["fsck", str(path), "--json", "--repair", "--mode", mode, *cap])
        if code == 1:
            report = msgspec.json.decode(text.strip().splitlines()[-1]) if text.strip() else {}
            if report.get("loadable"):
                again, _ = _command(out, ["fsck", str(path), "--mode", mode, *cap])
                if again != 0:
                    out.violation("not_clean_after_fsck_repair")
        path.unlink(missing_ok=True)
        quarantine_path(path).unlink(missing_ok=True)
    return out


def _tokens(data: bytes, work: Path, ctx: TargetContext) -> Outcome:
    out = Outcome()
    texts = (data.decode("utf-8", "replace"), data.decode("utf-8", "surrogateescape"), data.decode("latin-1"))
    for estimator in ctx.estimators:
        for text in texts:
            if estimator.tier == "precise":
                text = text[: ctx.precise_chars]
            n = out.guard(f"{estimator.name}.count", lambda: estimator.count(text))
            if n is not None and (not isinstance(n, int) or n < 0 or (n == 0) != (text == "")):
                out.violation("token_count_invalid")
    path = work / "tokens.jsonl"
    path.write_bytes(data)
    _command(out, ["tokens", "--json", "--tier", "rough", str(path)])
    code, text = _command(out, ["tokens", "--json", "--entries", str(path)])
    if code == 0 and text:
        counted = msgspec.json.decode(text.splitlines()[0])
        good = out.guard("LogScan(skip) for tokens", lambda: list(LogScan(path, "skip")))
        if good is not None:
            out.lost_good_lines += max(0, len(good) - counted["entries"])
            out.invented_entries += max(0, counted["entries"] - len(good))
    code, text = _command(out, ["tokens", "--json", "--entries", "--live", str(path)])
    if code == 0 and text:
        counted = msgspec.json.decode(text.splitlines()[0])
        good = out.guard("LogScan(skip) for tokens --live", lambda: list(LogScan(path, "skip")))
        if good is not None and counted["entries"] != len(select_live(good)):
            out.violation("tokens_live_entries_differ")
    path.unlink(missing_ok=True)
    return out


def _import(data: bytes, work: Path, ctx: TargetContext) -> Outcome:

    out = Outcome()
    src = work / "source.jsonl"
    src.write_bytes(data)
    dest = work / "sessions"
    dest.mkdir()
    code, text = _command(out, ["import", "--from", "auto", "--json", str(src), str(dest)])
    written = sorted(dest.iterdir())
    if code is None:
        if written and not out.unexpected:
            out.violation("refused_import_left_files")
        return out
    if code not in (0, 1):
        out.violation("import_exit_code")
        return out
    report = msgspec.json.decode(text.strip().splitlines()[-1])
    # A good JSON line may still be refused by the format's converter (a 'user' line without a
    # message): that is damage reported with a reason naming the format, not a line lost.
    # The NUL bytes of a lost write before a glued-on line are damage of their own, under the
    # same line number as the line after them.
    reasons: dict[int, list[str]] = {}
    for number, reason in zip(report["damaged_lines"], report["damage_reasons"]):
        if not reason.endswith(LOST_WRITE):
            reasons.setdefault(number, []).append(reason.split(": ", 1)[-1])
    refused = {number for number, why in reasons.items() if all(f"{report['format']} " in r for r in why)}
    good = source_lines_that_decode(data)
    lost = [n for n in good if n in reasons and n not in refused]
    if report["torn_tail_line"] in good:
        lost.append(report["torn_tail_line"])
    out.lost_good_lines += len(lost)
    unaccounted = len(good) - len(lost) - len(refused & set(good)) - report["good_lines"]
    out.lost_good_lines += max(0, unaccounted)
    out.invented_entries += max(0, -unaccounted)
    damaged = len(report["damaged_lines"]) + (report["torn_tail_line"] is not None)
    if report["good_lines"] + damaged != report["lines"]:
        out.violation("import_lines_not_accounted_for")
    if (code == 1) != bool(damaged):
        out.violation("import_exit_code_does_not_match_damage")
    logged = out.guard("LogScan(strict) of the imported session", lambda: list(LogScan(Path(report["path"]), "strict")))
    again = out.guard("TranscriptScan again", lambda: list(TranscriptScan(report["format"], src)))
    if logged is not None:
        if len(logged) != report["entries"]:
            out.violation("import_report_miscounts_entries")
        if again is not None and logged != again:
            out.violation("imported_entries_differ_from_scan")
    _usage_check(out, src, report)
    if not src.exists() or src.read_bytes() != data:
        out.violation("import_changed_its_source")
    return out


def _usage_check(out: Outcome, src: Path, report: dict[str, Any]) -> None:
    """``aptmem usage-check`` on a source the import read: the same requests with usage, the same damage."""
    code, text = _command(out, ["usage-check", str(src), "--from", report["format"], "--tiers", "rough:bytes", "--json"])
    if code is None:
        return
    if code not in (0, 1) or (code == 1) != report["damaged"]:
        out.violation("usage_check_exit_code")
        return
    checked = msgspec.json.decode(text.strip().splitlines()[-1])
    if checked["requests"] != report["requests_with_usage"]:
        out.violation("usage_check_requests_differ_from_import")


# -- decode_line ----------------------------------------------------------------------------------------


def _decode_line(data: bytes, work: Path, ctx: TargetContext) -> Outcome:
    out = Outcome()
    lines = data.split(b"\n")[:200]
    for raw in [data, *lines] if len(lines) > 1 else [data]:
        entry = out.guard("decode_line", lambda: decode_line(raw))
        if entry is None:
            continue
        if isinstance(entry, UnknownEntry):
            if entry.raw != raw:
                out.violation("unknown_entry_bytes_altered")
            continue
        encoded = out.guard("encode_entry", lambda: encode_entry(entry))
        if encoded is None:
            out.violation("decoded_entry_does_not_encode")
            continue
        try:
            back = decode_line(encoded)
        except InvalidEntry:
            out.violation("re_encoded_entry_does_not_decode")
            continue
        if back != entry or entry_type(back) != entry_type(entry):
            out.violation("entry_altered_by_round_trip")
    return out


#: Every target: name -> function(bytes, work folder, context) -> Outcome.
TARGETS: dict[str, Callable[[bytes, Path, TargetContext], Outcome]] = {
    "reader": _reader,
    "fsck": _fsck,
    "tokens": _tokens,
    "import": _import,
    "decode_line": _decode_line,
}


def clean_folder(work: Path) -> None:
    """Empty a target's work folder between inputs."""
    for child in work.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
