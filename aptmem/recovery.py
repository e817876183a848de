"""Recovery of a JSONL session log, in four modes after RocksDB's WAL recovery modes.

* ``strict``: any damage is an error; nothing changes.
* ``truncate_tail``: a torn last write (an unterminated line, or a zero-filled tail as ext4
  leaves after a power loss) is cut off; damage anywhere else is an error.
* ``point_in_time``: stop at the first damage; everything after it is cut, good lines included.
* ``skip`` (the default): skip every damaged line, keep every good line after it, cut a torn tail.

A repair never destroys bytes: what it removes is first moved to the quarantine beside the log
(:mod:`aptmem.quarantine`), made durable (file and folder), and only then is the log cut
(``ftruncate``) or rewritten atomically. Every repair reports what it did. A line holding
entries separated by old Mac line ends (``\\r`` alone) is refused by every repair: those are
entries, not damage, and quarantining them would empty the log.

Memory is bounded by the line cap whatever the damage: a scan keeps counts, the first
:data:`~aptmem.store.DAMAGE_EXAMPLES` damaged lines and a few lines more; a repair streams the
log a second time instead of remembering where the damage was. Adjacent damaged lines travel to
the quarantine as one piece.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import NamedTuple

from aptmem.entries import Entry
from aptmem.errors import AptmemError, CorruptLogError, StorageError
from aptmem.fsutil import atomic_write, open_append, open_read, sweep_temp_files, write_all
from aptmem.logreader import DEFAULT_LINE_CAP, LogLine, iter_lines, open_log
from aptmem.quarantine import QUARANTINE_SUFFIX, QuarantineBatch, fingerprint, quarantine_path
from aptmem.store import DAMAGE_EXAMPLES, RECOVERY_MODES, RecoveryReport

__all__ = ["DamagePiece", "LogScan", "PieceMerger", "QUARANTINE_SUFFIX", "check_mode", "copy_range", "damage_pieces",
           "repair_log", "quarantine_path"]

_COPY_CHUNK = 1 << 20


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is a recovery mode, else raise ``ValueError`` naming the choices."""
    if mode not in RECOVERY_MODES:
        raise ValueError(f"unknown recovery mode {mode!r}; choose one of {', '.join(RECOVERY_MODES)}")
    return mode


class LogScan:
    """One pass over a log under a recovery mode: iterate it for the entries the mode keeps.

    After the iteration ends, :attr:`report` holds the findings, :attr:`tail_start` the first
    line of the torn tail (None without one) and :attr:`first_damage` the first damaged line.
    With ``raise_errors`` (the default) damage the mode refuses raises :class:`CorruptLogError`
    when it is seen; without it the scan goes on to the end so the report counts every damaged
    line, and yields nothing more.
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
        self.good_lines = 0
        self.size = 0
        self.last_good: LogLine | None = None
        self.first_damage: LogLine | None = None
        self.refused: LogLine | None = None
        self.tail_start: LogLine | None = None
        #: the first damaged line that holds entries between lone ``\r`` line ends
        self.cr_line: LogLine | None = None
        # The trailing run of damage that may be a torn tail (zero-filled or unterminated lines):
        # its first line, its first few lines (to name them if the run turns out to be in the
        # middle), and its count and bytes.
        self._run: list[LogLine] = []
        self._run_count = 0
        self._run_bytes = 0
        self._pending: LogLine | None = None  # the first damaged line since the last good one
        self._middle_bytes = 0

    def __iter__(self) -> Iterator[Entry]:
        report = self.report
        refused = False
        yielding = True
        with open_log(self.path) as stream:
            for line in iter_lines(stream, self.cap):
                self.size = line.offset + line.length
                if line.kind == "blank":
                    continue
                if line.kind == "damaged":
                    if self.first_damage is None:
                        self.first_damage = line
                    if self.cr_line is None and line.cr_entries:
                        self.cr_line = line
                    if self._pending is None:
                        self._pending = line
                    if line.tail_eligible:
                        self._extend_run(line)
                    else:
                        if self._run_count:
                            self._flush_run()
                        self._middle(line)
                    if self.mode == "strict" and not refused:
                        refused, yielding = True, False
                        self._refuse(line)
                    elif self.mode == "point_in_time":
                        yielding = False
                    continue
                # A good line: whatever damage came before it is damage in the middle.
                if self._pending is not None:
                    if self._run_count:
                        self._flush_run()
                    if self.mode == "truncate_tail" and not refused:
                        refused, yielding = True, False
                        self._refuse(self._pending)
                    self._pending = None
                self.good_lines += 1
                self.last_good = line
                if yielding:
                    report.entries += 1
                    yield line.entry  # type: ignore[misc]
                elif self.mode == "point_in_time":
                    report.good_lines_discarded += 1
        self._finish(refused)

    def _extend_run(self, line: LogLine) -> None:
        if len(self._run) < DAMAGE_EXAMPLES:
            self._run.append(line)
        self._run_count += 1
        self._run_bytes += line.length

    def _flush_run(self) -> None:
        """The run of tail-like damage is followed by more: it is damage in the middle."""
        for line in self._run:
            self._middle(line)
        extra = self._run_count - len(self._run)
        if extra:  # lines past the examples: counted only
            self.report.damaged_count += extra
            self._middle_bytes += self._run_bytes - sum(line.length for line in self._run)
        self._run, self._run_count, self._run_bytes = [], 0, 0

    def _middle(self, line: LogLine) -> None:
        """Record one damaged line in the middle: counted, and named while examples last."""
        report = self.report
        report.damaged_count += 1
        self._middle_bytes += line.length
        if len(report.damaged_lines) < DAMAGE_EXAMPLES:
            report.damaged_lines.append(line.number)
            report.damage_reasons.append(f"line {line.number}: {line.reason}")

    def _refuse(self, line: LogLine) -> None:
        """Record that the mode refuses the file at ``line``; raise if asked to."""
        self.refused = line
        self.report.loadable = False
        self.report.refused_line = line.number
        self.report.refused_offset = line.offset
        self.report.error = f"{self.path}:{line.number}: {line.reason} (recovery mode {self.mode!r} refuses damage)"
        if self.raise_errors:
            raise CorruptLogError(self.path, line.number, line.offset, f"{line.reason} (recovery mode {self.mode!r})")

    def _finish(self, refused: bool) -> None:
        """What remains of the trailing damage is the torn tail; fill in the report."""
        report = self.report
        pending = self._pending
        if self._run:
            self.tail_start = self._run[0]
        if self.mode == "truncate_tail" and not refused and pending is not None and pending is not self.tail_start:
            self._refuse(pending)  # damage before the torn tail, with no good line after it
        report.good_lines = self.good_lines
        if self.tail_start is not None:
            report.torn_tail_line = self.tail_start.number
            report.torn_tail_bytes = self.size - self.tail_start.offset
        if self.last_good is not None and not self.last_good.terminated:
            report.missing_final_newline = True
        if not report.loadable:
            report.entries = 0
            report.good_lines_discarded = 0
            return
        if self.mode == "point_in_time" and self.first_damage is not None:
            report.discarded_bytes = self.size - self.first_damage.offset
        else:
            report.discarded_bytes = self._middle_bytes + report.torn_tail_bytes

    def run(self) -> RecoveryReport:
        """Consume the scan without keeping entries and return the report."""
        for _ in self:
            pass
        return self.report


class DamagePiece(NamedTuple):
    """Adjacent damaged lines moved as one piece: the first line's number, the byte range, the
    first line's reason, and how many lines it holds."""

    line: int
    offset: int
    length: int
    reason: str
    lines: int


class PieceMerger:
    """Grows adjacent damaged lines into pieces (lines with bytes between them make two pieces)."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._current: DamagePiece | None = None

    def add(self, line: LogLine) -> DamagePiece | None:
        """Take one damaged line; return the piece it closed, if it does not continue it."""
        current = self._current
        if current is not None and current.offset + current.length == line.offset:
            self._current = current._replace(length=current.length + line.length, lines=current.lines + 1)
            return None
        self._current = DamagePiece(line.number, line.offset, line.length, self.prefix + (line.reason or "damaged"), 1)
        return current

    def close(self) -> DamagePiece | None:
        """The last piece, if any."""
        current, self._current = self._current, None
        return current


def damage_pieces(path: str | os.PathLike[str], cap: int, end: int) -> Iterator[DamagePiece]:
    """Stream the damage before byte ``end`` as pieces (:class:`PieceMerger`). Memory: one line."""
    merger = PieceMerger()
    with open_log(path) as stream:
        for line in iter_lines(stream, cap):
            if line.offset >= end:
                break
            if line.kind == "damaged" and (piece := merger.add(line)) is not None:
                yield piece
    if (piece := merger.close()) is not None:
        yield piece


def copy_range(fd: int, start: int, stop: int) -> Iterator[bytes]:
    """Yield the bytes [start, stop) of ``fd`` in chunks of at most 1 MiB (``pread``)."""
    position = start
    while position < stop:
        chunk = os.pread(fd, min(stop - position, _COPY_CHUNK), position)
        if not chunk:
            raise StorageError(errno.EIO, f"the file ended at byte {position}, before {stop}")
        yield chunk
        position += len(chunk)


def repair_log(path: str | os.PathLike[str], mode: str = "skip", cap: int = DEFAULT_LINE_CAP) -> RecoveryReport:
    """Check a log and repair it as ``mode`` allows; return what was found and done.

    The caller holds the session's writer lock. A mode that refuses the file changes nothing
    and returns a report with ``loadable`` False. A write that fails (a full disk) raises
    :class:`StorageError` naming the log; the log is then unchanged and the quarantine holds no
    partial piece.
    """
    scan = LogScan(path, mode, cap, raise_errors=False)
    report = scan.run()
    if not report.loadable:
        return report
    if scan.cr_line is not None:
        line = scan.cr_line
        report.loadable = False
        report.refused_line, report.refused_offset = line.number, line.offset
        report.error = f"{path}:{line.number}: {line.reason}; nothing was repaired"
        report.actions.append("nothing changed: the log uses old Mac line ends, and its entries are not damage")
        return report
    try:
        _repair(path, scan, mode, cap)
    except AptmemError:
        raise
    except OSError as exc:
        raise StorageError(exc.errno, f"{path}: repair failed, the log is unchanged: {exc.strerror or exc}") from exc
    return report


def _repair(path: str | os.PathLike[str], scan: LogScan, mode: str, cap: int) -> None:
    """Move what ``scan`` found out of the log (into the quarantine first); fill in the report."""
    report = scan.report
    qname = quarantine_path(path).name
    sweep_temp_files(path)
    cut_pit = mode == "point_in_time" and scan.first_damage is not None
    tail = scan.tail_start
    middle = mode == "skip" and report.damaged_count > 0
    fd = open_read(path)
    try:
        batch = QuarantineBatch(path, fd, mode, fingerprint(fd, mode, report.damaged_count, report.torn_tail_bytes))
        try:
            if cut_pit:
                first = scan.first_damage
                assert first is not None
                batch.add(first.number, first.offset, scan.size - first.offset,
                          f"cut by point_in_time: first damage at line {first.number}: {first.reason}",
                          lines=0)  # 0: the lines of the cut are not counted
                batch.commit(scan.size)
                _truncate(path, first.offset)
                report.actions.append(f"cut {scan.size - first.offset} bytes from line {first.number} on "
                                      f"({report.good_lines_discarded} good lines among them) into {qname}")
            elif middle:
                end = tail.offset if tail is not None else scan.size
                atomic_write(path, _without_damage(path, fd, cap, end, batch, tail, report),
                             before_commit=lambda: batch.commit(scan.size))
                shown = ", ".join(map(str, report.damaged_lines[:10])) + (", ..." if report.damaged_count > 10 else "")
                report.actions.append(f"removed {report.damaged_count} damaged lines ({shown}) into {qname}")
            elif tail is not None:
                _quarantine_tail(batch, tail, report)
                batch.commit(scan.size)
                _truncate(path, tail.offset)
        except BaseException:
            batch.abort()
            raise
    finally:
        os.close(fd)
    if tail is not None and not cut_pit:
        report.actions.append(f"cut a torn tail of {report.torn_tail_bytes} bytes from line {report.torn_tail_line} into {qname}")
    report.quarantined = batch.pieces
    if report.missing_final_newline and tail is None and not cut_pit:
        _append_newline(path)
        report.actions.append("added the missing line end after the last entry")
    report.repaired = bool(report.actions)
    report.quarantine_path = str(batch.path) if batch.pieces else None


def _quarantine_tail(batch: QuarantineBatch, tail: LogLine, report: RecoveryReport) -> None:
    batch.add(tail.number, tail.offset, report.torn_tail_bytes, f"torn tail: {tail.reason}")


def _without_damage(path: str | os.PathLike[str], fd: int, cap: int, end: int, batch: QuarantineBatch,
                    tail: LogLine | None, report: RecoveryReport) -> Iterator[bytes]:
    """The log's bytes [0, end) without its damaged pieces, each moved to ``batch`` on the way."""
    position = 0
    for piece in damage_pieces(path, cap, end):
        yield from copy_range(fd, position, piece.offset)
        batch.add(*piece)
        position = piece.offset + piece.length
    yield from copy_range(fd, position, end)
    if tail is not None:
        _quarantine_tail(batch, tail, report)


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

