"""``aptmem fsck PATH`` (or ``--root DIR SESSION_ID``): check a session log for damage; ``--repair`` fixes it.

A file that is not a session log at all (an agent's transcript, a ``.meta.json`` sidecar,
pretty-printed JSON: :mod:`aptmem.sessionfile`) is refused with exit 2 before anything is read
on, so ``--repair`` never "repairs" it into an empty log.

With ``--json`` the last line printed is one JSON object: the recovery report (``entries``,
``damaged_count``, ``damaged_lines`` (the first 1,000 of them), ``torn_tail_bytes``, ``loadable``,
``repaired``, ``quarantined``, ...) plus
``file``, ``clean``, ``file_mode`` (e.g. ``"0600"``), ``file_mode_ok`` (False when group or
others may read or write it: session files are 0600) and ``warnings`` (one line each). Exit 0 when
the file is clean, 1 when damage was found (repaired or not), 2 on bad usage or input that is not
a session. A loose file mode is a warning, not damage: it does not change the exit code.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

import msgspec

from aptmem.cli.target import add_target, resolve
from aptmem.ids import is_session_id
from aptmem.locking import SessionLock
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.recovery import LogScan, repair_log
from aptmem.store import RECOVERY_MODES, RecoveryReport

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``fsck`` command."""
    p = commands.add_parser("fsck", help="check a session log for damage; --repair fixes it", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target(p)
    p.add_argument("--mode", choices=RECOVERY_MODES, default="skip", help="recovery mode (default: skip)")
    p.add_argument("--repair", action="store_true", help="repair as the mode allows (removed bytes go to PATH.quarantine)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check (and maybe repair) one log; print the findings; return the exit code."""
    # Refused before any repair (exit 2): "repairing" a file that is not a session would empty it.
    path = resolve(args.target, args.root, cap=args.line_cap).path
    report = LogScan(path, args.mode, args.line_cap, raise_errors=False).run()
    if args.repair:
        with _writer_lock(path):
            report = repair_log(path, args.mode, args.line_cap)
    good_lines = report.good_lines
    mode_bits = stat.S_IMODE(os.lstat(path).st_mode)
    warnings = [_mode_warning(mode_bits)] if mode_bits & 0o077 else []
    if args.json:
        out = msgspec.to_builtins(report)
        out.update(file=str(path), clean=report.clean, file_mode=f"{mode_bits:04o}", file_mode_ok=not warnings,
                   warnings=warnings)
        sys.stdout.write(msgspec.json.encode(out).decode() + "\n")
    else:
        _print_human(path, report, good_lines, warnings)
    return 0 if report.clean else 1


def _mode_warning(mode_bits: int) -> str:
    """The warning for a session file that group or others may read or write."""
    return f"file mode is {mode_bits:04o}; session files should be 0600 (chmod 600 fixes it)"


def _print_human(path: Path, report: RecoveryReport, good_lines: int, warnings: list[str]) -> None:
    """Print the report for a person: what was found, what the mode keeps, what was done."""
    if report.clean:
        print(f"{path}: clean, {report.entries} entries")
    else:
        found = []
        if report.damaged_count:
            found.append(f"{_plural(report.damaged_count, 'damaged line')} ({_short_list(report.damaged_lines, report.damaged_count)})")
        if report.torn_tail_bytes:
            found.append(f"a torn tail of {report.torn_tail_bytes} bytes at line {report.torn_tail_line}")
        print(f"{path}: {' and '.join(found)}; {_plural(good_lines, 'good line')}")
        for reason in report.damage_reasons[:20]:
            print(f"  {reason}")
        if report.damaged_count > 20:
            print(f"  ... and {report.damaged_count - 20} more damaged lines")
        if report.loadable:
            print(f"  mode {report.mode}: keeps {report.entries} entries, discards {report.discarded_bytes} bytes")
        else:
            print(f"  mode {report.mode}: refuses the file: {report.error}")
    for action in report.actions:
        print(f"  repaired: {action}")
    if not report.clean and not report.repaired and report.loadable:
        print("  (nothing changed; run with --repair to fix)")
    for warning in warnings:
        print(f"  warning: {warning}")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _short_list(numbers: list[int], total: int, limit: int = 10) -> str:
    shown = ", ".join(map(str, numbers[:limit]))
    return shown + (f", ... ({total - limit} more)" if total > limit else "")


class _writer_lock:
    """Hold the session's writer lock during a repair when the file sits in a sessions folder."""

    def __init__(self, path: Path) -> None:
        stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else ""
        self.lock = SessionLock(path.with_name(stem + ".lock")) if is_session_id(stem) else None

    def __enter__(self) -> None:
        if self.lock is not None:
            self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        if self.lock is not None:
            self.lock.close()  # unlocks and frees the descriptor: one repair, one lock
