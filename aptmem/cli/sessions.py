"""Session commands: ``cat``, ``stats``, ``new`` and ``continue``.

``cat``, ``stats`` and ``continue`` name a session as every single-session command does: its
log's PATH, or ``--root DIR SESSION_ID`` (:mod:`aptmem.cli.target`). ``new`` creates one in the
folder given by ``--root`` (default: ``$APTMEM_ROOT`` or ``./sessions``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

import msgspec

from aptmem.cli.target import add_root_option, add_target, default_root, resolve
from aptmem.entries import Compaction, encode_entry, entry_type
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.recovery import LogScan
from aptmem.store import RECOVERY_MODES
from aptmem.tailscan import read_live_tail

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``cat``, ``stats``, ``new`` and ``continue`` commands."""
    p = commands.add_parser("cat", help="print every good entry as one canonical JSON line")
    add_target(p)
    p.add_argument("--mode", choices=RECOVERY_MODES, default="skip", help="recovery mode for damage (default: skip)")
    p.add_argument("--live", action="store_true", help="only the live context (from the latest compaction on)")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")
    p.set_defaults(handler=run_cat)

    p = commands.add_parser("stats", help="count entries, compactions, bytes, damage of a session log")
    add_target(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")
    p.set_defaults(handler=run_stats)

    p = commands.add_parser("new", help="create a new empty session and print its id")
    add_root_option(p)
    p.add_argument("--title", default="", help="a title for the session")
    p.add_argument("--model", default=None, help="the model the session talks to")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_new)

    p = commands.add_parser("continue", help="start a new session that inherits an old one's working memory")
    add_target(p, what="the session to continue (the new one is created in its folder)")
    carry = p.add_mutually_exclusive_group()
    carry.add_argument("--with-summary", action="store_true", help="also carry over the old session's latest summary")
    carry.add_argument("--with-history", action="store_true",
                       help="also copy the old session's whole history (it holds the summary already)")
    p.add_argument("--with-recall", metavar="QUERY", default=None,
                   help="seed the new session with what 'aptmem recall QUERY' finds in its folder (1,024 tokens at most)")
    p.add_argument("--title", default=None, help="a title (default: the old session's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_continue)



def run_cat(args: argparse.Namespace) -> int:
    """Write the good entries (or the live context) to stdout, one canonical line each."""
    path = resolve(args.target, args.root, cap=args.line_cap).path
    out = sys.stdout.buffer
    if args.live:
        for entry in read_live_tail(path, args.mode, args.line_cap):
            out.write(encode_entry(entry) + b"\n")
        out.flush()
        return 0
    scan = LogScan(path, args.mode, args.line_cap)
    for entry in scan:
        out.write(encode_entry(entry) + b"\n")
    out.flush()
    report = scan.report
    if not report.clean:
        print(f"aptmem: {path}: skipped damage: {report.damaged_count} damaged line(s), a torn tail of "
              f"{report.torn_tail_bytes} bytes (run 'aptmem fsck' for details)", file=sys.stderr)
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Print size figures of one log: entries by type, compactions, live context, damage."""
    path = resolve(args.target, args.root, cap=args.line_cap).path
    scan = LogScan(path, "skip", args.line_cap, raise_errors=False)
    by_type: Counter[str] = Counter()
    first_ts = last_ts = None
    for entry in scan:
        by_type[entry_type(entry)] += 1
        if entry.ts is not None:
            first_ts = entry.ts if first_ts is None else first_ts
            last_ts = entry.ts
    report = scan.report
    live = read_live_tail(path, "skip", args.line_cap)
    stats = {
        "file": str(path),
        "entries": report.entries,
        "by_type": dict(sorted(by_type.items())),
        "compactions": sum(n for t, n in by_type.items() if t in ("compaction", "compaction_marker")),
        "live_entries": len(live),
        "live_starts_with_compaction": bool(live) and isinstance(live[0], Compaction),
        "bytes_on_disk": path.stat().st_size,
        "first_ts": first_ts,
        "last_ts": last_ts,
        "damaged_lines": report.damaged_count,
        "torn_tail_bytes": report.torn_tail_bytes,
    }
    if args.json:
        print(msgspec.json.encode(stats).decode())
        return 0
    print(f"{path}")
    print(f"  entries        {stats['entries']}  ({', '.join(f'{t} {n}' for t, n in stats['by_type'].items()) or 'none'})")
    print(f"  compactions    {stats['compactions']}")
    print(f"  live context   {stats['live_entries']} entries")
    print(f"  bytes on disk  {stats['bytes_on_disk']}")
    if not report.clean:
        print(f"  damage         {stats['damaged_lines']} damaged lines, torn tail {stats['torn_tail_bytes']} bytes (see 'aptmem fsck')")
    return 0


def run_new(args: argparse.Namespace) -> int:
    """Create an empty session with its working-memory sidecar; print the id."""
    from aptmem.continuation import create_session
    from aptmem.jsonl_store import JsonlStore

    with JsonlStore(args.root or default_root()) as store:
        session_id = create_session(store, title=args.title, model=args.model)
    _print_id(args, session_id, path=str(store.path(session_id)))
    return 0


def run_continue(args: argparse.Namespace) -> int:
    """Create a session that continues OLD_ID; print the new id."""
    from aptmem.continuation import continue_session
    from aptmem.jsonl_store import JsonlStore

    old = resolve(args.target, args.root, need_id=True)
    assert old.root is not None and old.session_id is not None  # need_id
    recalled = None
    if args.with_recall:
        from aptmem.recall import recall

        recalled = recall(args.with_recall, root=old.root).text or None
    with JsonlStore(old.root) as store:
        session_id = continue_session(store, old.root, old.session_id, with_summary=args.with_summary,
                                      with_history=args.with_history, title=args.title, recalled=recalled)
    _print_id(args, session_id, path=str(store.path(session_id)), parent=old.session_id)
    return 0


def _print_id(args: argparse.Namespace, session_id: str, **extra: str) -> None:
    if args.json:
        print(msgspec.json.encode({"session_id": session_id, **extra}).decode())
    else:
        print(session_id)
