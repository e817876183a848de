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
import sys
import time
from pathlib import Path

import msgspec

from aptmem.tokens.base import TIERS

__all__ = ["register"]


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


def _count_entries(estimator: object, name: str, raw: bytes, live: bool) -> dict[str, int]:
    from aptmem.entries import decode_line
    from aptmem.errors import InvalidEntry
    from aptmem.tokens.render import count_entry

    if live:
        from aptmem.tailscan import read_live_tail

        entries = read_live_tail(name)
        damaged = 0
    else:
        entries, damaged = [], 0
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                entries.append(decode_line(line))
            except InvalidEntry:
                damaged += 1
    tokens = sum(count_entry(estimator, e) for e in entries)  # type: ignore[arg-type]
    return {"tokens": tokens, "entries": len(entries), "damaged_lines": damaged}


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
        try:
            raw = _read(name)
        except OSError as exc:
            print(f"aptmem: {name}: {exc.strerror or exc}", file=sys.stderr)
            status = 2
            continue
        # Bytes that are not UTF-8 become U+FFFD, as a model's client would send them.
        text = raw.decode("utf-8", "replace")
        started = time.perf_counter_ns()
        if args.entries:
            result = _count_entries(estimator, name, raw, args.live)
        else:
            result = {"tokens": estimator.count(text)}
        seconds = (time.perf_counter_ns() - started) / 1e9
        totals += result["tokens"]
        if args.json:
            row = {"file": name, "tier": estimator.tier, "tokenizer": estimator.tokenizer, "estimator": estimator.name,
                   **result, "chars": len(text), "bytes": len(raw), "seconds": round(seconds, 6)}
            print(msgspec.json.encode(row).decode())
        else:
            print(f"{result['tokens']:>10}  {name}")
    if not args.json and len(args.files) > 1:
        print(f"{totals:>10}  total ({estimator.name})")
    return status
