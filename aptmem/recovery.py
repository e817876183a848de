"""Recovery of a JSONL session log, in four modes after RocksDB's WAL recovery modes.

* ``strict``: any damage is an error; nothing changes.
* ``truncate_tail``: a torn last write (an unterminated line, or a zero-filled tail as ext4
  leaves after a power loss) is cut off; damage anywhere else is an error.
* ``point_in_time``: stop at the first damage; everything after it is cut, good lines included.
* ``skip`` (the default): skip every damaged line, keep every good line after it, cut a torn tail.

A repair never destroys bytes: what it removes is first appended to a quarantine file beside
the log (``<log>.quarantine``), each piece behind a header line that says where it came from and
why, then the log is cut (``ftruncate``) or rewritten atomically. Every repair reports what it did.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from aptmem.entries import Entry, now_ms
from aptmem.errors import CorruptLogError
from aptmem.fsutil import atomic_write, open_append, open_read, write_all
from aptmem.logreader import DEFAULT_LINE_CAP, LogLine, iter_lines, open_log
from aptmem.store import RECOVERY_MODES, RecoveryReport

__all__ = ["LogScan", "QUARANTINE_SUFFIX", "check_mode", "repair_log", "quarantine_path"]

QUARANTINE_SUFFIX = ".quarantine"
_COPY_CHUNK = 1 << 20


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is a recovery mode, else raise ``ValueError`` naming the choices."""
    if mode not in RECOVERY_MODES:
        raise ValueError(f"unknown recovery mode {mode!r}; choose one of {', '.join(RECOVERY_MODES)}")
    return mode


def quarantine_path(log_path: str | os.PathLike[str]) -> Path:
    """Return where a log's removed bytes are kept."""
    return Path(os.fspath(log_path) + QUARANTINE_SUFFIX)


class LogScan:
    """One pass over a log under a recovery mode: iterate it for the entries the mode keeps.

    After the iteration ends, :attr:`report` holds the findings and :attr:`damaged` /
    :attr:`tail` the damaged lines, for a repair. With ``raise_errors`` (the default) damage
    the mode refuses raises :class:`CorruptLogError` when it is seen; without it the scan goes
    on to the end so the report lists every damaged line, and yields nothing more.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str = "skip",
        cap: int = DEFAULT_LINE_CAP,
        *,
        raise_errors: bool = True,
    ) -> None:
        self.path = os.fspath(path)
        self.mode = check_mode(mode)
        self.cap = cap
        self.raise_errors = raise_errors
        self.report = RecoveryReport(path=self.path, mode=mode)
        self.damaged: list[LogLine] = []
        self.tail: list[LogLine] = []
        self.good_lines = 0
        self.size = 0
        self.last_good: LogLine | None = None
        self.first_damage: LogLine | None = None
        self.refused: LogLine | None = None

    def __iter__(self) -> Iterator[Entry]:
        report = self.report
        pending: list[LogLine] = []  # damaged lines since the last good line
        refused: LogLine | None = None
        yielding = True
        with open_log(self.path) as stream:
            for line in iter_lines(stream, self.cap):
                self.size = line.offset + line.length
                if line.kind == "blank":
                    continue
                if line.kind == "damaged":
                    pending.append(line)
                    if self.first_damage is None:
                        self.first_damage = line
                    if self.mode == "strict" and refused is None:
                        refused = line
                        yielding = False
                        self._refuse(line)
                    elif self.mode == "point_in_time":
                        yielding = False
                    continue
                # A good line: whatever damage came before it is damage in the middle.
                if pending:
                    self.damaged.extend(pending)
                    if self.mode == "truncate_tail" and refused is None:
                        refused = pending[0]
                        yielding = False
                        self._refuse(pending[0])
                    pending = []
                self.good_lines += 1
                self.last_good = line
                if yielding:
                    report.entries += 1
                    yield line.entry  # type: ignore[misc]
                elif self.mode == "point_in_time":
                    report.good_lines_discarded += 1
        self._finish(pending, refused)

    def _refuse(self, line: LogLine) -> None:
        """Record that the mode refuses the file at ``line``; raise if asked to."""
        self.refused = line
        self.report.loadable = False
        self.report.refused_line = line.number
        self.report.refused_offset = line.offset
        self.report.error = f"{self.path}:{line.number}: {line.reason} (recovery mode {self.mode!r} refuses damage)"
        if self.raise_errors:
            raise CorruptLogError(self.path, line.number, line.offset, f"{line.reason} (recovery mode {self.mode!r})")

    def _finish(self, pending: list[LogLine], refused: LogLine | None) -> None:
        """Split the trailing damage into torn tail and middle damage; fill in the report."""
        report = self.report
        split = len(pending)
        while split > 0 and pending[split - 1].tail_eligible:
            split -= 1
        self.damaged.extend(pending[:split])
        self.tail = pending[split:]
        if self.mode == "truncate_tail" and refused is None and pending[:split]:
            refused = pending[0]
            self._refuse(pending[0])
        report.good_lines = self.good_lines
        report.damaged_lines = [line.number for line in self.damaged]
        report.damage_reasons = [f"line {line.number}: {line.reason}" for line in self.damaged]
        if self.tail:
            report.torn_tail_line = self.tail[0].number
            report.torn_tail_bytes = self.size - self.tail[0].offset
        if self.last_good is not None and not self.last_good.terminated:
            report.missing_final_newline = True
        if not report.loadable:
            report.entries = 0
            report.good_lines_discarded = 0
            return
        if self.mode == "point_in_time" and self.first_damage is not None:
            report.discarded_bytes = self.size - self.first_damage.offset
        else:
            report.discarded_bytes = sum(line.length for line in self.damaged) + report.torn_tail_bytes

    def run(self) -> RecoveryReport:
        """Consume the scan without keeping entries and return the report."""
        for _ in self:
            pass
        return self.report


def repair_log(path: str | os.PathLike[str], mode: str = "skip", cap: int = DEFAULT_LINE_CAP) -> RecoveryReport:
    """Check a log and repair it as ``mode`` allows; return what was found and done.

    The caller holds the session's writer lock. A mode that refuses the file changes nothing
    and returns a report with ``loadable`` False.
    """
    scan = LogScan(path, mode, cap, raise_errors=False)
    report = scan.run()
    if not report.loadable:
        return report
    qpath = quarantine_path(path)
    if mode == "point_in_time" and scan.first_damage is not None:
        cut = scan.first_damage
        reason = f"cut by point_in_time: first damage at line {cut.number}: {cut.reason}"
        _quarantine(path, qpath, [(cut.number, cut.offset, scan.size - cut.offset, reason)], mode)
        _truncate(path, cut.offset)
        report.quarantined = 1
        report.actions.append(
            f"cut {scan.size - cut.offset} bytes from line {cut.number} on "
            f"({report.good_lines_discarded} good lines among them) into {qpath.name}"
        )
    else:
        middle = scan.damaged if mode == "skip" else []
        pieces = [(line.number, line.offset, line.length, line.reason or "damaged") for line in middle]
        if scan.tail:
            first = scan.tail[0]
            pieces.append((first.number, first.offset, report.torn_tail_bytes, f"torn tail: {first.reason}"))
        if pieces:
            _quarantine(path, qpath, pieces, mode)
            report.quarantined = len(pieces)
        if middle:
            _rewrite_without(path, [(line.offset, line.length) for line in middle], scan.tail[0].offset if scan.tail else scan.size)
            report.actions.append(f"removed {len(middle)} damaged lines ({', '.join(map(str, report.damaged_lines))}) into {qpath.name}")
        elif scan.tail:
            _truncate(path, scan.tail[0].offset)
        if scan.tail:
            report.actions.append(f"cut a torn tail of {report.torn_tail_bytes} bytes from line {report.torn_tail_line} into {qpath.name}")
    if report.missing_final_newline and not scan.tail and not (mode == "point_in_time" and scan.first_damage):
        _append_newline(path)
        report.actions.append("added the missing line end after the last entry")
    report.repaired = bool(report.actions)
    report.quarantine_path = str(qpath) if report.quarantined else None
    return report


class _QuarantineHeader(msgspec.Struct):
    """The header line written before each removed piece in a quarantine file."""

    source: str
    line: int
    offset: int
    length: int
    reason: str
    mode: str
    at: int


_header_encoder = msgspec.json.Encoder()


def _quarantine(path: str | os.PathLike[str], qpath: Path, pieces: list[tuple[int, int, int, str]], mode: str) -> None:
    """Append each piece's bytes (copied in chunks) behind a header to the quarantine file, durably."""
    source = os.fspath(path)
    qfd = open_append(qpath)
    try:
        with io.open(open_read(source), "rb", buffering=0) as src:
            for number, offset, length, reason in pieces:
                header = _QuarantineHeader(os.path.basename(source), number, offset, length, reason, mode, now_ms())
                write_all(qfd, b"#aptmem-quarantine " + _header_encoder.encode(header) + b"\n")
                src.seek(offset)
                left = length
                while left > 0:
                    chunk = src.read(min(left, _COPY_CHUNK))
                    if not chunk:
                        break
                    write_all(qfd, chunk)
                    left -= len(chunk)
                write_all(qfd, b"\n")
        os.fsync(qfd)
    finally:
        os.close(qfd)


def _truncate(path: str | os.PathLike[str], size: int) -> None:
    """Cut the log to ``size`` bytes, durably."""
    fd = open_read(path, writable=True)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def _append_newline(path: str | os.PathLike[str]) -> None:
    """End an unterminated last entry with ``\\n`` so the next append starts a line of its own."""
    fd = open_append(path)
    try:
        write_all(fd, b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def _rewrite_without(path: str | os.PathLike[str], holes: list[tuple[int, int]], end: int) -> None:
    """Rewrite the log atomically keeping bytes [0, end) except the ``holes`` (offset, length)."""

    def chunks() -> Iterator[bytes]:
        with io.open(open_read(path), "rb", buffering=0) as src:
            position = 0
            for offset, length in [*holes, (end, 0)]:
                src.seek(position)
                left = offset - position
                while left > 0:
                    chunk = src.read(min(left, _COPY_CHUNK))
                    if not chunk:
                        break
                    yield chunk
                    left -= len(chunk)
                position = offset + length

    atomic_write(path, chunks())
