"""The memory bound under a line far longer than the cap: a multi-GB line with no newline.

The file is sparse (a short head, a hole, a short tail, no line end), so a line of gigabytes
costs neither disk space nor time to make, and the parent never holds it. Each reader runs in
a fresh interpreter (``python -m experiments.measurements.fuzz.big_line READER PATH CAP``) that measures its own
peak RSS (``VmHWM``) and tracemalloc peak around the read, so one reader's garbage is not
charged to the next and the harness's own memory is not charged to any.

The bound a reader is held to is ``2 * cap + slack``: one cap for the longest line it may hold,
one more because CPython's ``BufferedReader.readline(limit)`` gathers a long line in pieces and
joins them (a transient second copy), and a slack for the interpreter's own churn.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["READERS", "effective_cap", "make_big_line", "measure_reader", "memory_bound"]

#: The readers measured, each a way a user meets a huge line: scan (LogScan skip), tail
#: (read_live_tail), fsck (the command's check), repair (repair_log skip: the line goes to the
#: quarantine in chunks), tokens_entries (``aptmem tokens --entries``), import_source (the
#: importers' line reader, :class:`~aptmem.importers.base.SourceReader`, that ``aptmem import``
#: and ``aptmem usage-check`` read a transcript with).
READERS = ("scan", "tail", "fsck", "repair", "tokens_entries", "import_source")

_HEAD = b'{"type":"user","content":"first","ts":1}\n{"type":"user","ts":2,"content":"'
_TAIL = b'...the end"}'


def make_big_line(path: Path, size: int) -> int:
    """Write a sparse session file of ``size`` bytes: one good line, then one line of the rest, unterminated.

    Returns the length of the long line in bytes.
    """
    with open(path, "wb") as fh:
        fh.write(_HEAD)
        fh.truncate(max(size - len(_TAIL), len(_HEAD)))  # the hole: reads as NUL bytes, takes no disk
        fh.seek(0, os.SEEK_END)
        fh.write(_TAIL)
    return os.path.getsize(path) - _HEAD.index(b"\n") - 1


def effective_cap(reader: str, cap: int) -> int:
    """The cap a reader really reads with: ``aptmem tokens`` and ``aptmem import`` have no cap option,
    so they use the default."""
    from aptmem.logreader import DEFAULT_LINE_CAP

    return DEFAULT_LINE_CAP if reader in ("tokens_entries", "import_source") else cap


def memory_bound(cap: int, slack_bytes: int) -> int:
    """The most a reader may add to its process's peak RSS reading the file (see the module doc)."""
    return 2 * cap + slack_bytes


def _read(reader: str, path: str, cap: int) -> dict[str, Any]:
    """Do one reader's work on ``path``; return what it found (small, for a sanity check)."""
    import contextlib
    import io

    if reader == "scan":
        from aptmem.recovery import LogScan

        report = LogScan(path, "skip", cap, raise_errors=False).run()
        return {"entries": report.entries, "torn_tail_bytes": report.torn_tail_bytes}
    if reader == "tail":
        from aptmem.tailscan import read_live_tail

        return {"entries": len(read_live_tail(path, "skip", cap))}
    if reader == "repair":
        from aptmem.recovery import quarantine_path, repair_log

        report = repair_log(path, "skip", cap)
        quarantine_path(path).unlink(missing_ok=True)  # gigabytes of copied hole: not kept
        return {"entries": report.entries, "torn_tail_bytes": report.torn_tail_bytes}
    if reader == "import_source":
        from aptmem.importers.base import ImportReport, SourceReader

        source = ImportReport(format="claude-code", source=path)
        good = sum(1 for _ in SourceReader(path, source, cap=cap))
        return {"good_lines": good, "torn_tail_bytes": source.torn_tail_bytes}
    from aptmem.cli import build_parser

    argv = ["fsck", path, "--json", "--line-cap", str(cap)] if reader == "fsck" else ["tokens", "--json", "--entries", path]
    args = build_parser().parse_args(argv)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = args.handler(args)
    return {"exit": code, "output": out.getvalue().strip().splitlines()[-1][:300]}


def _child(reader: str, path: str, cap: int) -> None:
    """The child's whole life: import, measure one read, print one JSON line."""
    from experiments.core.procmem import measure

    # Import what the read needs before the baseline, so the code is not counted as data.
    import aptmem.cli  # noqa: F401
    import aptmem.importers.base  # noqa: F401
    import aptmem.recovery  # noqa: F401
    import aptmem.tailscan  # noqa: F401
    import aptmem.tokens.factory  # noqa: F401

    result, measured = measure(lambda: _read(reader, path, cap), trace=True)
    print(msgspec.json.encode({"reader": reader, "result": result, **msgspec.to_builtins(measured)}).decode())


def measure_reader(reader: str, path: Path, cap: int, timeout: float) -> dict[str, Any]:
    """Run one reader on ``path`` in a fresh interpreter; return its measurement."""
    from experiments.core.children import run_module

    line = run_module("experiments.measurements.fuzz.big_line", [reader, str(path), str(cap)], timeout=timeout)
    return msgspec.json.decode(line)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2], int(sys.argv[3]))
