"""The ``import`` command: a Claude Code or pi transcript becomes an aptmem session.

    aptmem import --from claude-code ~/.claude/projects/p/<id>.jsonl sessions/ [--json]

The mapping of each format is documented in :mod:`aptmem.importers.claude_code` and
:mod:`aptmem.importers.pi`. With ``--json`` the last line printed is one object: the import
report (``entries`` written, ``skipped`` by reason, ``session_id``, the damage found...) plus
``damaged`` and ``path``. Exit codes: 0 imported; 1 the source was damaged and was imported as
far as it is good; 2 bad usage, or the file is not a transcript of that format (nothing written).
"""

from __future__ import annotations

import argparse

import msgspec

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``import`` command."""
    from aptmem.importers.converter import FORMATS

    p = commands.add_parser("import", help="import a Claude Code or pi transcript as an aptmem session")
    p.add_argument("src", metavar="SRC", help="the transcript (.jsonl)")
    p.add_argument("dest", metavar="DEST_DIR", help="the folder of sessions to write the new session into")
    p.add_argument("--from", dest="fmt", choices=[*FORMATS, "auto"], required=True,
                   help="the transcript's format (auto: detected from its first line)")
    p.add_argument("--session-id", default=None, metavar="UUID", help="the new session's id (default: a fresh UUID v4)")
    p.add_argument("--title", default=None, help="the new session's title (default: 'imported from <format>: <file>')")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object (the last line)")
    p.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    """Import SRC into DEST_DIR; print the report; return 0, or 1 if the source was damaged."""
    from aptmem.ids import session_path
    from aptmem.importers.scan import import_session

    report = import_session(args.fmt, args.src, args.dest, session_id=args.session_id, title=args.title)
    path = str(session_path(args.dest, report.session_id or "", ".jsonl"))
    if args.json:
        out = msgspec.to_builtins(report)
        out.update(damaged=report.damaged, path=path)
        print(msgspec.json.encode(out).decode())
    else:
        by_type = ", ".join(f"{t} {n}" for t, n in sorted(report.by_type.items()))
        print(f"{report.source}: {report.format} transcript imported as session {report.session_id}")
        print(f"  wrote {report.entries} entries ({by_type}) to {path}")
        if report.skipped:
            print("  skipped: " + ", ".join(f"{reason} {n}" for reason, n in sorted(report.skipped.items())))
        print(f"  replies {report.replies} ({report.merged_lines} lines merged, {report.continued_lines} continued), "
              f"requests with usage {report.requests_with_usage}, compactions {report.compactions}")
        for reason in report.damage_reasons[:20]:
            print(f"  damage: {reason}")
        for note in report.notes[:20]:
            print(f"  note: {note}")
    return 1 if report.damaged else 0
