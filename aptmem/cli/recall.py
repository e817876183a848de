"""Recall commands: ``index`` (bring a root's recall index up to date) and ``recall`` (search it).

``recall`` catches the index up first (cheap when nothing changed), so it always answers from
the sessions as they are on disk. ``--json`` prints one object ``{"results": [{"session_id",
"entry_id", "level", "score", "text"}, ...]}``; entries without an id are named ``@N``, their
position among the log's good entries, and sidecar records ``meta``. Exit codes: 0 done, 1 some
session could not be read (its old records are kept and it is retried next time), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from aptmem.cli.target import add_root_option, default_root

__all__ = ["register"]


def _seconds(text: str) -> float:
    """A duration of 0 seconds or more, for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r}: must be 0 or more")
    return value


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``index`` and ``recall`` commands."""
    from aptmem.recall.engines import DEFAULT_ENGINE, ENGINES

    p = commands.add_parser("index", help="bring the recall index of a folder of sessions up to date")
    add_root_option(p)
    p.add_argument("--rebuild", action="store_true", help="delete the index (even a damaged one) and index every session afresh")
    p.add_argument("--verify", action="store_true", help="re-read every log, even those whose file did not change")
    p.add_argument("--engine", action="append", choices=sorted(ENGINES), default=None,
                   help=f"an engine to maintain (repeatable; default: {DEFAULT_ENGINE} and those already maintained)")
    p.add_argument("--facts", action=argparse.BooleanOptionalAction, default=None,
                   help="also extract facts from the chunks (kept as the index's setting)")
    p.add_argument("--commit-seconds", type=_seconds, default=None, metavar="S",
                   help="commit the work done about every S seconds, between two sessions (default 0.5; 0: after "
                        "each session, the least work a killed run loses, the slowest build)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_index)

    p = commands.add_parser("recall", help="find what past sessions know about a question")
    add_root_option(p)
    p.add_argument("question", metavar="QUESTION", help="what to look for, in any words or language")
    p.add_argument("--k", type=int, default=5, help="how many results (default 5)")
    p.add_argument("--level", choices=("l2", "l3", "all"), default="all",
                   help="l2: session summaries and working memory; l3: history chunks; all (default)")
    p.add_argument("--l3", choices=("chunks", "facts", "both"), default="chunks",
                   help="L3 records: history chunks (default), extracted facts (index with --facts), or both")
    p.add_argument("--engine", choices=sorted(ENGINES), default=None, help=f"search engine (default {DEFAULT_ENGINE})")
    p.add_argument("--budget", type=int, default=None,
                   help="token budget of the text (default 1024; with --json, no budget unless given)")
    p.add_argument("--no-refresh", action="store_true", help="answer from the index as it is, without catching up")
    p.add_argument("--json", action="store_true", help='print {"results": [{"session_id", "entry_id", "level", "score", "text"}]}')
    p.set_defaults(handler=run_recall)



def run_index(args: argparse.Namespace) -> int:
    """Catch the index up (or rebuild it) and print what changed."""
    from aptmem.recall.api import open_index

    from aptmem.recall.engines import get_engine, install_size

    from aptmem.recall.index import COMMIT_SECONDS

    commit_seconds = COMMIT_SECONDS if args.commit_seconds is None else args.commit_seconds
    index = open_index(args.root or default_root(), engines=tuple(args.engine or ()), facts=args.facts, fresh=args.rebuild,
                       commit_seconds=commit_seconds)
    try:
        report = index.verify() if args.verify else index.refresh()
        stats = index.stats()
    finally:
        index.close()
        index.store.close()
    sizes = [install_size(get_engine(name)) for name in stats.engines]
    if args.json:
        print(msgspec.json.encode({"report": report, "index": stats, "install": sizes}).decode())
    else:
        reindexed = [u for u in report.updated if u.reindexed]
        print(f"{stats.path}: {stats.sessions} sessions, {sum(stats.records.values())} records, {stats.bytes} bytes "
              f"(engines {', '.join(stats.engines)}{', facts' if stats.facts else ''})")
        print("  installed for the engines: " + ", ".join(f"{s.engine} {s.bytes / 2**20:.1f} MiB" for s in sizes))
        print(f"  caught up {len(report.updated)} sessions: {report.added} records added, "
              f"{sum(u.removed for u in report.updated)} removed, {len(report.dropped)} sessions dropped")
        for update in reindexed:
            print(f"  re-indexed {update.session_id}: {update.reindexed}")
        for update in report.updated:
            for note in update.notes:
                print(f"  {update.session_id}: {note}")
    for error in report.errors:
        print(f"aptmem: {error}", file=sys.stderr)
    return 1 if report.errors else 0


def run_recall(args: argparse.Namespace) -> int:
    """Search the index (caught up first) and print the packet, or the results as JSON."""
    from aptmem.recall.api import open_index, pack
    from aptmem.recall.engines import DEFAULT_ENGINE

    if args.k < 1:
        raise ValueError("--k must be at least 1")
    index = open_index(args.root or default_root(), engines=(args.engine or DEFAULT_ENGINE,))
    try:
        report = index.refresh() if not args.no_refresh else None
        hits = index.search(args.question, k=args.k, level=args.level, l3=args.l3, engine=args.engine)
    finally:
        index.close()
        index.store.close()
    for error in report.errors if report else ():
        print(f"aptmem: {error} (answered without it)", file=sys.stderr)
    if args.json:
        if args.budget is not None:
            hits = pack(args.question, hits, args.budget).hits
        results = [{"session_id": h.session_id, "entry_id": h.entry_id, "level": h.level, "score": h.score, "text": h.text}
                   for h in hits]
        print(msgspec.json.encode({"results": results}).decode())
    else:
        result = pack(args.question, hits, 1024 if args.budget is None else args.budget)
        print(result.text if result.hits else f"nothing found for: {args.question}")
    return 1 if report is not None and report.errors else 0
