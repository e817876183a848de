"""Fast resume: read a log's live context by scanning backwards from the end.

The live context starts at the latest compaction (and, for a compaction that was appended, at
the entries it keeps, which stand before it: the ``kept_before`` nearest ones that are not
compactions, or for an older writer's compaction from the entry its ``first_kept`` names).
Reading backwards in blocks finds that point after reading only the tail, so resuming a long
session costs the size of its live context, not of its history.

Only the lines read are checked: damage before the live window is ``recover``'s business.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from aptmem.entries import Compaction, Entry
from aptmem.errors import CorruptLogError
from aptmem.fsutil import open_read
from aptmem.logreader import DEFAULT_LINE_CAP, LogLine, classify_segments, open_log, over_cap_reason

__all__ = ["latest_compaction", "live_tail_lines", "read_live_tail", "iter_lines_reversed"]

# A damaged line that still shows a compaction's type tag may be a newer compaction.
_COMPACTION_TAG = re.compile(rb'"type"\s*:\s*"compaction(?:_marker)?"')

_BLOCK = 1 << 16


def iter_lines_reversed(path: str | os.PathLike[str], cap: int = DEFAULT_LINE_CAP) -> Iterator[LogLine]:
    """Yield the lines of a log newest first, classified; ``number`` is -1 (unknown going backwards).

    Memory is bounded by ``cap`` plus one block: a line longer than the cap is reported as
    damage without being held.
    """
    with open_log(path) as stream:
        end = stream.seek(0, os.SEEK_END)
        if end:
            stream.seek(end - 1)
        ends_with_newline = end > 0 and stream.read(1) == b"\n"
        fd = stream.fileno()
        seg_end = end  # exclusive end of the line being assembled, its line end included
        parts: list[bytes] = []  # that line's bytes seen so far, newest block first
        held = 0
        overflow = False
        # Over the cap means the line's bytes without its "\n" exceed the cap, as going forwards.
        limit = cap + (1 if ends_with_newline else 0)
        position = end
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            # pread, not seek + read: the buffered stream would refill its whole (1 MiB) buffer
            # for every block read going backwards, reading 16 times the bytes.
            block = os.pread(fd, step, position)
            upto = len(block)
            while True:
                nl = block.rfind(b"\n", 0, upto)
                if nl >= 0 and position + nl + 1 == seg_end:
                    # This newline ends the line being assembled: it belongs to it.
                    parts.append(block[nl:upto])
                    held += upto - nl
                    upto = nl
                    continue
                piece = block[(nl + 1 if nl >= 0 else 0) : upto]
                if not overflow:
                    parts.append(piece)
                    held += len(piece)
                    if held > limit:
                        overflow, parts = True, []
                if nl < 0:
                    break
                start = position + nl + 1
                yield from _finish(parts, start, seg_end, seg_end < end or ends_with_newline, overflow, cap)
                parts, held, overflow = [], 0, False
                seg_end = start
                limit = cap + 1  # every line before the last one ends with "\n"
                upto = nl + 1
        if seg_end > 0:
            yield from _finish(parts, 0, seg_end, seg_end < end or ends_with_newline, overflow, cap)


def _finish(parts: list[bytes], start: int, seg_end: int, terminated: bool, overflow: bool, cap: int) -> list[LogLine]:
    """Classify one line found going backwards, from its pieces (newest first); newest segment first."""
    length = seg_end - start
    if overflow:
        return [LogLine(-1, start, length, "damaged", terminated, reason=over_cap_reason(cap))]
    body = b"".join(reversed(parts))
    if terminated:
        body = body[:-1]
    if body.endswith(b"\r"):
        body = body[:-1]
    lead = 0
    if start == 0 and body.startswith(b"\xef\xbb\xbf"):
        body, lead = body[3:], 3
    return classify_segments(body, -1, start, length, terminated, lead)[::-1]


def read_live_tail(path: str | os.PathLike[str], mode: str = "skip", cap: int = DEFAULT_LINE_CAP) -> list[Entry]:
    """Return the live context of the log at ``path``, reading backwards only as far as needed.

    Damage met in the lines read is handled as ``mode`` says: ``skip`` passes over it,
    ``point_in_time`` drops what follows it, ``truncate_tail`` accepts it only as a torn tail,
    ``strict`` refuses it.
    """
    return [line.entry for line in live_tail_lines(path, mode, cap)]  # type: ignore[misc]


def live_tail_lines(path: str | os.PathLike[str], mode: str = "skip", cap: int = DEFAULT_LINE_CAP) -> list[LogLine]:
    """The lines of the live context (see :func:`read_live_tail`), in live order, with their offsets.

    A compactor uses the offsets to copy kept lines byte for byte.
    """
    newest_first: list[LogLine] = []
    marker_at: int | None = None  # index in newest_first of the latest compaction
    wanted: str | None = None  # an older compaction's first_kept id
    count: int | None = None  # a compaction's kept_before
    found = False  # whether the entry first_kept names was met
    seen_good = False
    for line in iter_lines_reversed(path, cap):
        if line.kind == "blank":
            continue
        if line.kind == "damaged":
            _damage(path, line, mode, not seen_good and line.tail_eligible)
            if mode == "point_in_time":
                # Everything after the damage is not part of the point-in-time state.
                newest_first.clear()
                marker_at, wanted, count, found = None, None, None, False
            continue
        seen_good = True
        entry = line.entry
        assert entry is not None
        if marker_at is None:
            newest_first.append(line)
            if isinstance(entry, Compaction):
                marker_at = len(newest_first) - 1
                count, wanted = entry.kept_before, entry.first_kept
                if count == 0 or (count is None and wanted is None):
                    break
        elif count is not None:
            if isinstance(entry, Compaction):
                continue  # an older compaction among the kept entries: neither counted nor live
            newest_first.append(line)
            if len(newest_first) - 1 - marker_at == count:
                break
        else:
            # An older compaction inside the window is not live (the latest summary stands for
            # it), but it may still be the entry first_kept names, where the window starts.
            if not isinstance(entry, Compaction):
                newest_first.append(line)
            # Keep scanning back for first_kept even if a later entry has the same id: ids may
            # repeat, and the kept entry is the latest one *before* the marker (select_live).
            if entry.id == wanted:
                found = True
                break
    lines = newest_first[::-1]
    if marker_at is None:
        return lines
    index = len(lines) - 1 - marker_at
    before = lines[:index]
    if count is None and not found:
        before = []  # the named entry was not found: only what follows the compaction is live
    return [lines[index], *before, *lines[index + 1 :]]


def _damage(path: str | os.PathLike[str], line: LogLine, mode: str, tail: bool) -> None:
    """Raise if ``mode`` refuses damage met reading backwards (``tail``: it may be the torn tail)."""
    if mode == "strict" or (mode == "truncate_tail" and not tail):
        raise CorruptLogError(os.fspath(path), _line_number(path, line.offset), line.offset, f"{line.reason} (recovery mode {mode!r})")


def latest_compaction(path: str | os.PathLike[str], mode: str = "skip", cap: int = DEFAULT_LINE_CAP) -> Compaction | None:
    """The latest compaction of the log, reading backwards only until it is found.

    In ``skip`` mode, raises :class:`CorruptLogError` when a damaged line newer than it (not
    the torn tail: a torn write was never acknowledged) still shows a compaction's type tag: it
    may be the latest compaction, damaged. Other damage is handled as ``mode`` says.
    """
    seen_good = False
    for line in iter_lines_reversed(path, cap):
        if line.kind == "damaged":
            tail = not seen_good and line.tail_eligible
            _damage(path, line, mode, tail)
            if mode == "skip" and not tail and line.length <= cap and _looks_like_compaction(path, line):
                raise CorruptLogError(os.fspath(path), _line_number(path, line.offset), line.offset,
                                      "a damaged line newer than the latest good compaction looks like a compaction: "
                                      "the latest summary may be in it (run aptmem fsck)")
        elif line.kind == "good":
            seen_good = True
            if isinstance(line.entry, Compaction):
                return line.entry
    return None


def _looks_like_compaction(path: str | os.PathLike[str], line: LogLine) -> bool:
    """Whether a damaged line's bytes show a compaction's type tag."""
    fd = open_read(path)
    try:
        return _COMPACTION_TAG.search(os.pread(fd, line.length, line.offset)) is not None
    finally:
        os.close(fd)


def _line_number(path: str | os.PathLike[str], offset: int) -> int:
    """Count the 1-based line number at ``offset`` (only on the error path: it reads the prefix)."""
    count = 1
    with open_log(path) as stream:
        left = offset
        while left > 0:
            chunk = stream.read(min(left, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count
