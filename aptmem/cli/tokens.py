"""The ``tokens`` command: count the tokens of files (or stdin) with any tier and tokenizer.

    aptmem tokens README.md                      # plain text: medium tier, one line per file
    aptmem tokens sessions/<id>.jsonl            # a session: its entries as the model is sent them
    aptmem tokens --tier precise --json a.txt -  # exact cl100k_base counts, one JSON object per file

What is counted, and every line says which (``counted`` in ``--json``):

* ``entries``: a file that is a session log (:mod:`aptmem.sessionfile`) is counted as the model
  is sent its entries (:func:`aptmem.tokens.count_entries`: the messages with their framing, not
  the JSON bytes of the lines); damaged lines are skipped and reported as ``damaged_lines``;
* ``live``: with ``--live``, only the live context of a session (from the latest compaction on),
  i.e. what the next request would carry;
* ``text``: any other file, stdin, or anything with ``--text``, counted as it is.

``--entries`` insists that each file be a session log. An agent's transcript (Claude Code, pi) is
refused unless ``--text``: ``aptmem import`` makes a session of it. With ``--root DIR`` each FILE
is a session id in DIR (a bare id names a session of ``$APTMEM_ROOT`` or ``./sessions``). A file
that cannot be counted is one line on stderr; the other files are still counted and the exit
code is 2. An unavailable tokenizer stops before any file is read.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import sys
import time
from typing import BinaryIO

import msgspec

from aptmem.errors import AptmemError
from aptmem.tokens.base import TIERS

__all__ = ["register"]

_CHUNK = 1 << 20


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``tokens`` command."""
    p = commands.add_parser("tokens", help="count the tokens of files, sessions or stdin (rough, medium or precise)",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE", help="files to count; '-' reads stdin; with --root, session ids")
    p.add_argument("--root", default=None, metavar="DIR", help="the folder of sessions: each FILE is a SESSION_ID in it")
    p.add_argument("--tier", choices=TIERS, default="medium", help="estimator tier (default: medium)")
    p.add_argument("--tokenizer", default=None, metavar="NAME",
                   help="precise tokenizer: cl100k_base (default), o200k_base, tekken, mistral:tekken_240911, "
                        "mistral:/path/tekken.json, hf:/path/to/folder, hf:org/name (cached only)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--entries", action="store_true", help="each file must be a session log: count its entries as sent")
    how.add_argument("--text", action="store_true", help="count every file as plain text, sessions too")
    p.add_argument("--live", action="store_true", help="a session's live context only (not with --text, not for stdin)")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(handler=run_tokens)


def _open(name: str) -> BinaryIO:
    """A seekable binary stream of a file, or of stdin's bytes (``-``, read once)."""
    if name == "-":
        return io.BytesIO(sys.stdin.buffer.read())
    return open(name, "rb")


def _is_session(name: str, args: argparse.Namespace) -> bool:
    """Whether to count ``name`` as a session (raises for a transcript, or for a non-log with --entries)."""
    from aptmem.errors import NotASessionLogError
    from aptmem.importers.converter import FORMATS
    from aptmem.sessionfile import SESSION, sniff_log

    if args.text or (name == "-" and not args.entries):
        return False
    if name == "-":
        return True
    if not args.entries and not os.path.isfile(name):
        return False  # missing, a folder: reading it as text says so in the system's own words
    kind, reason = sniff_log(name)
    if kind == SESSION:
        return True
    if args.entries or kind in FORMATS:
        raise NotASessionLogError(name, kind, reason + ("; 'aptmem tokens --text' counts its bytes as text"
                                                        if kind in FORMATS else ""))
    return False


def _count_entries(estimator: object, name: str, stream: BinaryIO, live: bool) -> dict[str, int]:
    """Count a session's entries as the model is sent them, one line at a time.

    The lines are those of :func:`aptmem.logreader.iter_lines`: split on ``\\n`` only (a
    ``\\r`` inside a line is not a line end), a BOM and CRLF tolerated, a line over the cap
    damaged without being held. So the entries counted are exactly the entries a store reads,
    and memory stays bounded by the line cap plus the rendering's bookkeeping.
    """
    from aptmem.context.render import ContextBuilder
    from aptmem.logreader import iter_lines

    builder = ContextBuilder(count=estimator.count)  # type: ignore[attr-defined]
    if live:
        from aptmem.tailscan import read_live_tail

        entries = read_live_tail(name)
        builder.extend(entries)
        return {"tokens": builder.total, "entries": len(entries), "damaged_lines": 0}
    count = damaged = 0
    for line in iter_lines(stream):  # type: ignore[arg-type]
        if line.kind == "good":
            builder.add(line.entry)  # type: ignore[arg-type]
            count += 1
        elif line.kind == "damaged":
            damaged += 1
    return {"tokens": builder.total, "entries": count, "damaged_lines": damaged}


def _measure_text(stream: BinaryIO) -> tuple[int, int]:
    """Characters (invalid UTF-8 read as U+FFFD) and bytes of a file, read in chunks."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    chars = size = 0
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        chars += len(decoder.decode(chunk))
    return chars + len(decoder.decode(b"", final=True)), size


def _count_one(estimator: object, name: str, args: argparse.Namespace) -> dict[str, object]:
    """The figures of one file: tokens, what was counted, characters, bytes, seconds."""
    session = _is_session(name, args)
    if args.live and not session:
        raise ValueError(f"{name}: --live counts a session's live context, and this is counted as text")
    with _open(name) as stream:
        started = time.perf_counter_ns()
        if session:
            # A session is streamed, never read whole: a multi-GB line costs one line cap.
            result: dict[str, object] = {**_count_entries(estimator, name, stream, args.live),
                                         "counted": "live" if args.live else "entries"}
            ended = time.perf_counter_ns()
            stream.seek(0)
            chars, size = _measure_text(stream)
        else:
            raw = stream.read()
            # Bytes that are not UTF-8 become U+FFFD, as a model's client would send them.
            text = raw.decode("utf-8", "replace")
            started = time.perf_counter_ns()  # a plain text is timed counting, not reading
            result = {"tokens": estimator.count(text), "counted": "text"}  # type: ignore[attr-defined]
            ended = time.perf_counter_ns()
            chars, size = len(text), len(raw)
    return {**result, "chars": chars, "bytes": size, "seconds": round((ended - started) / 1e9, 6)}


def _what(row: dict[str, object]) -> str:
    if row["counted"] == "text":
        return "text"
    return f"{row['counted']}: {row['entries']} entries as sent"


def run_tokens(args: argparse.Namespace) -> int:
    """Count every file; print one line (or JSON object) per file; return 0, or 2 if a file failed."""
    from aptmem.cli import one_line
    from aptmem.cli.target import resolve_name
    from aptmem.tokens.factory import get_estimator

    if args.live and args.text:
        raise ValueError("--live counts a session's live context: it cannot go with --text")
    if args.live and "-" in args.files:
        raise ValueError("--live reads a session file backwards: it cannot read stdin")
    # Built before any file is read: an unavailable tokenizer is reported once, up front.
    estimator = get_estimator(args.tier, args.tokenizer)
    status = 0
    totals = 0
    for given in args.files:
        name = given
        try:
            name = given if given == "-" else str(resolve_name(given, args.root).path)
            row = _count_one(estimator, name, args)
        except OSError as exc:
            print(f"aptmem: {name}: {exc.strerror or exc}", file=sys.stderr)
            status = 2
            continue
        except (AptmemError, ValueError) as exc:  # not a session where one is needed, a bad id
            print(f"aptmem: {one_line(str(exc))}", file=sys.stderr)
            status = 2
            continue
        totals += row["tokens"]  # type: ignore[operator]
        if args.json:
            print(msgspec.json.encode({"file": name, "tier": estimator.tier, "tokenizer": estimator.tokenizer,
                                       "estimator": estimator.name, **row}).decode())
        else:
            print(f"{row['tokens']:>10}  {name}  ({_what(row)})")
    if not args.json and len(args.files) > 1:
        print(f"{totals:>10}  total ({estimator.name})")
    return status
