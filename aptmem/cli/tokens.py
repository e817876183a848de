"""The ``tokens`` command: count the tokens of files (or stdin) with any tier and tokenizer.

    aptmem tokens README.md                      # medium tier, one line per file
    aptmem tokens --tier precise --json a.txt -  # exact cl100k_base counts, one JSON object per file
    aptmem tokens --entries session.jsonl        # a session: every entry as a model sees it

A file is counted as plain text, exactly as it is. With ``--entries`` each file is a session
log (JSONL): every good entry is counted as :func:`aptmem.tokens.render_entry` renders it, plus
the per-message overhead (damaged lines are skipped and reported as ``damaged_lines``);
``--live`` counts only the live context (from the latest compaction on), i.e. what the next
request would carry. A missing file is one line on stderr; the other files are still counted
and the exit code is 2. An unavailable tokenizer stops before any file is read (exit 2).
"""

from __future__ import annotations

import argparse
import codecs
import io
import sys
import time
from pathlib import Path
from typing import BinaryIO

import msgspec

from aptmem.tokens.base import TIERS

__all__ = ["register"]

_CHUNK = 1 << 20


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``tokens`` command."""
    p = commands.add_parser("tokens", help="count the tokens of files or stdin (rough, medium or precise)")
    p.add_argument("files", nargs="+", metavar="FILE", help="files to count; '-' reads stdin")
    p.add_argument("--tier", choices=TIERS, default="medium", help="estimator tier (default: medium)")
    p.add_argument("--tokenizer", default=None, metavar="NAME",
                   help="precise tokenizer: cl100k_base (default), o200k_base, tekken, mistral:tekken_240911, "
                        "mistral:/path/tekken.json, hf:/path/to/folder, hf:org/name (cached only)")
    p.add_argument("--entries", action="store_true", help="read each file as a session log and count its entries")
    p.add_argument("--live", action="store_true", help="with --entries: only the live context (not for stdin)")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(handler=run_tokens)


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def _open(name: str) -> BinaryIO:
    """A seekable binary stream of a file, or of stdin's bytes (``-``, read once)."""
    if name == "-":
        return io.BytesIO(sys.stdin.buffer.read())
    return open(name, "rb")


def _count_entries(estimator: object, name: str, stream: BinaryIO, live: bool) -> dict[str, int]:
    """Count a session's entries as the log reader sees them, one line at a time.

    The lines are those of :func:`aptmem.logreader.iter_lines`: split on ``\\n`` only (a
    ``\\r`` inside a line is not a line end), a BOM and CRLF tolerated, a line over the cap
    damaged without being held. So the entries counted are exactly the entries a store reads,
    and memory stays bounded by the line cap, not the file.
    """
    from aptmem.logreader import iter_lines
    from aptmem.tokens.render import count_entry

    if live:
        from aptmem.tailscan import read_live_tail

        entries = read_live_tail(name)
        tokens = sum(count_entry(estimator, e) for e in entries)  # type: ignore[arg-type]
        return {"tokens": tokens, "entries": len(entries), "damaged_lines": 0}
    tokens = count = damaged = 0
    for line in iter_lines(stream):  # type: ignore[arg-type]
        if line.kind == "good":
            tokens += count_entry(estimator, line.entry)  # type: ignore[arg-type]
            count += 1
        elif line.kind == "damaged":
            damaged += 1
    return {"tokens": tokens, "entries": count, "damaged_lines": damaged}


def _measure_text(stream: BinaryIO) -> tuple[int, int]:
    """Characters (invalid UTF-8 read as U+FFFD) and bytes of a file, read in chunks."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    chars = size = 0
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        chars += len(decoder.decode(chunk))
    return chars + len(decoder.decode(b"", final=True)), size


def run_tokens(args: argparse.Namespace) -> int:
    """Count every file; print one line (or JSON object) per file; return 0, or 2 if a file failed."""
    from aptmem.tokens.factory import get_estimator

    if args.live and not args.entries:
        raise ValueError("--live needs --entries")
    if args.live and "-" in args.files:
        raise ValueError("--live reads a session file backwards: it cannot read stdin")
    # Built before any file is read: an unavailable tokenizer is reported once, up front.
    estimator = get_estimator(args.tier, args.tokenizer)
    status = 0
    totals = 0
    for name in args.files:
        started = time.perf_counter_ns()
        try:
            if args.entries:
                # A session is streamed, never read whole: a multi-GB line costs one line cap.
                with _open(name) as stream:
                    result = _count_entries(estimator, name, stream, args.live)
                    ended = time.perf_counter_ns()
                    stream.seek(0)
                    chars, size = _measure_text(stream)
            else:
                raw = _read(name)
                # Bytes that are not UTF-8 become U+FFFD, as a model's client would send them.
                text = raw.decode("utf-8", "replace")
                started = time.perf_counter_ns()  # a plain text is timed counting, not reading
                result = {"tokens": estimator.count(text)}
                ended = time.perf_counter_ns()
                chars, size = len(text), len(raw)
        except OSError as exc:
            print(f"aptmem: {name}: {exc.strerror or exc}", file=sys.stderr)
            status = 2
            continue
        seconds = (ended - started) / 1e9
        totals += result["tokens"]
        if args.json:
            row = {"file": name, "tier": estimator.tier, "tokenizer": estimator.tokenizer, "estimator": estimator.name,
                   **result, "chars": chars, "bytes": size, "seconds": round(seconds, 6)}
            print(msgspec.json.encode(row).decode())
        else:
            print(f"{result['tokens']:>10}  {name}")
    if not args.json and len(args.files) > 1:
        print(f"{totals:>10}  total ({estimator.name})")
    return status
