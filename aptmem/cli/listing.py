"""``aptmem ls --root DIR``: the sessions of a folder, one line each.

Per session: its id, title (from its sidecar, else from a ``metadata`` line), entries, bytes on
disk, the timestamp of its last entry and the tokens of its live context as the next request
would carry them (working memory included; ``--tier``, default medium). A file named like a log
that is not one (a transcript copied in, pretty-printed JSON) is listed with what it is. With
``--json`` one object: ``root``, ``tier`` and ``sessions`` (a list of rows).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os

import msgspec

from aptmem.cli.target import add_root_option, default_root, resolve_name
from aptmem.entries import Metadata
from aptmem.errors import AptmemError, NotASessionError
from aptmem.tokens.base import TIERS

__all__ = ["SessionRow", "register"]


class SessionRow(msgspec.Struct, kw_only=True):
    """One line of ``aptmem ls``."""

    session_id: str
    title: str = ""
    entries: int = 0
    bytes: int = 0
    last_ts: int | None = None
    live_tokens: int | None = None
    damaged_lines: int = 0
    #: why the file could not be listed as a session (it is not a log, its sidecar is damaged...)
    error: str | None = None


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``ls`` command."""
    p = commands.add_parser("ls", help="list the sessions of a folder: id, title, entries, bytes, last entry, live tokens",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_root_option(p)
    p.add_argument("--tier", choices=TIERS, default="medium", help="the tier live tokens are counted with (default: medium)")
    p.add_argument("--tokenizer", default=None, metavar="NAME", help="the precise tokenizer (with --tier precise)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_ls)


def _row(root: str, session_id: str, count: object) -> SessionRow:
    """Read one session's figures (every error is reported in the row, not raised)."""
    from aptmem.cli.context import session_meta
    from aptmem.context.assemble import read_context
    from aptmem.recovery import LogScan
    from aptmem.sessionfile import check_session_log

    target = resolve_name(session_id, root)
    row = SessionRow(session_id=session_id)
    try:
        row.bytes = os.lstat(target.path).st_size
        check_session_log(target.path)
        scan = LogScan(target.path, "skip", raise_errors=False)
        for entry in scan:
            row.last_ts = entry.ts if entry.ts is not None else row.last_ts
            if isinstance(entry, Metadata) and entry.title:
                row.title = entry.title
        row.entries, row.damaged_lines = scan.report.entries, len(scan.report.damaged_lines)
        meta = session_meta(target)
        if meta is not None and meta.title:
            row.title = meta.title
        row.live_tokens = read_context(target.path, meta=meta, count=count).tokens
    except (AptmemError, OSError) as exc:
        row.error = str(exc)
    return row


def _when(ts: int | None) -> str:
    if ts is None:
        return "-"
    try:
        return dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return str(ts)


def run_ls(args: argparse.Namespace) -> int:
    """List every session of the folder; return 0 (2 if the folder is missing)."""
    from aptmem.jsonl_store import JsonlStore
    from aptmem.tokens.factory import get_estimator

    root = args.root or default_root()
    if not os.path.isdir(root):
        raise NotASessionError(root, "no such folder of sessions (give --root DIR, or set $APTMEM_ROOT)")
    estimator = get_estimator(args.tier, args.tokenizer)
    with JsonlStore(root) as store:
        ids = store.sessions()
    rows = [_row(root, sid, estimator.count) for sid in ids]
    if args.json:
        print(msgspec.json.encode({"root": root, "tier": estimator.name, "sessions": rows}).decode())
        return 0
    print(f"{'SESSION':<36}  {'TITLE':<24}  {'ENTRIES':>7}  {'BYTES':>10}  {'LAST ENTRY':<20}  {'LIVE TOKENS':>11}")
    for row in rows:
        if row.error is not None:
            print(f"{row.session_id:<36}  ({row.error})")
            continue
        title = row.title if len(row.title) <= 24 else row.title[:23] + "…"
        print(f"{row.session_id:<36}  {title:<24}  {row.entries:>7}  {row.bytes:>10}  {_when(row.last_ts):<20}  "
              f"{row.live_tokens:>11}")
    print(f"{len(rows)} session{'' if len(rows) == 1 else 's'} in {root}; live tokens by {estimator.name}")
    return 0
