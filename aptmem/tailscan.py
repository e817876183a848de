"""Fast resume: read a log's live context by scanning backwards from the end.

The live context starts at the latest compaction (and, for a compaction that was appended, at
the entry it names as the first kept one, which stands before it). Reading backwards in blocks
finds that point after reading only the tail, so resuming a long session costs the size of its
live context, not of its history.

Only the lines read are checked: damage before the live window is ``recover``'s business.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from aptmem.entries import Compaction, Entry
from aptmem.errors import CorruptLogError
from aptmem.logreader import DEFAULT_LINE_CAP, LogLine, classify_segments, open_log, over_cap_reason

__all__ = ["read_live_tail", "iter_lines_reversed"]

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
    newest_first: list[Entry] = []
    marker_at: int | None = None  # index in newest_first of the latest compaction
    wanted: str | None = None
    seen_good = False
    for line in iter_lines_reversed(path, cap):
        if line.kind == "blank":
            continue
        if line.kind == "damaged":
            tail = not seen_good and line.tail_eligible
            if mode == "strict" or (mode == "truncate_tail" and not tail):
                raise CorruptLogError(os.fspath(path), _line_number(path, line.offset), line.offset, f"{line.reason} (recovery mode {mode!r})")
            if mode == "point_in_time":
                # Everything after the damage is not part of the point-in-time state.
                newest_first.clear()
                marker_at = None
                wanted = None
            continue
        seen_good = True
        entry = line.entry
        assert entry is not None
        newest_first.append(entry)
        if marker_at is None and isinstance(entry, Compaction):
            marker_at = len(newest_first) - 1
            wanted = entry.first_kept
            # Keep scanning back for first_kept even if a later entry has the same id: ids may
            # repeat, and the kept entry is the latest one *before* the marker (select_live).
            if wanted is None:
                break
        elif wanted is not None and entry.id == wanted:
            break
    entries = newest_first[::-1]
    if marker_at is None:
        return entries
    index = len(entries) - 1 - marker_at
    marker = entries[index]
    assert isinstance(marker, Compaction)
    before = entries[:index]
    if before and (marker.first_kept is None or before[0].id != marker.first_kept):
        before = []  # the named entry was not found: only what follows the compaction is live
    # An older compaction among the kept entries is superseded: the latest summary took it in.
    before = [e for e in before if not isinstance(e, Compaction)]
    return [marker, *before, *entries[index + 1 :]]


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
