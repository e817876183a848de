"""The ``rewrite`` way to persist a compaction of a JSONL log, byte for byte.

The new file is, in this order: the lines no summary stands for (metadata, unknown types) that
the compaction does not keep, the compaction line, and the kept lines. Every line that stays is
copied as it is on disk (never decoded and encoded again, so fields this version does not know
survive), with only a missing final line end added and a BOM dropped. What leaves the file is
either summarized (conversation, and older compactions whose summaries the new one folds in),
or damage (damaged lines, a torn tail, lines over the cap), which goes to the quarantine first,
durably, before the atomic replace. The caller holds the session's writer lock.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from aptmem.fsutil import atomic_write, open_read, sweep_temp_files
from aptmem.logreader import LogLine, iter_lines, open_log
from aptmem.quarantine import QuarantineBatch, fingerprint
from aptmem.recovery import PieceMerger, copy_range
from aptmem.store import CompactionWrite, CompactionWritten, summarizable

__all__ = ["rewrite_compacted"]

_BOM = b"\xef\xbb\xbf"


def rewrite_compacted(path: str | os.PathLike[str], live: list[LogLine], write: CompactionWrite, marker_line: bytes,
                      cap: int) -> CompactionWritten:
    """Replace the log at ``path`` by the compaction ``write`` of its live lines ``live``.

    ``live`` holds the lines of the live context (as :func:`aptmem.tailscan.live_tail_lines`
    read them under the lock); its last ``write.kept`` are kept. Returns what left the file and
    where it went (``summarized`` is left for the caller, who knows the live context).
    """
    kept = {line.offset for line in live[len(live) - write.kept :]} if write.kept else set()
    out = CompactionWritten(persist="rewrite", kept=write.kept, summarized=0)
    sweep_temp_files(path)
    fd = open_read(path)
    try:
        size = os.fstat(fd).st_size
        out.bytes_before = size
        batch = QuarantineBatch(path, fd, "compaction", fingerprint(fd, "compaction", tuple(sorted(kept))))
        try:
            atomic_write(path, _lines(path, fd, cap, kept, marker_line, batch, out), before_commit=lambda: batch.commit(size))
        except BaseException:
            batch.abort()
            raise
    finally:
        os.close(fd)
    out.quarantined, out.quarantined_bytes = batch.pieces, batch.bytes
    out.quarantine_path = str(batch.path) if batch.pieces else None
    out.bytes_after = os.path.getsize(path)
    return out


def _lines(path: str | os.PathLike[str], fd: int, cap: int, kept: set[int], marker: bytes, batch: QuarantineBatch,
           out: CompactionWritten) -> Iterator[bytes]:
    """The new file's bytes, streamed; damage is moved to ``batch`` on the way (merged when adjacent)."""
    placed = False
    merger = PieceMerger("removed by a rewrite compaction: ")
    with open_log(path) as stream:
        for line in iter_lines(stream, cap):
            if line.kind == "damaged":
                if (piece := merger.add(line)) is not None:
                    batch.add(*piece)
                continue
            if line.kind == "blank":
                out.removed_bytes += line.length
                continue
            if line.offset in kept:
                if not placed:
                    placed = True
                    yield marker
                yield from _line_bytes(fd, line)
            elif summarizable(line.entry):  # type: ignore[arg-type]
                out.removed_entries += 1
                out.removed_bytes += line.length
            else:
                out.carried += 1
                yield from _line_bytes(fd, line)
    if (piece := merger.close()) is not None:
        batch.add(*piece)
    if not placed:
        yield marker


def _line_bytes(fd: int, line: LogLine) -> Iterator[bytes]:
    """A good line's bytes as on disk (a BOM left out, a missing line end added)."""
    start, stop = line.offset, line.offset + line.length
    if start == 0 and os.pread(fd, len(_BOM), 0) == _BOM:
        start = len(_BOM)
    yield from copy_range(fd, start, stop)
    if not line.terminated:
        yield b"\n"

